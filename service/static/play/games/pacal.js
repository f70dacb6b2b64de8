// Pacal: each seat's pyramid of 10 slots (rows of 1, 2, 3, 4), your hand,
// the offer on the table; in solitaire, the drawn card and the pile.
import { h, same } from "../dom.js";
import { added } from "./changes.js";
import { t } from "../i18n.js";

export const title = "Pacal";
let picked = []; // hand cards chosen for an offer
let completed = false; // the second card was just picked with the keyboard: the focus goes to the offer

export function draw(view, { seat, legal, act, name, redraw, before }) {
  const of = (type) => legal.filter((a) => a.type === type);
  const offers = of("offer");
  picked = picked.filter((c) => offers.some((a) => a.cards.includes(c)));
  const offer = offers.find((a) => same([...a.cards].sort((x, y) => x - y), [...picked].sort((x, y) => x - y)));
  const toggle = (card) => (event) => {
    picked = picked.includes(card) ? picked.filter((c) => c !== card) : [...picked, card].slice(-2);
    completed = picked.length === 2 && event.detail === 0; // Enter or Space, not a pointer
    redraw();
  };
  const me = view.players.find((p) => p.seat === seat);
  const wasMe = before?.players.find((p) => p.seat === seat);
  const newInHand = before ? added(me?.hand, wasMe?.hand) : [];
  const focusOffer = completed && Boolean(offer);
  completed = false;
  const solitaire = view.mode === "solitaire";
  return h("div", {},
    h("p", {}, solitaire
      ? `Solitaire: ${view.cards_drawn ?? 0} cards drawn, ${view.pile_size ?? 0} in the pile, ${view.set_aside?.length ?? 0} set aside.`
      : `Manche ${view.manche} (first to ${view.manches_to_win}): ${phaseText(view, name)}`),
    view.offer ? h("div", { class: "area" }, h("h3", {}, `${name(view.offer.seat)} offers`),
      h("div", { class: "row" }, view.offer.cards.map((card) => {
        const choose = of("choose").find((a) => a.card === card);
        return choose
          ? h("button", { class: "card legal", onclick: () => act(choose), "aria-label": `Take the offered ${card}` }, String(card))
          : h("span", { class: `card${view.offer.chosen === card ? " picked" : ""}`, role: "img",
              "aria-label": `Offered ${card}${view.offer.chosen === card ? ", taken" : ""}` }, String(card));
      }))) : null,
    solitaire && view.drawn !== null ? h("div", { class: "area" }, h("h3", {}, "Drawn card"),
      h("span", { class: `card picked${before && before.drawn !== view.drawn ? " fresh" : ""}`, role: "img",
        "aria-label": `Drawn card ${view.drawn}` }, String(view.drawn))) : null,
    h("div", { class: "grids" }, view.players.map((player) => pyramid(player, player.seat === seat, of("place"), act, name, solitaire,
      before?.players.find((p) => p.seat === player.seat)))),
    me?.hand ? h("div", { class: "area" }, h("h3", {}, "Your hand"),
      h("div", { class: "row" }, me.hand.map((card, i) => {
        const fresh = newInHand[i] ? " fresh" : "";
        return offers.some((a) => a.cards.includes(card))
          ? h("button", { class: `card legal${picked.includes(card) ? " picked" : ""}${fresh}`, onclick: toggle(card),
              "aria-pressed": String(picked.includes(card)), "aria-label": `Hand card ${card}: pick it for the offer` }, String(card))
          : h("span", { class: `card${fresh}`, role: "img", "aria-label": `Hand card ${card}` }, String(card));
      }))) : null,
    h("p", { class: "choices" },
      offers.length ? h("button", { disabled: !offer, onclick: () => act(offer), "data-focus": focusOffer },
        offer ? t("Offer the two picked cards: {cards}", { cards: offer.cards.join(" and ") }) : "Pick two cards to offer") : null,
      of("pass").map((a) => h("button", { onclick: () => act(a), "aria-label": "Pass: keep your last card" }, "Pass: keep your last card")),
      of("discard").map((a) => h("button", { onclick: () => act(a), "aria-label": "Set the drawn card aside" }, "Set the drawn card aside"))));
}

function phaseText(view, name) {
  const active = name(view.active);
  return { offer: `${active} offers two cards.`, choose: "The other player takes one of the two.",
    place: "Both place their card.", last_card: "Last card: place it or pass.", over: "Over." }[view.phase] || view.phase;
}

function pyramid(player, mine, places, act, name, solitaire, was) {
  const rows = [[0], [1, 2], [3, 4, 5], [6, 7, 8, 9]];
  return h("div", { class: "area" },
    h("h4", {}, `${name(player.seat)}${mine ? " (you)" : ""}${solitaire ? "" : `: ${player.manches_won} manches won`}`,
      player.foundation_top ? ` · foundation ${player.foundation_top}` : "",
      player.to_place !== null && player.to_place !== undefined ? ` · to place: ${player.to_place}` : ""),
    h("div", { class: "pyramid", role: "group", "aria-label": `${name(player.seat)}'s pyramid` }, rows.map((row) =>
      h("div", { class: "row" }, row.map((slot) => {
        const values = player.pyramid[slot];
        const top = values.at(-1);
        const place = mine && places.find((a) => a.slot === slot);
        const label = `Slot ${slot + 1}: ${top ?? "empty"}${values.length > 1 ? ` on ${values[0]}` : ""}`;
        const body = [top === undefined ? "·" : String(top), values.length > 1 ? h("span", { class: "under" }, `/${values[0]}`) : null];
        const fresh = was && !same(was.pyramid[slot], values) ? " fresh" : ""; // a card placed just now
        return place
          ? h("button", { class: `card slot legal${fresh}`, onclick: () => act(place), "aria-label": `Place on ${label}` }, body)
          : h("span", { class: `card slot${top === undefined ? " hole" : ""}${fresh}`, role: "img", "aria-label": label }, body);
      })))));
}

// ---- A replay: the public events in words, and a seat's hand at the end ----

export function tell(event, name) {
  const who = name(event.seat);
  switch (event.type) {
    case "offered": return `${who} offered ${event.cards.join(" and ")}.`;
    case "chosen": return `${who} took the ${event.card}; the ${event.left} goes to the offerer.`;
    case "placed": return `${who} placed the ${event.card} on slot ${event.slot + 1}${event.covered ? `, covering the ${event.covered}` : ""}.`;
    case "stuck": return `${who}'s ${event.card} fits nowhere.`;
    case "passed": return `${who} passed, keeping the last card.`;
    case "set_aside": return `${who} set the ${event.card} aside.`;
    case "next_offer": return `${who} offers next.`;
    case "last_card": return "Last card: place it or pass.";
    case "drawn": return `Drawn: the ${event.card} (${event.pile_size} left in the pile).`;
    case "manche_dealt": return `Manche ${event.manche} dealt: foundations ${event.foundation_tops.join(" and ")}; ${name(event.starter)} starts.`;
    case "manche_void": return `Manche ${event.manche} is void (${event.reason.replaceAll("_", " ")}).`;
    case "manche_won": return `${who} won manche ${event.manche} (${event.reason.replaceAll("_", " ")}).`;
    case "solitaire_lost": return `Solitaire lost, with ${event.filled} slots filled.`;
    case "solitaire_completed": return `Solitaire completed: ${event.score} points.`;
    default: return null;
  }
}

export function hand(view, seat, name) {
  const player = view.players.find((p) => p.seat === seat);
  if (!player) return null;
  const cards = player.hand || [];
  return h("div", { class: "area", role: "group", "aria-label": `${name(seat)}'s hand` },
    h("h4", {}, `${name(seat)}'s hand`),
    h("div", { class: "row" }, cards.length
      ? cards.map((card) => h("span", { class: "card", role: "img", "aria-label": `Hand card ${card}` }, String(card)))
      : h("span", {}, "no card left")));
}

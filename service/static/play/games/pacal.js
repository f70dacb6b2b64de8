// Pacal: each seat's pyramid of 10 slots (rows of 1, 2, 3, 4), your hand,
// the offer on the table; in solitaire, the drawn card and the pile.
import { h, same } from "../dom.js";
import { and, t, tn } from "../i18n.js";
import { added } from "./changes.js";

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
      ? t("Solitaire: {drawn} cards drawn, {pile} in the pile, {aside} set aside.", { drawn: view.cards_drawn ?? 0, pile: view.pile_size ?? 0, aside: view.set_aside?.length ?? 0 })
      : t("Manche {manche} (first to {wins} manches): {phase}", { manche: view.manche, wins: view.manches_to_win, phase: phaseText(view, name) })),
    view.offer ? h("div", { class: "area" }, h("h3", {}, t("{who} offers", { who: name(view.offer.seat) })),
      h("div", { class: "row" }, view.offer.cards.map((card) => {
        const choose = of("choose").find((a) => a.card === card);
        return choose
          ? h("button", { class: "card legal", onclick: () => act(choose), "aria-label": t("Take the offered {card}", { card }) }, String(card))
          : h("span", { class: `card${view.offer.chosen === card ? " picked" : ""}`, role: "img",
              "aria-label": t(view.offer.chosen === card ? "Offered {card}, taken" : "Offered {card}", { card }) }, String(card));
      }))) : null,
    solitaire && view.drawn !== null ? h("div", { class: "area" }, h("h3", {}, t("Drawn card")),
      h("span", { class: `card picked${before && before.drawn !== view.drawn ? " fresh" : ""}`, role: "img",
        "aria-label": t("Drawn card {card}", { card: view.drawn }) }, String(view.drawn))) : null,
    h("div", { class: "grids" }, view.players.map((player) => pyramid(player, player.seat === seat, of("place"), act, name, solitaire,
      before?.players.find((p) => p.seat === player.seat)))),
    me?.hand ? h("div", { class: "area" }, h("h3", {}, t("Your hand")),
      h("div", { class: "row" }, me.hand.map((card, i) => {
        const fresh = newInHand[i] ? " fresh" : "";
        return offers.some((a) => a.cards.includes(card))
          ? h("button", { class: `card legal${picked.includes(card) ? " picked" : ""}${fresh}`, onclick: toggle(card),
              "aria-pressed": String(picked.includes(card)), "aria-label": t("Hand card {card}: pick it for the offer", { card }) }, String(card))
          : h("span", { class: `card${fresh}`, role: "img", "aria-label": t("Hand card {card}", { card }) }, String(card));
      }))) : null,
    h("p", { class: "choices" },
      offers.length ? h("button", { disabled: !offer, onclick: () => act(offer), "data-focus": focusOffer },
        offer ? t("Offer the two picked cards: {cards}", { cards: and(offer.cards.map(String)) }) : t("Pick two cards to offer")) : null,
      // the label says what the text says: selectors and speech find the same words
      of("pass").map((a) => h("button", { onclick: () => act(a), "aria-label": t("Pass: keep your last card") }, t("Pass: keep your last card"))),
      of("discard").map((a) => h("button", { onclick: () => act(a), "aria-label": t("Set the drawn card aside") }, t("Set the drawn card aside")))));
}

function phaseText(view, name) {
  const active = name(view.active);
  const said = { offer: "{who} offers two cards.", choose: "The other player takes one of the two.",
    place: "Both place their card.", last_card: "Last card: place it or pass.", over: "Over." }[view.phase];
  return said ? t(said, { who: active }) : "";
}

function pyramid(player, mine, places, act, name, solitaire, was) {
  const rows = [[0], [1, 2], [3, 4, 5], [6, 7, 8, 9]];
  return h("div", { class: "area" },
    h("h4", {}, mine ? t("{who} (you)", { who: name(player.seat) }) : name(player.seat),
      solitaire ? "" : `: ${tn(player.manches_won, "{n} manche won", "{n} manches won")}`,
      player.foundation_top ? ` · ${t("foundation {card}", { card: player.foundation_top })}` : "",
      player.to_place !== null && player.to_place !== undefined ? ` · ${t("to place: {card}", { card: player.to_place })}` : ""),
    h("div", { class: "pyramid", role: "group", "aria-label": t("{who}'s pyramid", { who: name(player.seat) }) }, rows.map((row) =>
      h("div", { class: "row" }, row.map((slot) => {
        const values = player.pyramid[slot];
        const top = values.at(-1);
        const place = mine && places.find((a) => a.slot === slot);
        const label = top === undefined ? t("Slot {slot}: empty", { slot: slot + 1 })
          : t(values.length > 1 ? "Slot {slot}: {card} on {under}" : "Slot {slot}: {card}", { slot: slot + 1, card: top, under: values[0] });
        const body = [top === undefined ? "·" : String(top), values.length > 1 ? h("span", { class: "under" }, `/${values[0]}`) : null];
        const fresh = was && !same(was.pyramid[slot], values) ? " fresh" : ""; // a card placed just now
        return place
          ? h("button", { class: `card slot legal${fresh}`, onclick: () => act(place), "aria-label": t("Place on {slot}", { slot: label }) }, body)
          : h("span", { class: `card slot${top === undefined ? " hole" : ""}${fresh}`, role: "img", "aria-label": label }, body);
      })))));
}

// ---- The events in words (the live log and the replay), and a seat's hand at the end ----

const WON = {
  stuck: "the other player is stuck",
  completed: "a complete pyramid",
  spread: "both pyramids are complete, and this one has the larger spread",
  exhausted: "the cards ran out, and this pyramid has more slots filled",
  exhausted_spread: "the cards ran out, and this pyramid has the larger spread",
};
const VOID = {
  both_stuck: "both players are stuck",
  equal_spread: "both pyramids are complete with the same spread",
  exhausted_tie: "the cards ran out with the pyramids level",
};

export function tell(event, name) {
  const who = name(event.seat);
  switch (event.type) {
    case "offered": return t("{who} offers the {a} and the {b}.", { who, a: event.cards[0], b: event.cards[1] });
    case "chosen": return t("{who} takes the {card}; the {left} goes to {other}.", { who, card: event.card, left: event.left, other: name(1 - event.seat) });
    case "placed": return t(event.covered ? "{who} places the {card} on slot {slot} of the pyramid, covering the {covered}."
      : "{who} places the {card} on slot {slot} of the pyramid.", { who, card: event.card, slot: event.slot + 1, covered: event.covered });
    case "stuck": return t("{who} cannot place the {card} anywhere in the pyramid.", { who, card: event.card });
    case "passed": return t("{who} keeps the last card.", { who });
    case "set_aside": return t("{who} sets the {card} aside: it fits on no empty slot.", { who, card: event.card });
    case "next_offer": return t("{who} now offers two cards.", { who });
    case "last_card": return t("Every offer is made: each player may place the last card of the hand, or keep it.");
    case "hand_dealt": return t("{who} gets a hand of {cards}.", { who, cards: and([...event.hand].sort((a, b) => a - b)) });
    case "drawn": return t("{who} draws the {card} ({left}).", { who: name(0), card: event.card, left: tn(event.pile_size, "{n} card left in the pile", "{n} cards left in the pile") });
    case "manche_dealt": return t("Manche {manche} is dealt: the tops of the foundations show {tops}; {who} starts.", {
      manche: event.manche, who: name(event.starter),
      tops: and(event.foundation_tops.map((value, s) => t("{value} ({who})", { value, who: name(s) }))) });
    case "manche_void": return t("Manche {manche} is void and dealt again: {why}.", { manche: event.manche, why: t(VOID[event.reason] ?? "a draw") });
    case "manche_won": return t("{who} wins manche {manche}: {why}. Manches won: {won}.", { who, manche: event.manche,
      why: t(WON[event.reason] ?? "a complete pyramid"),
      won: and(event.manches_won.map((n, s) => t("{who} {n}", { who: name(s), n }))) });
    case "solitaire_won": return t("A perfect pyramid in {n} cards: {who} is King Pacal and wins the solitaire!", { n: event.score, who: name(0) });
    case "solitaire_completed": return t("The pyramid is complete after {n} cards: completed, but only 10 cards win.", { n: event.score });
    case "solitaire_lost": return t("The pile is empty with {filled} of 10 slots filled: the solitaire is lost.", { filled: event.filled });
    default: return null;
  }
}

export function hand(view, seat, name) {
  const player = view.players.find((p) => p.seat === seat);
  if (!player) return null;
  const cards = player.hand || [];
  return h("div", { class: "area", role: "group", "aria-label": t("{who}'s hand", { who: name(seat) }) },
    h("h4", {}, t("{who}'s hand", { who: name(seat) })),
    h("div", { class: "row" }, cards.length
      ? cards.map((card) => h("span", { class: "card", role: "img", "aria-label": t("Hand card {card}", { card }) }, String(card)))
      : h("span", {}, t("no card left"))));
}

// Ducale rummy: your hand (sortable), the melds on the table, the stock and the discard.
// Pick cards of your hand: the page lists the legal actions that use exactly those cards
// (melds, lay-offs, jokers and their meaning, taking the discard, discarding).
import { h, same } from "../dom.js";
import { added } from "./changes.js";

export const title = "Ducale";
const SUITS = { S: ["♠", "spades"], H: ["♥", "hearts"], D: ["♦", "diamonds"], C: ["♣", "clubs"] };
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const RANK_NAMES = { A: "ace", J: "jack", Q: "queen", K: "king" };
let picked = []; // indexes into the hand as shown
let byRank = false;
let handKey = "";

const split = (card) => [card.slice(0, -1), card.slice(-1)];
const short = (card) => card === "JOKER" ? "★" : `${split(card)[0]}${SUITS[split(card)[1]][0]}`;
export const spoken = (card) => card === "JOKER" ? "joker"
  : `${RANK_NAMES[split(card)[0]] || split(card)[0]} of ${SUITS[split(card)[1]][1]}`;

// A card's face shows its rank and suit's symbol (a picture: its name is the card in words).
function face(card, attrs = {}, as = null) {
  const red = card !== "JOKER" && "HD".includes(split(card)[1]);
  const label = as ? `joker as ${spoken(as)}` : spoken(card);
  const body = h("span", { "aria-hidden": "true" }, as ? [h("span", { class: "joker" }, "★"), short(as)] : short(card));
  const { class: extra = "", label: said = label, ...rest } = attrs;
  return attrs.onclick
    ? h("button", { ...rest, class: `card${red ? " red" : ""} ${extra}`, "aria-label": said }, body)
    : h("span", { class: `card${red ? " red" : ""} ${extra}`, role: "img", "aria-label": label }, body);
}

// The hand cards an action uses, whatever its kind.
function usesCards(action, top) {
  const without = (cards, card) => { const i = cards.indexOf(card); return i < 0 ? cards : cards.toSpliced(i, 1); };
  const placed = action.melds ? action.melds.flatMap((m) => m.cards) : action.lay_off?.cards || action.cards || [];
  // into a joker's place (swap_joker): the freed joker is placed, not a hand card
  if (action.type === "take_discard") return without(placed, action.swap_joker != null ? "JOKER" : top);
  if (action.type === "swap_joker") return [action.card, ...without(placed, "JOKER")];
  if (action.type === "discard") return [action.card];
  return placed;
}

function say(action, top) {
  const meld = (m) => `${m.cards.map(short).join(" ")}${m.joker_as ? ` (joker as ${short(m.joker_as)})` : ""}`;
  const layoff = (l) => `lay off ${l.cards.map(short).join(" ")}${l.joker_as ? ` (joker as ${short(l.joker_as)})` : ""} on meld ${l.meld + 1}`;
  const placing = (a) => a.melds ? `meld ${a.melds.map(meld).join(" + ")}` : layoff(a.lay_off);
  return {
    draw: () => "Draw from the stock",
    discard: () => `Discard ${short(action.card)}`,
    meld: () => `Meld ${action.melds.map(meld).join(" + ")}`,
    lay_off: () => `L${layoff(action).slice(1)}`,
    take_discard: () => action.swap_joker != null
      ? `Take the discard ${short(top)} into the joker's place in meld ${action.swap_joker + 1}, then ${placing(action)}`
      : `Take the discard ${short(top)} and ${placing(action)}`,
    swap_joker: () => `Swap ${short(action.card)} for the joker of meld ${action.meld + 1}, then ${placing(action)}`,
  }[action.type]();
}

const order = (card) => card === "JOKER" ? 99 : RANKS.indexOf(split(card)[0]);

export function draw(view, { legal, act, name, redraw, before }) {
  const top = view.discard.at(-1);
  const hand = (view.hand || []).slice();
  if (byRank) hand.sort((a, b) => order(a) - order(b) || a.localeCompare(b));
  const key = `${hand.join()}`;
  if (key !== handKey) [picked, handKey] = [[], key];
  const chosen = picked.map((i) => hand[i]).sort();
  // with nothing picked: the actions that use no hand card (a discard taken
  // into a joker's place, the joker laid off alone)
  const matching = legal.filter((a) => a.type !== "draw" && String(usesCards(a, top).slice().sort()) === String(chosen));
  const toggle = (i) => () => { picked = picked.includes(i) ? picked.filter((j) => j !== i) : [...picked, i]; redraw(); };
  const drawAction = legal.find((a) => a.type === "draw");
  // what just changed: a card drawn or taken into the hand, a new or longer meld, a discard
  const newInHand = before ? added(hand, before.hand || []) : [];
  const wasMeld = (meld) => before?.table.find((m) => m.id === meld.id);
  const freshMeld = (meld) => before && !same(wasMeld(meld)?.cards, meld.cards);
  const freshTop = before && before.discard.length !== view.discard.length && top;
  return h("div", {},
    h("p", {}, view.phase === "over" ? "Over." : `Round ${view.round}: ${name(view.turn)} ${view.phase === "draw" ? "draws" : "plays"}.`,
      legal.length ? " Pick cards of your hand to see what you can do with them." : ""),
    h("div", { class: "row area" },
      drawAction ? h("button", { class: "card down legal", onclick: () => act(drawAction), "aria-label": `Draw from the stock (${view.stock_size} cards)` }, String(view.stock_size))
        : h("span", { class: "card down", role: "img", "aria-label": `Stock: ${view.stock_size} cards` }, String(view.stock_size)),
      top ? face(top, { class: freshTop ? "fresh" : "" }) : h("span", { class: "card hole", role: "img", "aria-label": "Empty discard pile" }),
      h("span", {}, `Discard pile: ${view.discard.length} card${view.discard.length === 1 ? "" : "s"}`)),
    h("div", { class: "area" }, h("h3", {}, "Table"), view.table.length ? h("div", { class: "row" }, view.table.map((meld) =>
      h("div", { class: `meld${freshMeld(meld) ? " fresh" : ""}`, role: "group", "aria-label": `Meld ${meld.id + 1}, a ${meld.kind} of ${name(meld.owner)}` },
        h("small", {}, `${meld.id + 1} `), meld.cards.map((c) => face(c.card, {}, c.as || null))))) : h("p", {}, "No meld yet.")),
    view.hand ? h("div", { class: "area" }, h("h3", {}, "Your hand ",
      h("button", { onclick: () => { byRank = !byRank; picked = []; redraw(); }, "aria-label": `Sort by ${byRank ? "suit" : "rank"}` },
        `Sort by ${byRank ? "suit" : "rank"}`)),
      h("div", { class: "row" }, hand.map((card, i) => face(card, { onclick: toggle(i),
        class: `${picked.includes(i) ? "picked" : ""}${newInHand[i] ? " fresh" : ""}`, "aria-pressed": String(picked.includes(i)),
        label: `${spoken(card)}, card ${i + 1} of your hand: ${short(card)}` })))) : null,
    h("div", { class: "choices", role: "group", "aria-label": "What you can do with the picked cards" },
      chosen.length && !matching.length ? h("p", {}, "No legal move uses exactly these cards.") : null,
      matching.map((a) => h("button", { onclick: () => act(a) }, say(a, top)))),
    h("ul", { "aria-label": "Players" }, view.players.map((p) =>
      h("li", {}, `${name(p.seat)}: ${p.hand_size} cards, total ${p.total}${p.laid_down ? ", laid down" : ""}`))));
}

// ---- A replay: the public events in words, and a seat's hand at the end ----

const cards = (list) => list.map((c) => c.as ? `joker as ${spoken(c.as)}` : spoken(c.card)).join(", ");

export function tell(event, name) {
  const who = name(event.seat);
  switch (event.type) {
    case "drew": return `${who} drew from the stock (${event.stock_size} left).`;
    case "took_discard": return `${who} took the ${spoken(event.card)} from the discard pile.`;
    case "discarded": return `${who} discarded the ${spoken(event.card)}.`;
    case "melded": return `${who} melded ${event.melds.map((m) => `a ${m.kind} (${cards(m.cards)})`).join(" and ")}.`;
    case "laid_off": return `${who} laid off ${cards(event.cards)} on meld ${event.meld + 1}.`;
    case "joker_swapped": return `${who} put the ${spoken(event.card)} in the joker's place in meld ${event.meld + 1}.`;
    case "went_out": return `${who} went out.`;
    case "turn": return `${who}'s turn.`;
    case "stock_rebuilt": return `The discard pile became the stock (${event.stock_size} cards).`;
    case "stock_exhausted": return "The stock ran out: the round ends with nobody out.";
    case "round_scored": return `Round ${event.round} scored: ${event.totals.map((t, i) => `${name(i)} ${t}`).join(", ")} in all.`;
    case "round_started": return `Round ${event.round} begins; ${name(event.first_player)} plays first.`;
    default: return null;
  }
}

export function hand(view, seat, name) {
  const held = view.hand || [];
  return h("div", { class: "area", role: "group", "aria-label": `${name(seat)}'s hand` },
    h("h4", {}, `${name(seat)}'s hand`),
    h("div", { class: "row" }, held.length ? held.map((card) => face(card)) : h("span", {}, "no card left")));
}

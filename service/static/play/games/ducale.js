// Ducale rummy: your hand (sortable), the melds on the table, the stock and the discard.
// Pick cards of your hand: the page lists the legal actions that use exactly those cards
// (melds, lay-offs, jokers and their meaning, taking the discard, discarding).
import { h, same } from "../dom.js";
import { and, t, tn } from "../i18n.js";
import { added } from "./changes.js";

export const title = "Ducale";
const SUITS = { S: ["♠", "spades"], H: ["♥", "hearts"], D: ["♦", "diamonds"], C: ["♣", "clubs"] };
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const RANK_NAMES = { A: "ace", J: "jack", Q: "queen", K: "king" };
let picked = []; // indexes into the hand as shown
let byRank = false;
let handKey = "";

const split = (card) => [card.slice(0, -1), card.slice(-1)];
// J Q K in French are V D R (valet, dame, roi).
const letter = (rank) => ("JQK".includes(rank) ? t(`${rank} (card letter)`) : rank);
const short = (card) => card === "JOKER" ? "★" : `${letter(split(card)[0])}${SUITS[split(card)[1]][0]}`;
// A card without article, for labels: "7 of hearts", "dame de pique", "joker".
export const spoken = (card) => card === "JOKER" ? t("joker")
  : RANK_NAMES[split(card)[0]] ? t(`${RANK_NAMES[split(card)[0]]} of {suit}`, { suit: t(SUITS[split(card)[1]][1]) })
    : t("{rank} of {suit}", { rank: split(card)[0], suit: t(SUITS[split(card)[1]][1]) });

// A card's face shows its rank and suit's symbol (a picture: its name is the card in words).
function face(card, attrs = {}, as = null) {
  const red = card !== "JOKER" && "HD".includes(split(card)[1]);
  const label = as ? t("joker as {card}", { card: spoken(as) }) : spoken(card);
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
  const joker = (as) => (as ? ` ${t("(joker as {card})", { card: short(as) })}` : "");
  const meld = (m) => `${m.cards.map(short).join(" ")}${joker(m.joker_as)}`;
  const layoff = (l) => t("lay off {cards} on meld {n}", { cards: `${l.cards.map(short).join(" ")}${joker(l.joker_as)}`, n: l.meld + 1 });
  const melds = (a) => a.melds.map(meld).join(" + ");
  const placing = (a) => a.melds ? t("meld {melds}", { melds: melds(a) }) : layoff(a.lay_off);
  return {
    draw: () => t("Draw from the stock"),
    discard: () => t("Discard {card}", { card: short(action.card) }),
    meld: () => t("Meld {melds}", { melds: melds(action) }),
    lay_off: () => t("Lay off {cards} on meld {n}", { cards: `${action.cards.map(short).join(" ")}${joker(action.joker_as)}`, n: action.meld + 1 }),
    take_discard: () => action.swap_joker != null
      ? t("Take the discard {card} into the joker's place in meld {n}, then {then}", { card: short(top), n: action.swap_joker + 1, then: placing(action) })
      : t("Take the discard {card} and {then}", { card: short(top), then: placing(action) }),
    swap_joker: () => t("Swap {card} for the joker of meld {n}, then {then}", { card: short(action.card), n: action.meld + 1, then: placing(action) }),
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
    h("p", {}, view.phase === "over" ? t("Over.")
      : t(view.phase === "draw" ? "Round {round}: {who} draws." : "Round {round}: {who} plays.", { round: view.round, who: name(view.turn) }),
      legal.length ? ` ${t("Pick cards of your hand to see what you can do with them.")}` : ""),
    h("div", { class: "row area" },
      drawAction ? h("button", { class: "card down legal", onclick: () => act(drawAction), "aria-label": t("Draw from the stock ({n} cards)", { n: view.stock_size }) }, String(view.stock_size))
        : h("span", { class: "card down", role: "img", "aria-label": t("Stock: {n} cards", { n: view.stock_size }) }, String(view.stock_size)),
      top ? face(top, { class: freshTop ? "fresh" : "" }) : h("span", { class: "card hole", role: "img", "aria-label": t("Empty discard pile") }),
      h("span", {}, tn(view.discard.length, "Discard pile: {n} card", "Discard pile: {n} cards"))),
    h("div", { class: "area" }, h("h3", {}, t("Table")), view.table.length ? h("div", { class: "row" }, view.table.map((meld) =>
      h("div", { class: `meld${freshMeld(meld) ? " fresh" : ""}`, role: "group", "aria-label": t(meld.kind === "set" ? "Meld {n}, a set of {who}" : "Meld {n}, a run of {who}", { n: meld.id + 1, who: name(meld.owner) }),
        title: meldWords(meld) },
        h("small", {}, `${meld.id + 1} `), meld.cards.map((c) => face(c.card, {}, c.as || null))))) : h("p", {}, t("No meld yet."))),
    view.hand ? h("div", { class: "area" }, h("h3", {}, t("Your hand"), " ",
      h("button", { onclick: () => { byRank = !byRank; picked = []; redraw(); }, "aria-label": t(byRank ? "Sort by suit" : "Sort by rank") },
        t(byRank ? "Sort by suit" : "Sort by rank"))),
      h("div", { class: "row" }, hand.map((card, i) => face(card, { onclick: toggle(i),
        class: `${picked.includes(i) ? "picked" : ""}${newInHand[i] ? " fresh" : ""}`, "aria-pressed": String(picked.includes(i)),
        label: t("{card}, card {n} of your hand: {face}", { card: spoken(card), n: i + 1, face: short(card) }) })))) : null,
    h("div", { class: "choices", role: "group", "aria-label": t("What you can do with the picked cards") },
      chosen.length && !matching.length ? h("p", {}, t("No legal move uses exactly these cards.")) : null,
      matching.map((a) => h("button", { onclick: () => act(a) }, say(a, top)))),
    h("ul", { "aria-label": t("Players") }, view.players.map((p) =>
      h("li", {}, t(p.laid_down ? "{who}: {n} cards, total {total}, laid down" : "{who}: {n} cards, total {total}", { who: name(p.seat), n: p.hand_size, total: p.total })))));
}

// ---- The events in words (the live log and the replay), and a seat's hand at the end ----

const FACES = { A: "ace", J: "jack", Q: "queen", K: "king" };
// A card with its article, "the 7 of hearts" / "la dame de pique"; a face card has its own
// texts, for French articles ("le valet", "la dame", "l'as").
export function theCard(card) {
  if (card === "JOKER") return t("the joker");
  const [rank, suit] = split(card);
  const face = FACES[rank];
  return face ? t(`the ${face} of {suit}`, { suit: t(SUITS[suit][1]) }) : t("the {rank} of {suit}", { rank, suit: t(SUITS[suit][1]) });
}
const rankFrom = (rank) => (FACES[rank] ? t(`from the ${FACES[rank]}`) : t("from the {rank}", { rank }));
const rankTo = (rank) => (FACES[rank] ? t(`to the ${FACES[rank]}`) : t("to the {rank}", { rank }));
const rankMany = (rank) => (FACES[rank] ? t(`${FACES[rank]}s`) : t("{rank}s", { rank }));
const real = (c) => c.as || c.card; // a joker's card is the one it stands for
const jokers = (cards) => cards.filter((c) => c.as).map((c) => t(" with the joker as {card}", { card: theCard(c.as) })).join("");

// A meld in words: "a set of three 7s with the joker as the 7 of diamonds", "une tierce à cœur du 5 au 7".
export function meldWords(meld) {
  const cards = meld.cards;
  const known = cards.map(real).filter((card) => card !== "JOKER"); // a joker says what it stands for
  if (meld.kind === "set") {
    const rank = split(known[0])[0];
    const kind = cards.length === 3 ? "a set of three {ranks}" : cards.length === 4 ? "a set of four {ranks}" : "a set of {n} {ranks}";
    return t(kind, { n: cards.length, ranks: rankMany(rank) }) + jokers(cards);
  }
  const suit = t(SUITS[split(known[0])[1]][1]);
  const [low, high] = [split(known[0])[0], split(known.at(-1))[0]];
  return t(cards.length === 3 ? "a run of three {suit} {from} {to}" : "a run of {n} {suit} {from} {to}",
    { n: cards.length, suit, from: rankFrom(low), to: rankTo(high) }) + jokers(cards);
}

const placed = (list) => and(list.map((c) => (c.as ? t("the joker as {card}", { card: theCard(c.as) }) : theCard(c.card))));
const scores = (event, name) => and(event.scores.map((score, s) => t("{who} {points} (total {total})", {
  who: name(s), points: tn(score, "{n} point", "{n} points"), total: event.totals[s] })));

export function tell(event, name) {
  const who = name(event.seat);
  switch (event.type) {
    case "drew": return tn(event.stock_size, "{who} draws from the stock ({n} card left).", "{who} draws from the stock ({n} cards left).", { who });
    case "card_drawn": return t("{who} draws {card}.", { who, card: theCard(event.card) });
    case "took_discard": return t("{who} takes {card} from the discard pile.", { who, card: theCard(event.card) });
    case "discarded": return t("{who} discards {card}.", { who, card: theCard(event.card) });
    case "melded": return t("{who} lays down {melds}.", { who, melds: and(event.melds.map(meldWords)) });
    case "laid_off": return t("{who} adds {cards} to meld {n}: now {meld}.", { who, cards: placed(event.cards), n: event.meld + 1, meld: meldWords(event.result) });
    case "joker_swapped": return t("{who} puts {card} in place of the joker of meld {n}.", { who, card: theCard(event.card), n: event.meld + 1 });
    case "went_out": return t("{who} goes out: no card left in hand.", { who });
    case "turn": return t("{who} to play.", { who });
    case "stock_rebuilt": return tn(event.stock_size, "The discard pile is shuffled into a new stock ({n} card).", "The discard pile is shuffled into a new stock ({n} cards).");
    case "stock_exhausted": return t("The stock is used up: the round ends with nobody out.");
    case "round_scored": return [
      t("Round {round} is over: {scores}.", { round: event.round, scores: scores(event, name) }),
      event.rami_sec ? t("Rami sec: {who} went out before anyone else laid down.", { who: name(event.went_out) }) : "",
    ].filter(Boolean).join(" ");
    case "round_started": return t("Round {round} is dealt: {who} plays first, and {card} starts the discard pile.", {
      round: event.round, who: name(event.first_player), card: theCard(event.discard) });
    case "dealt": return t("{who} gets {cards}.", { who, cards: and([...event.cards].sort((a, b) => order(a) - order(b)).map(theCard)) });
    default: return null;
  }
}

export function hand(view, seat, name) {
  const held = view.hand || [];
  return h("div", { class: "area", role: "group", "aria-label": t("{who}'s hand", { who: name(seat) }) },
    h("h4", {}, t("{who}'s hand", { who: name(seat) })),
    h("div", { class: "row" }, held.length ? held.map((card) => face(card)) : h("span", {}, t("no card left"))));
}

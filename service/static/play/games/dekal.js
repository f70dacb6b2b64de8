// Dékal: each seat's 4x4 grid (face-down cards hidden from everyone), the centre,
// and arrows around your hole where the picked centre card can be pushed in.
import { h, same } from "../dom.js";
import { and, t, tn } from "../i18n.js";

export const title = "Dékal";
const ARROW = { left: "→", right: "←", top: "↓", bottom: "↑" };
let picked = null; // the centre value chosen for the next take
let aim = false; // a centre card was just picked with the keyboard: the focus goes to its first arrow

export function draw(view, { seat, legal, act, name, redraw, earlier = [] }) {
  const takes = legal.filter((a) => a.type === "take");
  const values = [...new Set(takes.map((a) => a.value))];
  if (!values.includes(picked)) picked = values.length === 1 ? values[0] : null;
  const pick = (value) => (event) => { picked = value; aim = event.detail === 0; redraw(); };
  const grids = view.players.map((player) => grid(player, player.seat === seat, legal, takes, act, name, view.my_choice,
    earlier.map((seen) => seen.players.find((p) => p.seat === player.seat))));
  aim = false;
  const phase = { reveal: t("Everyone picks a face-down card to reveal."), draft: t("{who} takes a card.", { who: name(view.current) }), over: t("Over.") };
  return h("div", {},
    h("p", {}, t("Manche {manche}, turn {turn} of 16:", { manche: view.manche, turn: view.turn }), " ", phase[view.phase],
      legal.some((a) => a.type === "reveal") ? ` ${t("Pick one of your face-down cards.")}` : "",
      takes.length ? ` ${t("Pick a centre card, then an arrow.")}` : ""),
    h("div", { class: "area" }, h("h3", {}, t("Centre")), h("div", { class: "row" },
      view.centre.length ? view.centre.map((value) => values.includes(value)
        ? h("button", { class: `card legal${value === picked ? " picked" : ""}`, onclick: pick(value),
            "aria-pressed": String(value === picked), "aria-label": t("Centre card {value}: pick it", { value }) }, String(value))
        : h("span", { class: "card", role: "img", "aria-label": t("Centre card {value}", { value }) }, String(value)))
        : h("span", {}, t("empty")))),
    h("div", { class: "grids" }, grids));
}

function grid(player, mine, legal, takes, act, name, choice, lately = []) {
  const at = (r, c) => player.grid[r][c];
  const moved = pushed(player, lately);
  const cells = [];
  for (let r = -1; r <= 4; r++) {
    for (let c = -1; c <= 4; c++) {
      const inside = r >= 0 && r < 4 && c >= 0 && c < 4;
      const slid = moved?.cells.findIndex(([mr, mc]) => mr === r && mc === c) ?? -1;
      const mark = slid < 0 ? "" : ` slid from-${moved.side}${slid === 0 ? " fresh" : ""}`;
      cells.push(inside ? cell(at(r, c), r, c, mine, legal, act, choice, mark) : arrow(player.hole, r, c, mine, takes, act));
    }
  }
  return h("div", { class: "area" },
    h("h4", {}, t(mine ? "{who} (you): total {total}" : "{who}: total {total}", { who: name(player.seat), total: player.total }),
      player.chosen ? ` · ${t("has chosen")}` : ""),
    h("div", { class: "grid", role: "group", "aria-label": t("{who}'s grid", { who: name(player.seat) }) }, cells));
}

function cell(card, row, col, mine, legal, act, choice, mark) {
  const where = t("row {row}, column {col}", { row: row + 1, col: col + 1 });
  if (card === null) return h("span", { class: "card hole", role: "img", "aria-label": t("Hole at {where}", { where }) });
  if (card.face_up) return h("span", { class: `card${mark}`, role: "img", "aria-label": t("{value} at {where}", { value: card.value, where }) }, String(card.value));
  const reveal = mine && legal.find((a) => a.type === "reveal" && a.row === row && a.col === col);
  const chosen = mine && choice && choice.row === row && choice.col === col;
  if (reveal) return h("button", { class: "card down legal", onclick: () => act(reveal), "aria-label": t("Reveal the face-down card at {where}", { where }) }, "?");
  return h("span", { class: `card down${chosen ? " picked" : ""}${mark}`, role: "img", "aria-label": t(chosen ? "Face-down card at {where}, chosen" : "Face-down card at {where}", { where }) });
}

// The ring around a grid with a hole: where a card may come in along the hole's row or
// column (RULES.md: from either end, never from the edge the hole is on). A button for
// the picked centre card on your turn; otherwise a mark, so the ways in show before a pick.
const SIDES = ["left", "right", "top", "bottom"];
const ways = (hole) => SIDES.filter((side) =>
  ({ left: hole.col !== 0, right: hole.col !== 3, top: hole.row !== 0, bottom: hole.row !== 3 })[side]);
const WAY_IN = {
  left: (n) => t("A card may come in here, from the left of row {n}", { n }),
  right: (n) => t("A card may come in here, from the right of row {n}", { n }),
  top: (n) => t("A card may come in here, from the top of column {n}", { n }),
  bottom: (n) => t("A card may come in here, from the bottom of column {n}", { n }),
};

function arrow(hole, r, c, mine, takes, act) {
  const side = !hole ? null : c === -1 && r === hole.row ? "left" : c === 4 && r === hole.row ? "right"
    : r === -1 && c === hole.col ? "top" : r === 4 && c === hole.col ? "bottom" : null;
  if (!side || !ways(hole).includes(side)) return h("span", {});
  const across = side === "left" || side === "right";
  const take = mine && picked !== null && takes.find((a) => a.value === picked && a.from === side);
  if (!take) {
    return h("span", { class: "insert", role: "img", "aria-label": WAY_IN[side](across ? hole.row + 1 : hole.col + 1) },
      h("span", { "aria-hidden": "true" }, ARROW[side]));
  }
  const line = across ? t("into row {n}", { n: hole.row + 1 }) : t("into column {n}", { n: hole.col + 1 });
  const first = aim && side === ways(hole).find((s) => takes.some((a) => a.value === picked && a.from === s));
  return h("button", { class: "arrow legal", onclick: () => act(take),
    "aria-label": t("Push the {value} in {from} {line}", { value: picked, from: t(FROM[side]), line }), "data-focus": first }, ARROW[side]);
}

// The line the last push moved, from the seat's grid as lately seen (oldest first): a
// grid with a hole became this one, whose hole is filled and each cell from the edge to
// the hole holds what the cell before it held. {side, cells: [edge, ..., hole]}.
function pushed(player, lately) {
  const was = lately.findLast((seen) => seen && !same(seen.grid, player.grid));
  const hole = was?.hole;
  if (!hole || player.grid[hole.row][hole.col] === null) return null;
  for (const side of ways(hole)) {
    const steps = { left: [0, -1], right: [0, 1], top: [-1, 0], bottom: [1, 0] }[side];
    const cells = [];
    for (let [r, c] = [hole.row, hole.col]; r >= 0 && r < 4 && c >= 0 && c < 4; r += steps[0], c += steps[1]) {
      cells.unshift([r, c]);
    }
    const moved = cells.slice(1).every(([r, c], i) => same(player.grid[r][c], was.grid[cells[i][0]][cells[i][1]]));
    if (moved) return { side, cells };
  }
  return null;
}

// ---- The events in words (the live log and the replay), and a seat's grid at the end ----

const FROM = { left: "from the left", right: "from the right", top: "from the top", bottom: "from the bottom" };
const BY = { lowest_card: "lowest card revealed", reserve: "drawn from the reserve", random: "drawn at random" };
const valueOf = (list, name) => and(list.map((c) => t("{value} ({who})", { value: c.value, who: name(c.seat) })));

export function tell(event, name) {
  const who = name(event.seat);
  switch (event.type) {
    case "chosen": return t("{who} chooses a face-down card to reveal.", { who });
    case "revealed": return t("Turn {turn}: the cards revealed are {cards}.", { turn: event.turn, cards: valueOf(event.cards, name) });
    case "reserve_drawn": return t("A tie for the first player: drawn from the reserve, {cards}.", { cards: valueOf(event.draws, name) });
    case "first_player": return t("{who} is the first player ({how}).", { who, how: t(BY[event.by] ?? "drawn at random") });
    case "taken": {
      const line = ["left", "right"].includes(event.from)
        ? t("into row {n}", { n: event.hole.row + 1 }) : t("into column {n}", { n: event.hole.col + 1 });
      return t("{who} takes the {value} and pushes it in {from} {line}.", { who, value: event.value, from: t(FROM[event.from]), line });
    }
    case "turn_started": return t("Turn {turn} of manche {manche} begins: {who} plays first.", { manche: event.manche, turn: event.turn, who: name(event.first_player) });
    case "manche_started": return t("Manche {manche} begins: {who} is the first player.", { manche: event.manche, who: name(event.first_player) });
    case "manche_scored": return t("End of manche {manche}: {scores}.", { manche: event.manche, scores: and(event.scores.map((score, s) =>
      t("{who} {points} ({cards}, total {total})", { who: name(s), points: tn(score, "{n} point", "{n} points"),
        cards: tn(event.cards_left[s], "{n} card left", "{n} cards left"), total: event.totals[s] }))) });
    default: return null;
  }
}

export function hand(view, seat, name) {
  const player = view.players.find((p) => p.seat === seat);
  return player ? h("div", { role: "group", "aria-label": t("{who}'s hand", { who: name(seat) }) },
    grid(player, false, [], [], () => {}, name, null)) : null;
}

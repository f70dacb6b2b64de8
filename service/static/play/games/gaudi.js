// Gaudí: the board of hexagonal tiles (pointy-top, axial q, r), each tile's three
// animal thirds in their colours, your hand, and the hexes where a tile may go.
import { h, same } from "../dom.js";
import { t } from "../i18n.js";

export const title = "Gaudí";
const ANIMALS = ["starfish", "snail", "jellyfish"];
const SYMBOL = { starfish: "★", snail: "@", jellyfish: "~" };
const COLOUR = { O: "orange", G: "green", B: "blue" };
const R = 20; // hex radius in SVG units
const W = R * Math.sqrt(3) / 2;
// The corners of a hex around its centre; thirds hold the top, lower-right and lower-left corners.
const C = { top: [0, -R], ur: [W, -R / 2], lr: [W, R / 2], bottom: [0, R], ll: [-W, R / 2], ul: [-W, -R / 2] };
const THIRDS = [["top", ["ul", "top", "ur"], 0, -1], ["lr", ["ur", "lr", "bottom"], 0, 0], ["ll", ["bottom", "ll", "ul"], -1, 0]];
let pending = []; // tiles laid this turn, before "Place"
let chosen = null; // the hand tile to lay next
let turnKey = "";
let focusNext = null; // after a pick with the keyboard: "spot" (where the tile may go) or "place"

export const describeTile = (tile) => ANIMALS.map((a, i) => `${COLOUR[tile[i]]} ${a}`).join(", ");

export function draw(view, { seat, legal, act, name, redraw, before }) {
  const key = `${view.turn}:${view.board.length}`;
  if (key !== turnKey) [pending, chosen, turnKey] = [[], null, key];
  const places = legal.filter((a) => a.type === "place");
  const contains = (a) => pending.every((p) => a.tiles.some((t) => same(t, p)));
  const fitting = places.filter(contains);
  const next = fitting.flatMap((a) => a.tiles.filter((t) => !pending.some((p) => same(p, t))));
  const complete = fitting.find((a) => a.tiles.length === pending.length);
  const spots = chosen ? uniq(next.filter((t) => t.tile === chosen)) : [];
  // The children's game lays one tile per action: a tile laid is placed at once.
  // a click made by Enter or Space has detail 0; a hex's own keys give no event
  const byKeys = (event) => !event || event.detail === 0;
  const lay = (spot) => (event) => {
    chosen = null;
    if (view.children) act({ type: "place", tiles: [spot] });
    else { pending.push(spot); focusNext = byKeys(event) && "place"; redraw(); }
  };
  const pick = (tile) => (event) => { chosen = chosen === tile ? null : tile; focusNext = chosen && byKeys(event) && "spot"; redraw(); };
  const me = view.players.find((p) => p.seat === seat);
  const laidBefore = new Set((before?.board ?? view.board).map((tile) => `${tile.q},${tile.r}`));
  const focus = focusNext;
  focusNext = null;
  return h("div", {},
    h("p", {}, view.finished ? `Over (${view.end_reason}).` : `Turn ${view.turn}: ${name(view.active)} plays. Pile: ${view.pile_size} tiles.`,
      !places.length ? "" : view.children ? " Pick a tile of your hand, then a dashed hex; lay as many as you like, then End turn."
        : " Pick a tile of your hand, then a dashed hex; lay 1, 2 or 3 tiles, then Place."),
    view.children ? h("p", {}, `The children's game: one pavement together. ${view.animals.length} animals completed, ${view.board.length - 1} tiles laid.`) : null,
    board(view, pending, spots, lay, laidBefore, focus === "spot"),
    view.hand ? h("div", { class: "area" }, h("h3", {}, "Your hand"), h("div", { class: "row" }, inHand(view.hand).map((tile) => {
      const usable = next.some((t) => t.tile === tile);
      return h("button", { class: `tile${usable ? " legal" : ""}${chosen === tile ? " picked" : ""}`, disabled: !usable,
        onclick: pick(tile), "aria-pressed": String(chosen === tile), "aria-label": `Tile ${tile}: ${describeTile(tile)}` },
        h("svg", { viewBox: `${-W - 2} ${-R - 2} ${2 * W + 4} ${2 * R + 4}`, "aria-hidden": "true" }, hex(tile, 0, 0)));
    }))) : null,
    h("p", { class: "choices" },
      places.length && !view.children ? h("button", { disabled: !complete, onclick: () => act(complete),
        "data-focus": focus === "place" && Boolean(complete) },
        t("Place the tiles laid ({count})", { count: pending.length })) : null,
      pending.length ? h("button", { onclick: () => { pending = []; redraw(); } }, "Start over") : null,
      legal.filter((a) => a.type === "exchange").map((a) =>
        h("button", { onclick: () => act(a), "aria-label": `Return ${a.tile} to the pile and draw` }, `Return ${a.tile} to the pile and draw`)),
      legal.filter((a) => a.type === "pass").map((a) => h("button", { onclick: () => act(a) }, "Pass")),
      legal.filter((a) => a.type === "end_turn").map((a) => h("button", { onclick: () => act(a) }, "End turn"))),
    h("ul", { class: "area", "aria-label": "Players" }, view.players.map((p) => h("li", {},
      view.children ? `${name(p.seat)}: ${p.hand_size} tiles` : `${name(p.seat)}: ${p.points ?? "?"} points, ${p.markers_left} markers left, ${p.hand_size} tiles`,
      p.objectives ? ` · objectives: ${p.objectives.animal}, ${p.objectives.colour}` : ""))),
    me ? null : h("p", {}, "You are watching."));
}

// The hand less the tiles laid this turn.
const inHand = (hand) => pending.reduce((left, p) => left.toSpliced(left.indexOf(p.tile), 1), hand);
const uniq = (tiles) => tiles.filter((t, i) => tiles.findIndex((u) => same(u, t)) === i);
const centre = (q, r) => [2 * W * (q + r / 2), 1.5 * R * r];

function hex(tile, q, r) {
  const [x, y] = centre(q, r);
  const at = ([dx, dy], k = 1) => `${x + dx * k},${y + dy * k}`;
  return h("g", {}, THIRDS.map(([corner, rim, dq, dr]) => {
    const animal = ANIMALS[(((q + dq) - (r + dr)) % 3 + 3) % 3];
    const colour = tile[ANIMALS.indexOf(animal)];
    return [h("polygon", { class: colour, points: [`${x},${y}`, ...rim.map((c) => at(C[c]))].join(" ") }),
      h("text", { x: x + C[corner][0] * 0.55, y: y + C[corner][1] * 0.55 }, SYMBOL[animal])];
  }), h("polygon", { class: "edge", points: Object.values(C).map((c) => at(c)).join(" ") }));
}

function board(view, pending, spots, lay, laidBefore, focusSpot) {
  const all = [...view.board, ...pending, ...spots];
  const xs = all.map((t) => centre(t.q, t.r)[0]);
  const ys = all.map((t) => centre(t.q, t.r)[1]);
  // At least 7 hexes across, so that a small board is not drawn huge.
  const pad = (lo, hi, least) => Math.max(0, least - (hi - lo)) / 2;
  const [px, py] = [pad(Math.min(...xs), Math.max(...xs), 14 * W), pad(Math.min(...ys), Math.max(...ys), 9 * R)];
  const [x0, y0] = [Math.min(...xs) - R - 4 - px, Math.min(...ys) - R - 4 - py];
  const box = `${x0} ${y0} ${Math.max(...xs) + R + 4 + px - x0} ${Math.max(...ys) + R + 4 + py - y0}`;
  return h("svg", { class: "hexes", viewBox: box, role: "group", "aria-label": "The board" },
    view.board.map((t) => h("g", { role: "img", "aria-label": `Tile ${t.tile} at ${t.q}, ${t.r}: ${describeTile(t.tile)}`,
      class: laidBefore.has(`${t.q},${t.r}`) ? null : "fresh" }, hex(t.tile, t.q, t.r))),
    pending.map((t) => h("g", { class: "pending", role: "img", "aria-label": `Laid this turn: ${t.tile} at ${t.q}, ${t.r}` },
      hex(t.tile, t.q, t.r))),
    view.animals.filter((a) => a.marker !== null).map((a) => {
      const [x, y] = centre(a.q, a.r);
      return h("g", { role: "img", "aria-label": `${a.colour} ${a.animal} completed, marked by seat ${a.marker + 1}` },
        h("circle", { class: "marker", cx: x + C.lr[0], cy: y + C.lr[1], r: 6 }),
        h("text", { x: x + C.lr[0], y: y + C.lr[1] }, String(a.marker + 1)));
    }),
    spots.map((t, i) => {
      const [x, y] = centre(t.q, t.r);
      const go = lay(t);
      return h("g", { class: "spot", tabindex: "0", role: "button", "aria-label": `Lay ${t.tile} at ${t.q}, ${t.r}`, onclick: go,
        "data-focus": focusSpot && i === 0,
        onkeydown: (e) => (e.key === "Enter" || e.key === " ") && (e.preventDefault(), go()) },
        h("polygon", { points: Object.values(C).map(([dx, dy]) => `${x + dx},${y + dy}`).join(" ") }));
    }));
}

// ---- A replay: the public events in words, and a seat's hand at the end ----

export function tell(event, name) {
  const who = name(event.seat);
  switch (event.type) {
    case "tile_placed": return `${who} laid ${event.tile} (${describeTile(event.tile)}) at ${event.q}, ${event.r}.`;
    case "animal_completed": return `${who} completed a ${event.colour} ${event.animal}${
      event.marker === null ? "" : `, marked by ${name(event.marker)}`}.`;
    case "refill": return `${who} drew ${event.count} tile${event.count === 1 ? "" : "s"}.`;
    case "exchange": return `${who} returned a tile to the pile and drew another.`;
    case "pass": return `${who} passed.`;
    case "end_turn": return `${who} ended the turn.`;
    case "turn": return `Turn ${event.turn}: ${who} plays.`;
    default: return null;
  }
}

export function hand(view, seat, name) {
  const player = view.players.find((p) => p.seat === seat);
  const tiles = view.hand || [];
  return h("div", { class: "area", role: "group", "aria-label": `${name(seat)}'s hand` },
    h("h4", {}, `${name(seat)}'s hand`, player?.objectives
      ? ` · objectives: ${player.objectives.animal}, ${player.objectives.colour}` : ""),
    h("div", { class: "row" }, tiles.length ? tiles.map((tile) =>
      h("span", { class: "tile", role: "img", "aria-label": `Tile ${tile}: ${describeTile(tile)}` },
        h("svg", { viewBox: `${-W - 2} ${-R - 2} ${2 * W + 4} ${2 * R + 4}`, "aria-hidden": "true" }, hex(tile, 0, 0))))
      : h("span", {}, "no tile left")));
}

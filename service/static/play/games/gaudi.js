// Gaudí: the board of hexagonal tiles (pointy-top, axial q, r), each tile's three
// animal thirds in their colours, your hand, and the hexes where a tile may go.
import { h, same } from "../dom.js";
import { and, t, tn } from "../i18n.js";

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

// Each animal with its colour, in words: "green snail", "escargot vert" (French adjectives agree).
const ANIMAL_NAMES = { starfish: "starfish", snail: "snail", jellyfish: "jellyfish" };
const COLOUR_NAMES = { orange: "orange", green: "green", blue: "blue" };
const THIRD = {
  starfish: { orange: "orange starfish", green: "green starfish", blue: "blue starfish" },
  snail: { orange: "orange snail", green: "green snail", blue: "blue snail" },
  jellyfish: { orange: "orange jellyfish", green: "green jellyfish", blue: "blue jellyfish" },
};
const A_THIRD = {
  starfish: { orange: "an orange starfish", green: "a green starfish", blue: "a blue starfish" },
  snail: { orange: "an orange snail", green: "a green snail", blue: "a blue snail" },
  jellyfish: { orange: "an orange jellyfish", green: "a green jellyfish", blue: "a blue jellyfish" },
};
const animalName = (animal, colour) => t(A_THIRD[animal]?.[colour] ?? "an animal");
export const describeTile = (tile) => ANIMALS.map((a, i) => t(THIRD[a][COLOUR[tile[i]]])).join(", ");

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
    h("p", {}, view.finished ? t("Over: {why}.", { why: t(END[view.end_reason] ?? "nobody can lay a tile any more") })
      : t("Turn {turn}: {who} plays. Pile: {pile} tiles.", { turn: view.turn, who: name(view.active), pile: view.pile_size }),
      !places.length ? "" : ` ${view.children ? t("Pick a tile of your hand, then a dashed hex; lay as many as you like, then End turn.")
        : t("Pick a tile of your hand, then a dashed hex; lay 1, 2 or 3 tiles, then Place.")}`),
    view.children ? h("p", {}, t("The children's game: one pavement together."), " ",
      t("{animals} animals completed, {tiles} tiles laid.", { animals: view.animals.length, tiles: view.board.length - 1 })) : null,
    board(view, pending, spots, lay, laidBefore, focus === "spot"),
    view.hand ? h("div", { class: "area" }, h("h3", {}, t("Your hand")), h("div", { class: "row" }, inHand(view.hand).map((tile) => {
      const usable = next.some((t) => t.tile === tile);
      return h("button", { class: `tile${usable ? " legal" : ""}${chosen === tile ? " picked" : ""}`, disabled: !usable,
        onclick: pick(tile), "aria-pressed": String(chosen === tile), "aria-label": t("Tile: {tile}", { tile: describeTile(tile) }) },
        h("svg", { viewBox: `${-W - 2} ${-R - 2} ${2 * W + 4} ${2 * R + 4}`, "aria-hidden": "true" }, hex(tile, 0, 0)));
    }))) : null,
    h("p", { class: "choices" },
      places.length && !view.children ? h("button", { disabled: !complete, onclick: () => act(complete),
        "data-focus": focus === "place" && Boolean(complete) },
        t("Place the tiles laid ({count})", { count: pending.length })) : null,
      pending.length ? h("button", { onclick: () => { pending = []; redraw(); } }, t("Start over")) : null,
      legal.filter((a) => a.type === "exchange").map((a) =>
        h("button", { onclick: () => act(a), "aria-label": t("Return a tile ({tile}) to the pile and draw", { tile: describeTile(a.tile) }) },
          t("Return a tile ({tile}) to the pile and draw", { tile: describeTile(a.tile) }))),
      legal.filter((a) => a.type === "pass").map((a) => h("button", { onclick: () => act(a) }, t("Pass"))),
      legal.filter((a) => a.type === "end_turn").map((a) => h("button", { onclick: () => act(a) }, t("End turn")))),
    h("ul", { class: "area", "aria-label": t("Players") }, view.players.map((p) => h("li", {},
      view.children ? t("{who}: {tiles} tiles", { who: name(p.seat), tiles: p.hand_size })
        : t("{who}: {points} points, {markers} markers left, {tiles} tiles", { who: name(p.seat), points: p.points ?? "?", markers: p.markers_left, tiles: p.hand_size }),
      p.objectives ? ` · ${objectives(p.objectives)}` : ""))),
    me ? null : h("p", {}, t("You are watching.")));
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
  return h("svg", { class: "hexes", viewBox: box, role: "group", "aria-label": t("The board") },
    view.board.map((p) => h("g", { role: "img", "aria-label": t("Tile at {q}, {r}: {tile}", { q: p.q, r: p.r, tile: describeTile(p.tile) }),
      class: laidBefore.has(`${p.q},${p.r}`) ? null : "fresh" },
      hex(p.tile, p.q, p.r))),
    pending.map((p) => h("g", { class: "pending", role: "img", "aria-label": t("Laid this turn at {q}, {r}: {tile}", { q: p.q, r: p.r, tile: describeTile(p.tile) }) },
      hex(p.tile, p.q, p.r))),
    view.animals.filter((a) => a.marker !== null).map((a) => {
      const [x, y] = centre(a.q, a.r);
      return h("g", { role: "img", "aria-label": t("{animal} completed, marked by seat {seat}", { animal: t(THIRD[a.animal]?.[a.colour] ?? "an animal"), seat: a.marker + 1 }) },
        h("circle", { class: "marker", cx: x + C.lr[0], cy: y + C.lr[1], r: 6 }),
        h("text", { x: x + C.lr[0], y: y + C.lr[1] }, String(a.marker + 1)));
    }),
    spots.map((p, i) => {
      const [x, y] = centre(p.q, p.r);
      const go = lay(p);
      return h("g", { class: "spot", tabindex: "0", role: "button", "aria-label": t("Lay the tile at {q}, {r}", { q: p.q, r: p.r }), onclick: go,
        "data-focus": focusSpot && i === 0,
        onkeydown: (e) => (e.key === "Enter" || e.key === " ") && (e.preventDefault(), go()) },
        h("polygon", { points: Object.values(C).map(([dx, dy]) => `${x + dx},${y + dy}`).join(" ") }));
    }));
}

// ---- The events in words (the live log and the replay), and a seat's hand at the end ----

const END = { hand_and_pile_empty: "a hand and the pile are empty", blocked: "nobody can lay a tile any more" };

export function tell(event, name) {
  const who = name(event.seat);
  switch (event.type) {
    case "tile_placed": return t("{who} lays a tile ({tile}) at {q}, {r}.", { who, tile: describeTile(event.tile), q: event.q, r: event.r });
    case "animal_completed": return t(event.marker === null || event.marker === undefined
      ? "{who} completes {animal}." : "{who} completes {animal}; {marker} puts a marker on it.",
    { who, animal: animalName(event.animal, event.colour), marker: name(event.marker) });
    case "refill": return tn(event.count, "{who} draws {n} tile.", "{who} draws {n} tiles.", { who });
    case "drew": return t("{who} draws {tiles}.", { who, tiles: and(event.tiles.map((tile) => t("a tile ({tile})", { tile: describeTile(tile) }))) });
    case "exchange": return t("{who} can lay no tile: returns one to the pile and draws another.", { who });
    case "exchanged": return t("{who} returns a tile ({returned}) to the pile and draws a tile ({drew}).", {
      who, returned: describeTile(event.returned), drew: describeTile(event.drew) });
    case "pass": return t("{who} can neither lay nor exchange a tile, and passes.", { who });
    case "end_turn": return t("{who} ends the turn.", { who });
    case "turn": return t("Turn {turn}: {who} plays.", { turn: event.turn, who });
    default: return null;
  }
}

// The end of a match in words: why it ended, and the objectives, revealed.
export function tellEnd(event, name) {
  const why = END[event.reason] ? t("The game ends: {why}.", { why: t(END[event.reason]) }) : "";
  const goals = (event.objectives || []).map((o, s) => t("{who}: {animal} and {colour}", {
    who: name(s), animal: t(ANIMAL_NAMES[o.animal] ?? "an animal"), colour: t(COLOUR_NAMES[o.colour] ?? "a colour") }));
  return [why, goals.length ? t("Objectives: {goals}.", { goals: goals.join("; ") }) : ""].filter(Boolean).join(" ");
}

export function hand(view, seat, name) {
  const player = view.players.find((p) => p.seat === seat);
  const tiles = view.hand || [];
  return h("div", { class: "area", role: "group", "aria-label": t("{who}'s hand", { who: name(seat) }) },
    h("h4", {}, t("{who}'s hand", { who: name(seat) }), player?.objectives ? ` · ${objectives(player.objectives)}` : ""),
    h("div", { class: "row" }, tiles.length ? tiles.map((tile) =>
      h("span", { class: "tile", role: "img", "aria-label": t("Tile: {tile}", { tile: describeTile(tile) }) },
        h("svg", { viewBox: `${-W - 2} ${-R - 2} ${2 * W + 4} ${2 * R + 4}`, "aria-hidden": "true" }, hex(tile, 0, 0))))
      : h("span", {}, t("no tile left"))));
}

const objectives = (o) => t("objectives: {animal} and {colour}", { animal: t(ANIMAL_NAMES[o.animal] ?? "an animal"), colour: t(COLOUR_NAMES[o.colour] ?? "a colour") });

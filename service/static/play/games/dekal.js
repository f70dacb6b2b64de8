// Dékal: each seat's 4x4 grid (face-down cards hidden from everyone), the centre,
// and arrows around your hole where the picked centre card can be pushed in.
import { h } from "../dom.js";

export const title = "Dékal";
const ARROW = { left: "→", right: "←", top: "↓", bottom: "↑" };
let picked = null; // the centre value chosen for the next take

export function draw(view, { seat, legal, act, name, redraw }) {
  const takes = legal.filter((a) => a.type === "take");
  const values = [...new Set(takes.map((a) => a.value))];
  if (!values.includes(picked)) picked = values.length === 1 ? values[0] : null;
  const pick = (value) => () => { picked = value; redraw(); };
  const phase = { reveal: "Everyone picks a face-down card to reveal", draft: `${name(view.current)} takes a card`, over: "Over" };
  return h("div", {},
    h("p", {}, `Manche ${view.manche}, turn ${view.turn} of 16: ${phase[view.phase]}.`,
      legal.some((a) => a.type === "reveal") ? " Pick one of your face-down cards." : "",
      takes.length ? " Pick a centre card, then an arrow." : ""),
    h("div", { class: "area" }, h("h3", {}, "Centre"), h("div", { class: "row" },
      view.centre.length ? view.centre.map((value) => values.includes(value)
        ? h("button", { class: `card legal${value === picked ? " picked" : ""}`, onclick: pick(value),
            "aria-pressed": String(value === picked), "aria-label": `Centre card ${value}: pick it` }, String(value))
        : h("span", { class: "card", role: "img", "aria-label": `Centre card ${value}` }, String(value)))
        : h("span", {}, "empty"))),
    h("div", { class: "grids" }, view.players.map((player) =>
      grid(player, player.seat === seat, legal, takes, act, name, view.my_choice))));
}

function grid(player, mine, legal, takes, act, name, choice) {
  const at = (r, c) => player.grid[r][c];
  const cells = [];
  for (let r = -1; r <= 4; r++) {
    for (let c = -1; c <= 4; c++) {
      const inside = r >= 0 && r < 4 && c >= 0 && c < 4;
      cells.push(inside ? cell(at(r, c), r, c, mine, legal, act, choice) : arrow(player.hole, r, c, mine, takes, act));
    }
  }
  return h("div", { class: "area" },
    h("h4", {}, `${name(player.seat)}${mine ? " (you)" : ""}: total ${player.total}`, player.chosen ? " · has chosen" : ""),
    h("div", { class: "grid", role: "group", "aria-label": `${name(player.seat)}'s grid` }, cells));
}

function cell(card, row, col, mine, legal, act, choice) {
  const where = `row ${row + 1}, column ${col + 1}`;
  if (card === null) return h("span", { class: "card hole", role: "img", "aria-label": `Hole at ${where}` });
  if (card.face_up) return h("span", { class: "card", role: "img", "aria-label": `${card.value} at ${where}` }, String(card.value));
  const reveal = mine && legal.find((a) => a.type === "reveal" && a.row === row && a.col === col);
  const chosen = mine && choice && choice.row === row && choice.col === col;
  if (reveal) return h("button", { class: "card down legal", onclick: () => act(reveal), "aria-label": `Reveal the face-down card at ${where}` }, "?");
  return h("span", { class: `card down${chosen ? " picked" : ""}`, role: "img", "aria-label": `Face-down card at ${where}${chosen ? ", chosen" : ""}` });
}

// The arrow cells of the ring: where the picked card may come in along the hole's row or column.
function arrow(hole, r, c, mine, takes, act) {
  if (!mine || !hole || picked === null) return h("span", {});
  const side = c === -1 && r === hole.row ? "left" : c === 4 && r === hole.row ? "right"
    : r === -1 && c === hole.col ? "top" : r === 4 && c === hole.col ? "bottom" : null;
  const take = side && takes.find((a) => a.value === picked && a.from === side);
  if (!take) return h("span", {});
  const line = side === "left" || side === "right" ? `row ${hole.row + 1}` : `column ${hole.col + 1}`;
  return h("button", { class: "arrow legal", onclick: () => act(take), "aria-label": `Push the ${picked} in from the ${side} of ${line}` }, ARROW[side]);
}

// ---- A replay: the public events in words, and a seat's grid at the end ----

export function tell(event, name) {
  const who = name(event.seat);
  switch (event.type) {
    case "chosen": return `${who} chose a face-down card to reveal.`;
    case "revealed": return `Revealed: ${event.cards.map((c) => `${name(c.seat)}'s ${c.value}`).join(", ")}.`;
    case "reserve_drawn": return `Drawn from the reserve: ${event.draws.map((d) => `${name(d.seat)} ${d.value}`).join(", ")}.`;
    case "first_player": return `${who} plays first (${event.by.replaceAll("_", " ")}).`;
    case "taken": return `${who} took the ${event.value} and pushed it in from the ${event.from}.`;
    case "turn_started": return `Manche ${event.manche}, turn ${event.turn} begins.`;
    case "manche_started": return `Manche ${event.manche} begins.`;
    case "manche_scored": return `Manche ${event.manche} scored: ${event.scores.map((s, i) => `${name(i)} ${s}`).join(", ")}.`;
    default: return null;
  }
}

export function hand(view, seat, name) {
  const player = view.players.find((p) => p.seat === seat);
  return player ? h("div", { role: "group", "aria-label": `${name(seat)}'s hand` },
    grid(player, false, [], [], () => {}, name, null)) : null;
}

'use strict';
/*
 * Dékal for boardgame.io 0.50.2: a port of engines/dekal/rules.py (RULES.md
 * §1) doing the same work per move as Ludothèque's engine and service.
 *
 * - G is the whole match state, the same fields as the Python engine's
 *   (hidden cards included); boardgame.io's seeded `random` plugin replaces
 *   the engine's `rng` field.
 * - Both actions are moves taking the action object Ludothèque's API takes:
 *   `reveal({type: "reveal", row, col})` and
 *   `take({type: "take", value, from})`, checked as `apply` checks them.
 *   They run on the server only (`client: false`: the clients hold redacted
 *   views) and accept a stale stateID (`ignoreStaleStateID`), since in the
 *   reveal phase every seat moves at once, as with Ludothèque's API.
 * - Who may act is `ctx.activePlayers`, set after every move from the same
 *   `to_act` as the engine's.
 * - `playerView` is what Ludothèque answers for a seat with
 *   `?legal_actions=true`: the match envelope (status, version, seats,
 *   to_act, outcome, ...) around the engine's `view`, with face-down cards
 *   redacted for everyone (their owner too), other seats' reveal choices
 *   hidden, and the seat's legal actions computed anew on each update sent.
 */

const { INVALID_MOVE, Stage } = require('boardgame.io/core');

const NAME = 'dekal';
const SIZE = 4;
const CELLS = SIZE * SIZE;
const TURNS = CELLS;
const COPIES = 10;
const DECK_SIZE = 10 * COPIES;
const DIRECTIONS = ['left', 'right', 'top', 'bottom'];
const FIRST_PLAYER_RULES = ['lowest_card', 'random'];

// -- rules -------------------------------------------------------------------

function deck() {
  const cards = [];
  for (let value = 1; value <= 10; value++) {
    for (let i = 0; i < COPIES; i++) cards.push(value);
  }
  return cards;
}

function deal(G, cards) {
  const n = G.n_players;
  G.grids = [];
  G.face_up = [];
  for (let s = 0; s < n; s++) {
    const grid = [];
    const up = [];
    for (let r = 0; r < SIZE; r++) {
      grid.push(cards.slice(CELLS * s + SIZE * r, CELLS * s + SIZE * (r + 1)));
      up.push([false, false, false, false]);
    }
    G.grids.push(grid);
    G.face_up.push(up);
  }
  G.reserve = cards.slice(CELLS * n);
  G.reserve_drawn = [];
}

function setup({ ctx, random }, setupData) {
  const n = ctx.numPlayers;
  const options = (setupData && setupData.options) || {};
  const first = options.first_player === undefined ? 'lowest_card' : options.first_player;
  const names = (setupData && setupData.names) || [];
  const G = {
    n_players: n,
    options: {
      target_score: options.target_score === undefined ? null : options.target_score,
      first_player: first,
      turn_timeout_s: null,
    },
    names: Array.from({ length: n }, (_, s) => names[s] || `P${s}`),
    version: 1,
    manche: 1,
    turn: 1,
    phase: 'reveal',
    starter: null,
    first_player: null,
    current: null,
    grids: [],
    face_up: [],
    holes: Array(n).fill(null),
    choices: Array(n).fill(null),
    centre: [],
    reserve: [],
    reserve_drawn: [],
    totals: Array(n).fill(0),
    manches: [],
  };
  deal(G, random.Shuffle(deck()));
  if (first === 'random') G.starter = Math.floor(random.Number() * n);
  else if (Number.isInteger(first)) G.starter = first;
  G.first_player = G.starter;
  return G;
}

function toAct(G) {
  if (G.phase === 'reveal') {
    const seats = [];
    G.choices.forEach((choice, s) => {
      if (choice === null) seats.push(s);
    });
    return seats;
  }
  if (G.phase === 'draft') return [G.current];
  return [];
}

function legalDirections(hole) {
  const { row, col } = hole;
  const allowed = { left: col > 0, right: col < SIZE - 1, top: row > 0, bottom: row < SIZE - 1 };
  return DIRECTIONS.filter((d) => allowed[d]);
}

function legalActions(G, seat) {
  if (!toAct(G).includes(seat)) return [];
  if (G.phase === 'reveal') {
    const faceUp = G.face_up[seat];
    const actions = [];
    for (let r = 0; r < SIZE; r++) {
      for (let c = 0; c < SIZE; c++) {
        if (!faceUp[r][c]) actions.push({ type: 'reveal', row: r, col: c });
      }
    }
    return actions;
  }
  const directions = legalDirections(G.holes[seat]);
  const values = [...new Set(G.centre)].sort((a, b) => a - b);
  const actions = [];
  for (const value of values) {
    for (const direction of directions) actions.push({ type: 'take', value, from: direction });
  }
  return actions;
}

function neighbours(row, col) {
  return [
    [row - 1, col],
    [row + 1, col],
    [row, col - 1],
    [row, col + 1],
  ].filter(([r, c]) => r >= 0 && r < SIZE && c >= 0 && c < SIZE);
}

function scoreGrid(grid) {
  const cancelled = [];
  let score = 0;
  let cardsLeft = 0;
  for (let r = 0; r < SIZE; r++) {
    for (let c = 0; c < SIZE; c++) {
      const value = grid[r][c];
      if (neighbours(r, c).some(([nr, nc]) => grid[nr][nc] === value)) {
        cancelled.push({ row: r, col: c });
      } else {
        score += value;
        cardsLeft += 1;
      }
    }
  }
  return { score, cards_left: cardsLeft, cancelled };
}

function winners(scores, cardsLeft) {
  const keys = scores.map((score, s) => [score, cardsLeft ? cardsLeft[s] : 0]);
  let best = keys[0];
  for (const key of keys) {
    if (key[0] < best[0] || (key[0] === best[0] && key[1] < best[1])) best = key;
  }
  const won = [];
  keys.forEach((key, s) => {
    if (key[0] === best[0] && key[1] === best[1]) won.push(s);
  });
  return won;
}

function copyResult(result) {
  return {
    manche: result.manche,
    first_player: result.first_player,
    scores: [...result.scores],
    cards_left: [...result.cards_left],
    cancelled: result.cancelled.map((cells) => cells.map((p) => ({ row: p.row, col: p.col }))),
    totals: [...result.totals],
  };
}

function outcome(G) {
  if (G.phase !== 'over') return null;
  const last = G.manches[G.manches.length - 1];
  const single = G.options.target_score === null;
  return {
    winners: winners(G.totals, single ? last.cards_left : null),
    scores: [...G.totals],
    cards_left: [...last.cards_left],
    manche_scores: G.manches.map((m) => [...m.scores]),
    manches: G.manches.length,
  };
}

function decideFirstPlayer(G, random, revealed) {
  let low = Math.min(...revealed);
  let tied = [];
  revealed.forEach((value, s) => {
    if (value === low) tied.push(s);
  });
  const events = [];
  let how = 'lowest_card';
  while (tied.length > 1 && G.reserve.length >= tied.length) {
    const draws = tied.map((s) => ({ seat: s, value: G.reserve.pop() }));
    G.reserve_drawn.push(...draws.map((d) => d.value));
    events.push({ type: 'reserve_drawn', draws });
    low = Math.min(...draws.map((d) => d.value));
    tied = draws.filter((d) => d.value === low).map((d) => d.seat);
    how = 'reserve';
  }
  if (tied.length > 1) {
    tied = [tied[Math.floor(random.Number() * tied.length)]];
    how = 'random';
  }
  G.starter = G.first_player = tied[0];
  events.push({ type: 'first_player', seat: tied[0], by: how });
  return events;
}

function reveal(G, random) {
  const cards = [];
  G.choices.forEach((position, s) => {
    const { row, col } = position;
    const value = G.grids[s][row][col];
    G.grids[s][row][col] = null;
    G.holes[s] = { row, col };
    G.centre.push(value);
    cards.push({ seat: s, row, col, value });
  });
  G.choices = Array(G.n_players).fill(null);
  G.centre.sort((a, b) => a - b);
  const events = [{ type: 'revealed', manche: G.manche, turn: G.turn, cards }];
  if (G.first_player === null) {
    events.push(...decideFirstPlayer(G, random, cards.map((card) => card.value)));
  }
  G.phase = 'draft';
  G.current = G.first_player;
  return events;
}

function line(hole, direction) {
  const { row, col } = hole;
  const cells = [];
  if (direction === 'left') for (let c = 0; c <= col; c++) cells.push([row, c]);
  else if (direction === 'right') for (let c = SIZE - 1; c >= col; c--) cells.push([row, c]);
  else if (direction === 'top') for (let r = 0; r <= row; r++) cells.push([r, col]);
  else for (let r = SIZE - 1; r >= row; r--) cells.push([r, col]);
  return cells;
}

function push(grid, faceUp, hole, direction, value) {
  const cells = line(hole, direction);
  for (let i = cells.length - 1; i > 0; i--) {
    const [r, c] = cells[i];
    const [pr, pc] = cells[i - 1];
    grid[r][c] = grid[pr][pc];
    faceUp[r][c] = faceUp[pr][pc];
  }
  const [r, c] = cells[0];
  grid[r][c] = value;
  faceUp[r][c] = true;
}

function nextTurn(G) {
  G.turn += 1;
  G.first_player = (G.first_player + 1) % G.n_players;
  G.phase = 'reveal';
  G.current = null;
  return [{ type: 'turn_started', manche: G.manche, turn: G.turn, first_player: G.first_player }];
}

function nextManche(G, random) {
  G.manche += 1;
  G.turn = 1;
  G.phase = 'reveal';
  G.current = null;
  G.centre = [];
  G.starter = G.first_player = (G.starter + 1) % G.n_players;
  deal(G, random.Shuffle(deck()));
  return [{ type: 'manche_started', manche: G.manche, first_player: G.starter }];
}

function endManche(G, random) {
  const results = G.grids.map(scoreGrid);
  const scores = results.map((result) => result.score);
  scores.forEach((score, s) => {
    G.totals[s] += score;
  });
  const record = {
    manche: G.manche,
    first_player: G.starter,
    scores,
    cards_left: results.map((result) => result.cards_left),
    cancelled: results.map((result) => result.cancelled),
    totals: [...G.totals],
  };
  G.manches.push(record);
  const events = [
    { type: 'manche_scored', grids: G.grids.map((g) => g.map((row) => [...row])), ...copyResult(record) },
  ];
  const target = G.options.target_score;
  if (target === null || Math.max(...G.totals) >= target) {
    G.phase = 'over';
    G.current = null;
    return [...events, { type: 'match_over', ...outcome(G) }];
  }
  return [...events, ...nextManche(G, random)];
}

function take(G, random, seat, value, direction) {
  const hole = G.holes[seat];
  G.centre.splice(G.centre.indexOf(value), 1);
  push(G.grids[seat], G.face_up[seat], hole, direction, value);
  G.holes[seat] = null;
  const events = [{ type: 'taken', seat, value, from: direction, hole: { row: hole.row, col: hole.col } }];
  if (G.centre.length) {
    G.current = (seat + 1) % G.n_players;
    return events;
  }
  if (G.turn < TURNS) return [...events, ...nextTurn(G)];
  return [...events, ...endManche(G, random)];
}

/** The engine's `apply`: check the action completely, then play it; null when refused. */
function apply(G, random, seat, action) {
  if (!Number.isInteger(seat) || !toAct(G).includes(seat)) return null;
  const expected = G.phase === 'reveal' ? 'reveal' : 'take';
  if (action === null || typeof action !== 'object' || action.type !== expected) return null;
  if (expected === 'reveal') {
    const { row, col } = action;
    if (!Number.isInteger(row) || !Number.isInteger(col) || row < 0 || row >= SIZE || col < 0 || col >= SIZE) {
      return null;
    }
    if (G.face_up[seat][row][col]) return null;
    G.choices[seat] = { row, col };
    const events = [{ type: 'chosen', seat }];
    if (G.choices.every((choice) => choice !== null)) events.push(...reveal(G, random));
    return events;
  }
  const { value, from } = action;
  if (!Number.isInteger(value) || !G.centre.includes(value)) return null;
  if (!DIRECTIONS.includes(from)) return null;
  if (!legalDirections(G.holes[seat]).includes(from)) return null;
  return take(G, random, seat, value, from);
}

// -- views -------------------------------------------------------------------

function playerCells(G, seat) {
  const grid = G.grids[seat];
  const faceUp = G.face_up[seat];
  const hole = G.holes[seat];
  const cells = grid.map((row, r) =>
    row.map((value, c) =>
      value === null ? null : { face_up: faceUp[r][c], value: faceUp[r][c] ? value : null },
    ),
  );
  return {
    seat,
    grid: cells,
    hole: hole ? { row: hole.row, col: hole.col } : null,
    chosen: G.choices[seat] !== null,
    total: G.totals[seat],
  };
}

/** The engine's `view(state, seat)`: what `seat` (null: a spectator) may see. */
function view(G, seat) {
  const n = G.n_players;
  const seen = {
    seat,
    n_players: n,
    target_score: G.options.target_score,
    manche: G.manche,
    turn: G.turn,
    phase: G.phase,
    first_player: G.first_player,
    current: G.current,
    centre: [...G.centre],
    reserve: { count: G.reserve.length, drawn: [...G.reserve_drawn] },
    players: Array.from({ length: n }, (_, s) => playerCells(G, s)),
    manches: G.manches.map(copyResult),
  };
  if (seat !== null) {
    const choice = G.choices[seat];
    seen.my_choice = choice ? { row: choice.row, col: choice.col } : null;
  }
  return seen;
}

/** What Ludothèque answers a seat with `?legal_actions=true`. */
function present(G, ctx, playerID) {
  const seat = playerID === null || playerID === undefined ? null : Number(playerID);
  const status = G.phase === 'over' ? 'finished' : 'active';
  const acting = status === 'active' ? toAct(G) : [];
  return {
    id: null,
    game: NAME,
    status,
    version: G.version,
    options: { ...G.options },
    seats: G.names.map((name, s) => ({ seat: s, name, bot: null, open: false })),
    to_act: acting,
    deadlines: Array(G.n_players).fill(null),
    your_seat: seat,
    view: view(G, seat),
    outcome: outcome(G),
    seeded: false,
    listed: false,
    rematch: null,
    webhook: null,
    legal_actions: seat !== null && acting.includes(seat) ? legalActions(G, seat) : [],
  };
}

// -- boardgame.io ------------------------------------------------------------

function activeFrom(G) {
  const value = {};
  for (const seat of toAct(G)) value[String(seat)] = Stage.NULL;
  return value;
}

function move({ G, playerID, events, random }, action) {
  const played = apply(G, random, Number(playerID), action);
  if (played === null) return INVALID_MOVE;
  G.version += 1;
  if (G.phase !== 'over') events.setActivePlayers({ value: activeFrom(G) });
  return undefined;
}

const serverMove = { move, client: false, ignoreStaleStateID: true };

const Dekal = {
  name: NAME,
  minPlayers: 2,
  maxPlayers: 6,
  setup,
  turn: {
    // every seat reveals at once: all active from the start
    activePlayers: { all: Stage.NULL },
  },
  moves: { reveal: serverMove, take: serverMove },
  endIf: ({ G }) => (G.phase === 'over' ? outcome(G) : undefined),
  playerView: ({ G, ctx, playerID }) => present(G, ctx, playerID),
};

module.exports = {
  Dekal,
  FIRST_PLAYER_RULES,
  DECK_SIZE,
  toAct,
  legalActions,
  apply,
  view,
  present,
  scoreGrid,
  winners,
  setup,
};

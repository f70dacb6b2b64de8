// The page: a lobby (#), a seat to take (#join/G/ID/SEAT), a table (#match/G/ID),
// a finished match replayed step by step (#replay/G/ID; #replay=G/ID works too), ranked play
// (quick play in the lobby, #leaderboard/G[/bots], #player/ID: ranked.js).
// This browser plays as a guest player, made on the first visit (api.js guest()); on a
// server that keeps no players, with a seat token for each seat, as before.
import { call, checkDeal, follow, guest, holdSeat, matchPath, me, seatsHeld } from "./api.js";
import { h } from "./dom.js";
import { and, language, moment, setLanguage, t, t as tr } from "./i18n.js";
import { leaderboard, playerPage, quickPlay, ratingChanges, stopWaiting } from "./ranked.js";
import { GAMES, seatName, sentence, tell } from "./words.js";

const PLAYERS = ["you", "random", "greedy", "mcts", "open"];
// A replay comes a page at a time (set before route() runs below).
const PAGE = 100; // steps per page asked for (the API serves up to 200)
const PREFETCH = 20; // load the next page this many steps before its first
const FRESH_MS = 1500; // how long what just changed stays marked (.fresh, play.css)
const main = document.querySelector("main");
const ME = "player"; // in a table's held seats: the player's seat (its token: me().token, read when used)
let table = null; // the match on screen: { game, id, held, match, legal, log, stop }, or a replay: { stop }
let views = 0; // counts routes, so that a slow answer never draws over a newer view
let player = null; // this browser's player for the view on screen, or null: seat tokens only
let lostAt = 0; // when the player's token was last refused (revoked, expired): a new guest is made
let notice = ""; // said once, above the lobby

window.addEventListener("hashchange", route);
window.addEventListener("ludotheque:language", () => { frame(); route(); });
window.addEventListener("ludotheque:player-lost", () => {
  if (Date.now() - lostAt < 5000) return; // once for a burst of refused answers
  lostAt = Date.now();
  notice = "Your guest key had ended (revoked or expired): this browser plays as a new guest now.";
  route();
});
setInterval(tickClocks, 1000);
setInterval(() => guest(guestName()), 3600e3); // a tab left open renews the token too
frame();
route();

// The page around the views, in the page's language, with the switch between the two.
function frame() {
  const lang = language();
  document.documentElement.lang = lang;
  document.title = t("Ludothèque: play");
  const choice = (code, label) => h("button", { type: "button", lang: code, class: "lang", "aria-pressed": String(code === lang),
    onclick: () => code !== language() && setLanguage(code) }, label);
  const tagline = t("Dékal, Pacal, the Gaudí tile game and Ducale rummy, against bots or friends.");
  document.querySelector("header").replaceChildren(h("h1", {}, h("a", { href: "#" }, "Ludothèque")), h("p", {}, tagline),
    h("nav", { class: "languages", "aria-label": t("Language") }, choice("fr", "Français"), " | ", choice("en", "English")));
  document.querySelector("footer").replaceChildren(h("p", {}, t("This page uses the public API only: read its code, then"), " ",
    h("a", { href: "docs" }, t("the API")), "."));
}

// The name a new guest gets: the one this browser gave its seats before, else "Guest 1234".
function guestName() {
  const kept = (localStorage.getItem("ludotheque:name") || "").trim().slice(0, 40).trim();
  return kept || t("Guest {n}", { n: String(Math.floor(Math.random() * 9000) + 1000) });
}

async function route() {
  table?.stop();
  table = null;
  views += 1;
  const view = views;
  player = await guest(guestName());
  if (view !== views) return;
  const [where, game, id, seat] = location.hash.slice(1).replace(/^replay=/, "replay/").split("/");
  stopWaiting(); // a ticket waits while its lobby is on screen: leaving it leaves the queue
  const titleOf = (name) => GAMES[name]?.title ?? name;
  main.replaceChildren(h("p", {}, t("Loading…")));
  if (where === "match") openTable(game, id);
  else if (where === "leaderboard") leaderboard(show, game, id, titleOf);
  else if (where === "player") playerPage(show, game, titleOf);
  else if (where === "join") showJoin(game, id, Number(seat));
  else if (where === "replay") showReplay(game, id);
  else showLobby();
}

function show(...nodes) {
  main.replaceChildren(...nodes.filter(Boolean));
}

function problem(error) {
  const p = error.problem;
  if (!p) return t("Network error: {message}", { message: error.message });
  // In English the server's own words; in French the code's meaning when known.
  const known = REFUSALS[p.code];
  return language() === "en" || !known ? t("Refused ({code}): {detail}", { code: p.code, detail: p.detail || p.title })
    : t("Refused: {detail}", { detail: t(known) });
}

// What each refusal the page may meet means, for the French page.
const REFUSALS = {
  abort_too_late: "it is too late to call this match off.",
  already_seated: "you already have a seat at this table.",
  conflict: "the table changed meanwhile: try again.",
  game_not_found: "there is no such game.",
  illegal_action: "this move is not allowed now.",
  invalid_options: "these options are not valid.",
  invalid_request: "the request is not valid.",
  invalid_token: "your key is not valid any more.",
  match_not_found: "there is no such match.",
  match_not_over: "the match is not over yet.",
  match_not_started: "the match has not started yet.",
  match_over: "the match is over.",
  match_started: "the match has started already.",
  not_your_seat: "this seat is not yours.",
  not_your_turn: "it is not your turn.",
  player_not_found: "there is no such player.",
  replay_too_long: "this match is too long to replay here.",
  seat_not_found: "there is no such seat.",
  seat_reserved: "this seat is kept for another player.",
  seat_resigned: "this seat has resigned.",
  seat_taken: "this seat is taken already.",
  seed_not_allowed: "a chosen deal is not allowed at this table.",
  store_unavailable: "the server cannot keep games just now: try again later.",
  players_unavailable: "this server keeps no players.",
  already_queued: "you are in the queue already.",
  ticket_not_found: "this place in the queue is gone.",
};

// ---- The lobby: create a table, or join a listed one ----

async function showLobby() {
  const view = views;
  const { games } = await call("GET", "v1/games");
  if (view !== views) return;
  const gameSelect = h("select", { id: "game", onchange: () => drawSeats() },
    games.map((g) => h("option", { value: g.name }, GAMES[g.name]?.title ?? g.name)));
  const countSelect = h("select", { id: "count", onchange: () => drawSeats() });
  const seats = h("fieldset", { class: "seats" });
  const name = h("input", { id: "name", value: localStorage.getItem("ludotheque:name") || t("Me") });
  const mine = player && h("section", { "aria-labelledby": "mine-title" });
  const listed = h("input", { type: "checkbox", id: "listed", checked: true });
  const options = h("fieldset", { class: "options" });
  const message = h("p", { role: "alert" });
  const tables = h("section", { "aria-labelledby": "tables-title" });
  const game = () => games.find((g) => g.name === gameSelect.value);

  function drawSeats() {
    const { min_players: min, max_players: max } = game();
    const count = Math.min(Math.max(Number(countSelect.value) || 2, min), max);
    countSelect.replaceChildren(...Array.from({ length: max - min + 1 }, (_, i) =>
      h("option", { value: min + i, selected: min + i === count }, String(min + i))));
    seats.replaceChildren(h("legend", {}, t("Seats")), ...Array.from({ length: count }, (_, i) =>
      h("label", {}, t("Seat {n}", { n: i + 1 }), " ", h("select", { name: `seat${i}`, "data-seat": i },
        PLAYERS.map((p) => h("option", { value: p, selected: p === (i ? "greedy" : "you") },
          t({ you: "you", open: "open seat (a friend)", random: "bot: random", greedy: "bot: greedy", mcts: "bot: MCTS" }[p])))))));
    drawOptions(game().options, options);
    listTables();
  }

  async function create(event) {
    event.preventDefault();
    if (!player) localStorage.setItem("ludotheque:name", name.value);
    // With a player, the first seat of "you" is the player's (no seat token: the player's
    // token acts for it); a player holds one seat of a match, so more (a hot seat) get tokens.
    let taken = false;
    const players = [...seats.querySelectorAll("select")].map((s) => {
      if (s.value === "open") return {};
      if (s.value !== "you") return { bot: s.value };
      if (player && !taken) {
        taken = true;
        return { player: "me" };
      }
      return { name: player ? player.name : name.value };
    });
    const chosen = Object.fromEntries([...options.querySelectorAll("[name]")].filter((f) => f.value !== "")
      .map((f) => [f.name, f.type === "checkbox" ? f.checked : f.dataset.number ? Number(f.value) : f.value]));
    try {
      const match = await call("POST", `v1/games/${game().name}/matches`,
        { token: taken ? me()?.token : undefined, body: { players, listed: listed.checked, options: chosen } });
      for (const seat of match.seats) if (seat.token) holdSeat(match.id, seat.seat, seat.token);
      location.hash = `match/${match.game}/${match.id}`;
    } catch (error) {
      message.textContent = problem(error);
    }
  }

  // The lobby, newest first, a page at a time (`next` is the cursor of the next page).
  async function listTables() {
    const list = h("ul", {});
    const more = h("button", { type: "button", hidden: true }, t("More tables"));
    async function page(cursor) {
      const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
      const { matches, next } = await call("GET", `v1/games/${game().name}/matches${query}`);
      list.append(...matches.map((m) => h("li", {},
        t("{n} seats: {who}", { n: m.players, who: m.seats.map((s, i) => (s.name || s.bot ? seatName(m.seats, i) : t("open"))).join(", ") }), " ",
        m.open_seats.map((seat) => h("a", { class: "button", href: `#join/${game().name}/${m.id}/${seat}` },
          t("Join seat {n}", { n: seat + 1 }))))));
      more.hidden = !next;
      more.onclick = () => page(next);
      if (!list.children.length && !next) list.replaceChildren(h("li", {}, t("None right now.")));
    }
    tables.replaceChildren(h("h2", { id: "tables-title" }, t("Tables waiting for players")), list, more,
      h("button", { type: "button", onclick: listTables }, t("Refresh")));
    await page(null);
  }

  const quick = player && quickPlay(games, (name) => GAMES[name]?.title ?? name);
  show(identity(), quick, mine, h("form", { onsubmit: create, "aria-labelledby": "new-title" },
    h("h2", { id: "new-title" }, t("New table")),
    h("label", {}, t("Game"), " ", gameSelect), h("label", {}, t("Players"), " ", countSelect),
    player ? null : h("label", {}, t("Your name"), " ", name), seats, options,
    h("label", {}, listed, " ", t("List it in the lobby")),
    h("button", { type: "submit" }, t("Create")), message), tables, replayForm(games));
  drawSeats();
  if (mine) myTables(mine, games);
}

// Who this browser plays as.
function identity() {
  if (!player) return null;
  const said = notice;
  notice = "";
  return h("p", { class: "identity", role: "status" }, said ? `${t(said)} ` : "",
    t("You play as"), " ", h("strong", {}, player.name), t(", a guest player: this browser keeps your key, so your tables go on in any tab and after a reload."), " ",
    h("a", { href: `#player/${player.id}` }, t("Your ratings")), ".");
}

const STATUS = { waiting: "waiting for players", active: "in play", finished: "over" };
const MATCH_STATUS = { waiting: "waiting", active: "active", finished: "finished" };

// The player's matches, newest first, a page at a time (GET /v1/players/me/matches).
async function myTables(section, games) {
  const view = views;
  const list = h("ul", { class: "my-tables" });
  const more = h("button", { type: "button", hidden: true }, t("More of my tables"));
  const note = h("p", { role: "status" });
  const title = (game) => GAMES[game]?.title ?? games.find((g) => g.name === game)?.name ?? game;
  const when = moment;
  const who = (m) => (Array.isArray(m.seats)
    ? m.seats.map((s, i) => ((s.seat ?? i) === m.seat ? t("you") : s.name || s.bot ? seatName(m.seats, i) : t("open seat"))).join(", ")
    : "");
  async function page(cursor) {
    const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
    let answer;
    try {
      answer = await call("GET", `v1/players/me/matches${query}`, { token: me()?.token });
    } catch (error) {
      if (view === views) note.textContent = `${t("Your tables could not be listed.")} ${problem(error)}`;
      return;
    }
    if (view !== views) return;
    const { items, next } = answer;
    list.append(...items.map((m) => {
      const name = t("{game} table {id}", { game: title(m.game), id: m.id.slice(0, 8) });
      const open = (text, where) => h("a", { class: "button", href: `#${where}/${m.game}/${m.id}`,
        "aria-label": `${t(text)}: ${name}` }, t(text));
      return h("li", {},
        h("strong", {}, title(m.game)), ` ${t("table {id}", { id: m.id.slice(0, 8) })} · ${t(STATUS[m.status] ?? "over")}`,
        m.status === "finished" && m.ended_at ? ` · ${t("ended {when}", { when: when(m.ended_at) })}`
          : m.created_at ? ` · ${t("made {when}", { when: when(m.created_at) })}` : "",
        who(m) ? ` · ${who(m)} ` : " ",
        m.status === "finished"
          ? [open("Replay", "replay"), open("The end", "match")]
          : open(m.status === "waiting" ? "Open" : "Continue", "match"));
    }));
    more.hidden = !next;
    more.onclick = () => page(next);
    if (!list.children.length && !next) list.replaceChildren(h("li", {}, t("None yet: create a table or join one.")));
  }
  section.replaceChildren(h("h2", { id: "mine-title" }, t("My tables")), list, more, note,
    h("button", { type: "button", onclick: () => myTables(section, games) }, t("Refresh my tables")));
  await page(null);
}

// Any finished match, from its id (or a link that holds it).
function replayForm(games) {
  const game = h("select", { id: "replay-game" }, games.map((g) => h("option", { value: g.name }, GAMES[g.name]?.title ?? g.name)));
  const id = h("input", { id: "replay-id", required: true, autocomplete: "off", spellcheck: "false",
    placeholder: t("the match's id") });
  const open = (event) => {
    event.preventDefault();
    const text = id.value.trim();
    location.hash = `replay/${game.value}/${text.match(/[0-9a-f]{32}/)?.[0] ?? encodeURIComponent(text)}`;
  };
  return h("form", { onsubmit: open, "aria-labelledby": "replay-title" },
    h("h2", { id: "replay-title" }, t("Replay a match")),
    h("label", {}, t("Game"), " ", game), h("label", {}, t("Match id"), " ", id),
    h("button", { type: "submit" }, t("Replay")));
}

// A field for each simple option of the game's JSON Schema (GET /v1/games); empty: the default.
function drawOptions(schema, fieldset) {
  const fields = Object.entries(schema.properties || {}).map(([key, p]) => {
    const label = t(OPTION_NAMES[key] ?? "option");
    const types = [p.type].flat();
    let field;
    if (types.includes("boolean")) field = h("input", { type: "checkbox", name: key, checked: p.default === true });
    else if (p.enum) field = h("select", { name: key, "data-number": typeof p.enum[0] === "number" && "1" }, h("option", { value: "" }, t("default ({value})", { value: optionValue(p.default) })),
      p.enum.filter((v) => v !== null).map((v) => h("option", { value: v }, optionValue(v))));
    else if (types.includes("integer")) field = h("input", { type: "number", name: key, "data-number": "1", min: p.minimum, max: p.maximum,
      placeholder: t("default: {value}", { value: optionValue(p.default) }) });
    else return null;
    return h("label", {}, label, " ", field);
  }).filter(Boolean);
  fieldset.replaceChildren(h("legend", {}, t("Options")), ...fields);
}

// The games' options (GET /v1/games) and their values, in words.
const OPTION_NAMES = {
  first_player: "first player", target_score: "target score", manches_to_win: "manches to win", mode: "mode",
  short_game: "short game", beginner: "beginner rules", children: "children's game", opening_minimum: "opening minimum",
  max_stock_rebuilds: "most stock rebuilds", turn_timeout_s: "seconds per turn",
};
const OPTION_VALUES = { lowest_card: "lowest card", random: "at random", match: "match", solitaire: "solitaire" };
const optionValue = (v) => (v === null || v === undefined ? t("none") : OPTION_VALUES[v] ? t(OPTION_VALUES[v]) : String(v));

// ---- A seat link: a friend takes the open seat ----

function showJoin(game, id, seat) {
  const name = h("input", { id: "name", value: localStorage.getItem("ludotheque:name") || t("Friend") });
  const message = h("p", { role: "alert" });
  async function join(event) {
    event.preventDefault();
    if (!player) localStorage.setItem("ludotheque:name", name.value);
    try {
      // As the player (body {}: its name; the seat is held by the player's tokens), else
      // with a name, for a seat token kept in this browser.
      const joined = await call("POST", `${matchPath(game, id)}/seats/${seat}`,
        player ? { token: me()?.token, body: {} } : { body: { name: name.value } });
      if (joined.token) holdSeat(id, joined.seat, joined.token);
      location.hash = `match/${game}/${id}`;
    } catch (error) {
      message.textContent = problem(error);
    }
  }
  show(h("form", { onsubmit: join },
    h("h2", {}, t("Join a table of {game}, seat {n}", { game: GAMES[game]?.title ?? game, n: seat + 1 })),
    player ? h("p", {}, t("You take it as"), " ", h("strong", {}, player.name), ".") : h("label", {}, t("Your name"), " ", name),
    h("button", { type: "submit" }, t("Take the seat")), message,
    h("p", {}, h("a", { href: `#match/${game}/${id}` }, t("Watch instead")))));
}

// ---- The table ----

async function openTable(game, id) {
  const t = { game, id, held: seatsHeld(id), log: [], message: "", seq: 0 };
  if (player) {
    // Which seat is the player's: the public seats name their players. Read once, as a
    // spectator (with its token, a player who holds no seat here would be refused).
    const view = views;
    const seen = await call("GET", matchPath(game, id)).catch(() => null); // refresh says why
    if (view !== views) return;
    const mine = seen?.seats.find((s) => s.player === player.id);
    if (mine?.reserved) t.reserved = mine.seat; // a rematch seat kept for the player
    else if (mine) t.held[mine.seat] = ME;
  }
  table = t;
  const first = Object.keys(t.held).map(Number).sort((a, b) => (t.held[b] === ME) - (t.held[a] === ME))[0];
  const token = first === undefined ? undefined : tokenOf(t, first);
  let pending = null; // events come one by one: read the table once per burst
  t.stop = follow(game, id, token, (events) => {
    t.log.push(...events);
    pending ??= setTimeout(() => { pending = null; refresh(t); }, 40);
  });
  await refresh(t);
}

// A held seat's token: a seat token, or the player's (renewed in any tab: read when used).
const tokenOf = (t, seat) => (t.held[seat] === ME ? me()?.token : t.held[seat]);

// Which held seat we look through: one that must act, else the first.
function viewer(t, match) {
  const held = Object.keys(t.held).map(Number);
  return held.find((s) => match?.to_act.includes(s)) ?? held[0] ?? null;
}

async function refresh(t) {
  const seq = ++t.seq;
  try {
    // The match as the seat sees it, with what it may play now (?legal_actions=true).
    const read = (seat) => call("GET", `${matchPath(t.game, t.id)}?legal_actions=true`, { token: tokenOf(t, seat) });
    let seat = viewer(t, t.match);
    let match = await read(seat);
    if (viewer(t, match) !== seat) {
      seat = viewer(t, match);
      match = await read(seat);
    }
    // A newer refresh is under way, or an action is (its answer, or the read after it, draws
    // the table), or this read is older than the table drawn: the stream's events arrive a
    // little late, and a read they start may be served just before the seat's own action.
    if (seq !== t.seq || table !== t || t.acting || match.version < (t.match?.version ?? 0)) return;
    Object.assign(t, { match, legal: match.legal_actions || [], seat });
    render(t);
  } catch (error) {
    t.message = problem(error);
    if (table !== t) return;
    if (t.match) render(t);
    else show(h("p", { role: "alert" }, t.message), h("a", { href: "#", class: "button" }, tr("Back to the lobby")));
  }
}

// No If-Match: the server checks every action against the match as it is, and a stale
// click (another tab, the turn clock) is refused with its reason rather than played.
async function act(t, action) {
  t.message = "";
  t.legal = []; // nothing more to click until the table is read again,
  t.acting = true; // and no read meanwhile may bring back the old choices
  render(t);
  try {
    const match = await call("POST", `${matchPath(t.game, t.id)}/actions?legal_actions=true`,
      { token: tokenOf(t, t.seat), body: action });
    // The answer is the table after the move, with the seat's next choices.
    if (table !== t) return;
    if (viewer(t, match) === t.seat && match.version >= (t.match?.version ?? 0)) {
      Object.assign(t, { match, legal: match.legal_actions || [] });
      return render(t);
    }
  } catch (error) {
    t.message = problem(error);
  } finally {
    t.acting = false;
  }
  await refresh(t);
}

async function lifecycle(t, verb, seats = [t.seat]) {
  try {
    for (const seat of seats) {
      const answer = await call("POST", `${matchPath(t.game, t.id)}/${verb}`, { token: tokenOf(t, seat) });
      if (verb === "rematch" && answer.token) holdSeat(answer.id, answer.seat, answer.token); // a player's: none
      if (verb === "rematch" && seat === seats.at(-1)) location.hash = `match/${t.game}/${answer.id}`;
    }
  } catch (error) {
    t.message = problem(error);
  }
  await refresh(t);
}

const nameOf = (match, seat) => seatName(match.seats, seat);

function render(t) {
  const { match, seat } = t;
  remember(t);
  const module = GAMES[t.game];
  const board = match.view
    ? module.draw(match.view, {
        seat, legal: t.legal, act: (action) => act(t, action), name: (s) => nameOf(match, s), match,
        redraw: () => render(t), ...lately(t, match),
      })
    : h("p", {}, tr("The match starts when every seat is taken."));
  const openLinks = match.seats.filter((s) => s.open).map((s) => {
    const link = `${location.origin}${location.pathname}#join/${t.game}/${t.id}/${s.seat}`;
    return h("li", {}, tr("Seat {n} is open. Send this link to a friend:", { n: s.seat + 1 }), " ",
      h("a", { href: link, class: "seat-link" }, link));
  });
  const held = Object.keys(t.held).map(Number);
  // A rematch seat kept for the player: taken by accepting the rematch at the match before.
  const before = t.log.find((e) => e.type === "match_created")?.rematch_of;
  const awaits = t.reserved !== undefined && match.seats[t.reserved]?.reserved
    ? h("p", { class: "links" }, tr("Seat {n} of this rematch is kept for you:", { n: t.reserved + 1 }), " ",
      before ? h("a", { href: `#match/${t.game}/${before}` }, tr("accept it at the match before")) : tr("accept it at the match before"),
      ".")
    : null;
  show(
    h("h2", {}, `${module.title} `, h("small", {}, `${tr("table {id}", { id: t.id.slice(0, 8) })} · ${tr(MATCH_STATUS[match.status] ?? "finished")}`)),
    h("ul", { class: "players", "aria-label": tr("Players") }, match.seats.map((s) =>
      h("li", { class: match.to_act.includes(s.seat) ? "to-act" : "", "aria-current": match.to_act.includes(s.seat) && "true" },
        held.includes(s.seat) ? tr("{who} (you)", { who: nameOf(match, s.seat) }) : nameOf(match, s.seat),
        match.to_act.includes(s.seat) ? ` · ${tr("to play")}` : "",
        match.deadlines?.[s.seat] ? h("span", { class: "clock", "data-deadline": match.deadlines[s.seat] }) : null))),
    openLinks.length ? h("ul", { class: "links" }, openLinks) : null, awaits,
    h("p", { role: "alert", class: "message" }, t.message),
    h("div", { class: "layout" },
      h("section", { class: "board", "aria-label": tr("Table"), tabindex: "-1" }, board),
      h("section", { class: "log", "aria-label": tr("Event log") }, h("h3", {}, tr("Events")),
        h("ol", { "aria-live": "polite", tabindex: "0", id: "events" }, t.log.filter((e) => e.type !== "action").slice(-60).map((e) =>
          h("li", {}, sentence(t.game, e, (s) => nameOf(match, s))))))),
    outcome(t),
    h("p", { class: "controls" },
      match.status === "active" && held.length ? h("button", { onclick: () => lifecycle(t, "resign") }, tr("Resign")) : null,
      match.status === "active" && held.length ? h("button", { onclick: () => lifecycle(t, "abort") }, tr("Abort")) : null,
      match.status === "finished" && held.length
        ? h("button", { onclick: () => lifecycle(t, "rematch", held) }, tr(match.rematch ? "Accept the rematch" : "Rematch"))
        : null,
      h("a", { href: "#", class: "button" }, tr("Back to the lobby"))),
    h("p", { class: "proof" }, tr("Deal committed:"), " ",
      h("code", { title: match.seed_commitment || "" }, match.seed_commitment
        ? `${match.seed_commitment.slice(0, 8)}…${match.seed_commitment.slice(-4)}` : tr("no proof of the deal")),
      match.seeded ? ` ${tr("(practice deal: its creator chose the shuffle)")}` : ""),
  );
  tickClocks();
  main.querySelector(".log ol").scrollTop = 1e6; // the latest events in sight
  restore(t);
  keepMarks(main, t, () => table === t);
}

// For the games to mark what changed (.fresh, .slid) through the redraws that follow a
// change closely (the next seat's move, a pick): `before`, the view on screen FRESH_MS
// ago (null when it is the one now), and `earlier`, every view shown since, oldest first.
function lately(t, match) {
  const now = Date.now();
  const seen = t.seen ?? [];
  if (seen.at(-1)?.version !== match.version) seen.push({ version: match.version, view: match.view, at: now });
  const kept = seen.findLastIndex((e) => e.at <= now - FRESH_MS);
  t.seen = seen.slice(Math.max(kept, 0));
  const earlier = t.seen.slice(0, -1).map((e) => e.view);
  return { before: earlier[0] ?? null, earlier };
}

// A mark (.fresh, .slid) lasts FRESH_MS from when it was first drawn: a redraw neither
// restarts its animation (its delay runs on) nor prolongs it. `holder` keeps, by a key
// of its element, when each was first drawn, while `shown()` says it is on screen.
function keepMarks(root, holder, shown) {
  clearTimeout(holder.marking);
  if (!shown()) return;
  const now = Date.now();
  const marks = new Map();
  for (const node of root.querySelectorAll(".fresh, .slid")) {
    const key = [node.closest("[role=group]")?.getAttribute("aria-label"), node.getAttribute("aria-label"),
      node.getAttribute("class")].join("|");
    const start = holder.marks?.get(key) ?? now;
    marks.set(key, start);
    if (now - start >= FRESH_MS) node.classList.remove("fresh", "slid");
    else node.style.animationDelay = `${start - now}ms`;
  }
  holder.marks = marks;
  if (marks.size) holder.marking = setTimeout(() => keepMarks(root, holder, shown), 250);
}

// Focus across redraws: the table is drawn anew at each change, so the focused control is
// found again by its name (its aria-label, else its text); gone (played, or no longer
// legal), the focus goes where the game says (data-focus), else to the first legal move,
// else to the table itself: never lost to <body>.
const CONTROL = "button, a[href], input, select, textarea, [tabindex='0']";
let byKeys = false; // the last input was a key, not a pointer: a focus moved by a redraw may scroll
addEventListener("keydown", () => { byKeys = true; }, true);
addEventListener("pointerdown", () => { byKeys = false; }, true);
const nameOfControl = (node) => node.getAttribute("aria-label") || node.id || node.textContent.trim();

function remember(t) {
  const active = document.activeElement;
  if (active?.matches(CONTROL) && main.contains(active)) t.focus = nameOfControl(active);
  else if (active && active !== document.body && !main.contains(active)) t.focus = null; // elsewhere: left alone
}

function restore(t) {
  const active = document.activeElement;
  const lost = !active || active === document.body || !active.isConnected;
  const wanted = main.querySelector("[data-focus]");
  if (wanted) return wanted.focus({ preventScroll: !byKeys });
  if (!lost || !t.focus) return;
  const controls = [...main.querySelectorAll(CONTROL)].filter((n) => !n.disabled);
  const again = controls.find((n) => nameOfControl(n) === t.focus)
    ?? main.querySelector(".board .legal:not([disabled])") ?? main.querySelector(".board .spot")
    ?? main.querySelector(".board");
  again?.focus({ preventScroll: !byKeys });
}

function outcome(t) {
  const { match } = t;
  const o = match.outcome;
  if (!o) return null;
  const verdict = h("p", { class: "verdict" }, tr("Checking the deal…"));
  if (o.seed !== undefined && o.salt) {
    checkDeal(t.game, t.id).then(({ holds }) => {
      verdict.textContent = holds
        ? tr("Deal verified: the revealed seed and salt give the commitment shown from the start.")
        : tr("The revealed seed does NOT match the commitment!");
    }).catch(() => { verdict.textContent = tr("The deal could not be checked in this browser."); });
  } else verdict.textContent = tr("No seed revealed for this match.");
  return h("section", { class: "outcome", "aria-label": tr("Outcome") }, results(o, (s) => nameOf(match, s)),
    match.rated ? ratingChanges(t.log, (s) => nameOf(match, s)) : null, verdict, h("p", {}, h("a", { href: `#replay/${t.game}/${t.id}`, class: "button replay-link" }, tr("Replay this match")),
      " ", h("a", { href: `${matchPath(t.game, t.id)}/record` }, tr("The match's record"))));
}

// Who won, how it ended, the scores.
function results(o, name) {
  const winners = and(o.winners.map(name));
  // a game with no winner (Gaudí's children's game) reports what was built together
  const together = o.animals_completed !== undefined && !o.winners.length && !o.ended_by;
  return [
    h("h3", {}, winners ? t(o.winners.length === 1 ? "Over: {who} wins" : "Over: {who} win", { who: winners }) : t("Over: no winner")),
    o.ended_by ? h("p", {}, t(o.ended_by === "abort" ? "The match was called off." : "The match ended with a resignation.")) : null,
    together ? h("p", {}, t("Together: {animals} animals completed, {tiles} tiles laid.", { animals: o.animals_completed, tiles: o.tiles_laid })) : null,
    o.scores && !together ? h("ul", {}, o.scores.map((score, s) => h("li", {}, `${name(s)}: ${score}`))) : null,
  ];
}

// ---- A finished match, step by step (GET .../replay) ----

const KEYS = { ArrowLeft: "previous", ArrowRight: "next", Home: "first", End: "last" };
const LABELS = { first: ["« ", "First", ""], previous: ["‹ ", "Previous", ""], next: ["", "Next", " ›"], last: ["", "Last", " »"] };

async function showReplay(game, id) {
  const view = views;
  const module = GAMES[game];
  const back = h("a", { href: "#", class: "button" }, t("Back to the lobby"));
  const path = `${matchPath(game, id)}/replay`;
  const record = () => h("a", { href: `${matchPath(game, id)}/record` }, t("The match's record"));
  // The replay comes a page of PAGE steps at a time: steps[i] once its page is here.
  const steps = [];
  const pages = new Map(); // a page's first step -> its answer, on the way or here
  let replay;
  const load = (from) => {
    const start = from - (from % PAGE);
    if (!pages.has(start)) {
      const asked = call("GET", `${path}?from=${start}&limit=${PAGE}`).then((page) => {
        page.steps.forEach((step) => { steps[step.index] = step; });
        replay = { ...replay, ...page, hands: page.hands ?? replay?.hands };
        return page;
      });
      pages.set(start, asked);
      asked.catch(() => pages.delete(start)); // asked again when needed
    }
    return pages.get(start);
  };
  try {
    if (!module) throw new Error(`no game ${game}`);
    await load(0);
  } catch (error) {
    const code = error.problem?.code;
    const live = code === "match_not_over" && h("p", {}, t("Not over yet:"), " ",
      h("a", { href: `#match/${game}/${id}` }, t("watch it live")), ".");
    const long = code === "replay_too_long" && h("p", {},
      t("This match is too long to replay here, step by step."), " ", record(), " ",
      t("has every action: check it or replay it with ludotheque verify."));
    if (view === views) show(h("p", { role: "alert" }, problem(error)), live || long, back);
    return;
  }
  if (view !== views) return;
  const { seats } = replay;
  const last = replay.steps_total - 1;
  const name = (s) => nameOf({ seats }, s);
  let at = 0;
  let wanted = 0; // the step asked for last: a slow page never moves the replay elsewhere
  let shownStep = null; // the step drawn last
  const marking = {}; // the marks of what the step changed (keepMarks)
  const stage = h("div", {});
  const status = h("div", { role: "status", class: "step-text" });
  const note = h("p", { class: "hint", "aria-live": "polite" });
  const buttons = Object.fromEntries(["first", "previous", "next", "last"].map((move) => [move,
    h("button", { type: "button", onclick: () => go(move), "aria-keyshortcuts": Object.keys(KEYS).find((k) => KEYS[k] === move) },
      ...LABELS[move].map((text, i) => i === 1 ? t(text) : h("span", { "aria-hidden": "true" }, text)))]));

  async function go(move) {
    const to = { first: 0, previous: wanted - 1, next: wanted + 1, last }[move];
    if (to < 0 || to > last || to === wanted) return;
    wanted = to;
    if (!steps[to]) {
      note.textContent = t("Loading step {n}…", { n: to });
      try {
        await load(to);
      } catch (error) {
        if (view === views && wanted === to) {
          wanted = at;
          note.textContent = t("Step {n} did not load: {why}", { n: to, why: problem(error) });
        }
        return;
      }
      if (view !== views || wanted !== to) return;
      note.textContent = "";
    }
    at = to;
    draw();
  }

  function draw() {
    const step = steps[at];
    // aria-disabled rather than disabled: the focused button keeps its focus at either end
    for (const [move, button] of Object.entries(buttons)) {
      button.setAttribute("aria-disabled", String(move === "first" || move === "previous" ? at === 0 : at === last));
    }
    const said = at === 0 ? [t("The deal: the table as everyone saw it at the start.")]
      : step.events.map((event) => tell(game, event, name)).filter(Boolean);
    if (at > 0 && !said.length) said.push(t("{who} plays.", { who: name(step.seat) }));
    // a resignation or an abort: after this many actions, outside the rules
    for (const end of replay.endings.filter((e) => e.after === at)) {
      said.push(t(end.type === "resigned" ? "{who} resigns." : "{who} calls the match off.", { who: name(end.seat) }));
    }
    status.replaceChildren(h("p", { class: "counter" }, t("Step {n} of {last}", { n: at, last })),
      h("ul", { class: "said" }, said.map((text) => h("li", {}, text))));
    // one step on: what it changed is marked for a moment, as at a live table
    const before = shownStep === at - 1 ? steps[shownStep]?.view : null;
    shownStep = at;
    const board = module.draw(step.view, { seat: null, legal: [], act: () => {}, name, match: { seats }, redraw: () => {},
      before, earlier: before ? [before] : [] });
    stage.replaceChildren(
      h("section", { class: "board", "aria-label": t("Table") }, board),
      at === last ? h("section", { class: "hands", "aria-labelledby": "hands-title" },
        h("h3", { id: "hands-title" }, t("Every hand, revealed")),
        replay.hands.map((seen, s) => module.hand(seen, s, name))) : null,
      at === last ? h("section", { class: "outcome", "aria-label": t("Outcome") }, results(replay.outcome, name)) : null);
    keepMarks(stage, marking, () => stage.isConnected);
    // the next page, before the user steps onto it
    if (at + PREFETCH <= last && !steps[at + PREFETCH]) load(at + PREFETCH).catch(() => {});
  }

  const keys = (event) => {
    const move = KEYS[event.key];
    if (!move || event.altKey || event.ctrlKey || event.metaKey || event.target.closest("input, select, textarea")) return;
    event.preventDefault();
    go(move);
  };
  document.addEventListener("keydown", keys);
  table = { stop: () => document.removeEventListener("keydown", keys) };
  show(
    h("h2", {}, t("Replay: {game}", { game: module.title }), " ", h("small", {}, t("table {id}", { id: id.slice(0, 8) }))),
    h("ul", { class: "players", "aria-label": t("Players") }, seats.map((s) => h("li", {}, name(s.seat)))),
    h("nav", { class: "replay-controls", "aria-label": t("Steps") }, Object.values(buttons),
      h("span", { class: "hint" }, " ", t("or the arrow keys, Home and End"))),
    note, status, stage,
    h("p", { class: "controls" }, record(), " ", back));
  draw();
}

function tickClocks() {
  for (const clock of document.querySelectorAll(".clock")) {
    const left = Math.max(0, Math.round(Number(clock.dataset.deadline) - Date.now() / 1000));
    clock.textContent = ` · ${t("{time} left", { time: `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}` })}`;
  }
}

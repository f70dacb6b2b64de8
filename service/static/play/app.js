// The page: a lobby (#), a seat to take (#join/G/ID/SEAT), a table (#match/G/ID),
// a finished match replayed step by step (#replay/G/ID; #replay=G/ID works too), ranked play
// (quick play in the lobby, #leaderboard/G[/bots], #player/ID: ranked.js).
// This browser plays as a guest player, made on the first visit (api.js guest()); on a
// server that keeps no players, with a seat token for each seat, as before.
import { call, checkDeal, follow, guest, holdSeat, matchPath, me, seatsHeld } from "./api.js";
import { h } from "./dom.js";
import { leaderboard, playerPage, quickPlay, ratingChanges, stopWaiting } from "./ranked.js";
import * as dekal from "./games/dekal.js";
import * as ducale from "./games/ducale.js";
import * as gaudi from "./games/gaudi.js";
import * as pacal from "./games/pacal.js";

const GAMES = { dekal, pacal, gaudi, ducale };
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
window.addEventListener("ludotheque:player-lost", () => {
  if (Date.now() - lostAt < 5000) return; // once for a burst of refused answers
  lostAt = Date.now();
  notice = "Your guest key had ended (revoked or expired): this browser plays as a new guest now. ";
  route();
});
setInterval(tickClocks, 1000);
setInterval(() => guest(guestName()), 3600e3); // a tab left open renews the token too
route();

// The name a new guest gets: the one this browser gave its seats before, else "Guest 1234".
function guestName() {
  const kept = (localStorage.getItem("ludotheque:name") || "").trim().slice(0, 40).trim();
  return kept || `Guest ${String(Math.floor(Math.random() * 9000) + 1000)}`;
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
  return p ? `Refused (${p.code}): ${p.detail || p.title}` : `Network error: ${error.message}`;
}

// ---- The lobby: create a table, or join a listed one ----

async function showLobby() {
  const view = views;
  const { games } = await call("GET", "v1/games");
  if (view !== views) return;
  const gameSelect = h("select", { id: "game", onchange: () => drawSeats() },
    games.map((g) => h("option", { value: g.name }, GAMES[g.name].title)));
  const countSelect = h("select", { id: "count", onchange: () => drawSeats() });
  const seats = h("fieldset", { class: "seats" });
  const name = h("input", { id: "name", value: localStorage.getItem("ludotheque:name") || "Me" });
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
    seats.replaceChildren(h("legend", {}, "Seats"), ...Array.from({ length: count }, (_, i) =>
      h("label", {}, `Seat ${i + 1} `, h("select", { name: `seat${i}`, "data-seat": i },
        PLAYERS.map((p) => h("option", { value: p, selected: p === (i ? "greedy" : "you") },
          p === "you" ? "you" : p === "open" ? "open seat (a friend)" : `bot: ${p}`))))));
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
    const more = h("button", { type: "button", hidden: true }, "More tables");
    async function page(cursor) {
      const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
      const { matches, next } = await call("GET", `v1/games/${game().name}/matches${query}`);
      list.append(...matches.map((m) => h("li", {},
        `${m.players} seats: ${m.seats.map((s) => s.name || s.bot || "open").join(", ")} `,
        m.open_seats.map((seat) => h("a", { class: "button", href: `#join/${game().name}/${m.id}/${seat}` },
          `Join seat ${seat + 1}`)))));
      more.hidden = !next;
      more.onclick = () => page(next);
      if (!list.children.length && !next) list.replaceChildren(h("li", {}, "None right now."));
    }
    tables.replaceChildren(h("h2", { id: "tables-title" }, "Tables waiting for players"), list, more,
      h("button", { type: "button", onclick: listTables }, "Refresh"));
    await page(null);
  }

  const quick = player && quickPlay(games, (name) => GAMES[name]?.title ?? name);
  show(identity(), quick, mine, h("form", { onsubmit: create, "aria-labelledby": "new-title" },
    h("h2", { id: "new-title" }, "New table"),
    h("label", {}, "Game ", gameSelect), h("label", {}, "Players ", countSelect),
    player ? null : h("label", {}, "Your name ", name), seats, options,
    h("label", {}, listed, " List it in the lobby"),
    h("button", { type: "submit" }, "Create"), message), tables, replayForm(games));
  drawSeats();
  if (mine) myTables(mine, games);
}

// Who this browser plays as.
function identity() {
  if (!player) return null;
  const said = notice;
  notice = "";
  return h("p", { class: "identity", role: "status" }, said,
    "You play as ", h("strong", {}, player.name),
    ", a guest player: this browser keeps your key, so your tables go on in any tab and after a reload. ",
    h("a", { href: `#player/${player.id}` }, "Your ratings"), ".");
}

const STATUS = { waiting: "waiting for players", active: "in play", finished: "over" };

// The player's matches, newest first, a page at a time (GET /v1/players/me/matches).
async function myTables(section, games) {
  const view = views;
  const list = h("ul", { class: "my-tables" });
  const more = h("button", { type: "button", hidden: true }, "More of my tables");
  const note = h("p", { role: "status" });
  const title = (game) => GAMES[game]?.title ?? games.find((g) => g.name === game)?.name ?? game;
  const when = (moment) => new Date(moment).toLocaleString();
  const who = (m) => (Array.isArray(m.seats)
    ? m.seats.map((s, i) => ((s.seat ?? i) === m.seat ? "you" : s.name || (s.bot ? `${s.bot} bot` : "open seat"))).join(", ")
    : "");
  async function page(cursor) {
    const query = cursor ? `?cursor=${encodeURIComponent(cursor)}` : "";
    let answer;
    try {
      answer = await call("GET", `v1/players/me/matches${query}`, { token: me()?.token });
    } catch (error) {
      if (view === views) note.textContent = `Your tables could not be listed. ${problem(error)}`;
      return;
    }
    if (view !== views) return;
    const { items, next } = answer;
    list.append(...items.map((m) => {
      const name = `${title(m.game)} table ${m.id.slice(0, 8)}`;
      const open = (text, where) => h("a", { class: "button", href: `#${where}/${m.game}/${m.id}`,
        "aria-label": `${text}: ${name}` }, text);
      return h("li", {},
        h("strong", {}, title(m.game)), ` table ${m.id.slice(0, 8)} · ${STATUS[m.status] ?? m.status}`,
        m.status === "finished" && m.ended_at ? ` · ended ${when(m.ended_at)}` : m.created_at ? ` · made ${when(m.created_at)}` : "",
        who(m) ? ` · ${who(m)} ` : " ",
        m.status === "finished"
          ? [open("Replay", "replay"), open("The end", "match")]
          : open(m.status === "waiting" ? "Open" : "Continue", "match"));
    }));
    more.hidden = !next;
    more.onclick = () => page(next);
    if (!list.children.length && !next) list.replaceChildren(h("li", {}, "None yet: create a table or join one."));
  }
  section.replaceChildren(h("h2", { id: "mine-title" }, "My tables"), list, more, note,
    h("button", { type: "button", onclick: () => myTables(section, games) }, "Refresh my tables"));
  await page(null);
}

// Any finished match, from its id (or a link that holds it).
function replayForm(games) {
  const game = h("select", { id: "replay-game" }, games.map((g) => h("option", { value: g.name }, GAMES[g.name].title)));
  const id = h("input", { id: "replay-id", required: true, autocomplete: "off", spellcheck: "false",
    placeholder: "the match's id" });
  const open = (event) => {
    event.preventDefault();
    const text = id.value.trim();
    location.hash = `replay/${game.value}/${text.match(/[0-9a-f]{32}/)?.[0] ?? encodeURIComponent(text)}`;
  };
  return h("form", { onsubmit: open, "aria-labelledby": "replay-title" },
    h("h2", { id: "replay-title" }, "Replay a match"),
    h("label", {}, "Game ", game), h("label", {}, "Match id ", id),
    h("button", { type: "submit" }, "Replay"));
}

// A field for each simple option of the game's JSON Schema (GET /v1/games); empty: the default.
function drawOptions(schema, fieldset) {
  const fields = Object.entries(schema.properties || {}).map(([key, p]) => {
    const label = key.replaceAll("_", " ");
    const types = [p.type].flat();
    let field;
    if (types.includes("boolean")) field = h("input", { type: "checkbox", name: key, checked: p.default === true });
    else if (p.enum) field = h("select", { name: key, "data-number": typeof p.enum[0] === "number" && "1" }, h("option", { value: "" }, `default (${p.default ?? "none"})`),
      p.enum.filter((v) => v !== null).map((v) => h("option", { value: v }, String(v))));
    else if (types.includes("integer")) field = h("input", { type: "number", name: key, "data-number": "1", min: p.minimum, max: p.maximum,
      placeholder: `default: ${p.default ?? "none"}` });
    else return null;
    return h("label", { title: p.description || "" }, `${label} `, field);
  }).filter(Boolean);
  fieldset.replaceChildren(h("legend", {}, "Options"), ...fields);
}

// ---- A seat link: a friend takes the open seat ----

function showJoin(game, id, seat) {
  const name = h("input", { id: "name", value: localStorage.getItem("ludotheque:name") || "Friend" });
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
    h("h2", {}, `Join a table of ${GAMES[game].title}, seat ${seat + 1}`),
    player ? h("p", {}, "You take it as ", h("strong", {}, player.name), ".") : h("label", {}, "Your name ", name),
    h("button", { type: "submit" }, "Take the seat"), message,
    h("p", {}, h("a", { href: `#match/${game}/${id}` }, "Watch instead"))));
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
    else show(h("p", { role: "alert" }, t.message), h("a", { href: "#", class: "button" }, "Back to the lobby"));
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

const nameOf = (match, seat) => {
  const s = match.seats[seat];
  return s ? s.name || (s.bot ? `${s.bot} bot` : `seat ${seat + 1}`) : `seat ${seat + 1}`;
};

function render(t) {
  const { match, seat } = t;
  remember(t);
  const module = GAMES[t.game];
  const board = match.view
    ? module.draw(match.view, {
        seat, legal: t.legal, act: (action) => act(t, action), name: (s) => nameOf(match, s), match,
        redraw: () => render(t), ...lately(t, match),
      })
    : h("p", {}, "The match starts when every seat is taken.");
  const openLinks = match.seats.filter((s) => s.open).map((s) => {
    const link = `${location.origin}${location.pathname}#join/${t.game}/${t.id}/${s.seat}`;
    return h("li", {}, `Seat ${s.seat + 1} is open. Send this link to a friend: `,
      h("a", { href: link, class: "seat-link" }, link));
  });
  const held = Object.keys(t.held).map(Number);
  // A rematch seat kept for the player: taken by accepting the rematch at the match before.
  const before = t.log.find((e) => e.type === "match_created")?.rematch_of;
  const awaits = t.reserved !== undefined && match.seats[t.reserved]?.reserved
    ? h("p", { class: "links" }, `Seat ${t.reserved + 1} of this rematch is kept for you: `,
      before ? h("a", { href: `#match/${t.game}/${before}` }, "accept it at the match before") : "accept it at the match before",
      ".")
    : null;
  show(
    h("h2", {}, `${module.title} `, h("small", {}, `table ${t.id.slice(0, 8)} · ${match.status}`)),
    h("ul", { class: "players", "aria-label": "Players" }, match.seats.map((s) =>
      h("li", { class: match.to_act.includes(s.seat) ? "to-act" : "", "aria-current": match.to_act.includes(s.seat) && "true" },
        `${nameOf(match, s.seat)}${held.includes(s.seat) ? " (you)" : ""}`,
        match.to_act.includes(s.seat) ? " · to play" : "",
        match.deadlines?.[s.seat] ? h("span", { class: "clock", "data-deadline": match.deadlines[s.seat] }) : null))),
    openLinks.length ? h("ul", { class: "links" }, openLinks) : null, awaits,
    h("p", { role: "alert", class: "message" }, t.message),
    h("div", { class: "layout" },
      h("section", { class: "board", "aria-label": "Table", tabindex: "-1" }, board),
      h("section", { class: "log", "aria-label": "Event log" }, h("h3", {}, "Events"),
        h("ol", { "aria-live": "polite", tabindex: "0", id: "events" }, t.log.filter((e) => e.type !== "action").slice(-60).map((e) => h("li", {}, describe(match, e)))))),
    outcome(t),
    h("p", { class: "controls" },
      match.status === "active" && held.length ? h("button", { onclick: () => lifecycle(t, "resign") }, "Resign") : null,
      match.status === "active" && held.length ? h("button", { onclick: () => lifecycle(t, "abort") }, "Abort") : null,
      match.status === "finished" && held.length
        ? h("button", { onclick: () => lifecycle(t, "rematch", held) }, match.rematch ? "Accept the rematch" : "Rematch")
        : null,
      h("a", { href: "#", class: "button" }, "Back to the lobby")),
    h("p", { class: "proof" }, "Deal committed: ",
      h("code", { title: match.seed_commitment || "" }, match.seed_commitment
        ? `${match.seed_commitment.slice(0, 8)}…${match.seed_commitment.slice(-4)}` : "no proof of the deal"),
      match.seeded ? " (practice deal: its creator chose the shuffle)" : ""),
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
  const verdict = h("p", { class: "verdict" }, "Checking the deal…");
  if (o.seed !== undefined && o.salt) {
    checkDeal(t.game, t.id).then(({ holds }) => {
      verdict.textContent = holds
        ? "Deal verified: the revealed seed and salt give the commitment shown from the start."
        : "The revealed seed does NOT match the commitment!";
    }).catch(() => { verdict.textContent = "The deal could not be checked in this browser."; });
  } else verdict.textContent = "No seed revealed for this match.";
  return h("section", { class: "outcome", "aria-label": "Outcome" }, results(o, (s) => nameOf(match, s)),
    match.rated ? ratingChanges(t.log, (s) => nameOf(match, s)) : null, verdict, h("p", {}, h("a", { href: `#replay/${t.game}/${t.id}`, class: "button replay-link" }, "Replay this match"),
      " ", h("a", { href: `${matchPath(t.game, t.id)}/record` }, "The match's record")));
}

// Who won, how it ended, the scores.
function results(o, name) {
  const winners = o.winners.map(name).join(" and ");
  // a game with no winner (Gaudí's children's game) reports what was built together
  const together = o.animals_completed !== undefined && !o.winners.length && !o.ended_by;
  return [
    h("h3", {}, winners ? `Over: ${winners} ${o.winners.length === 1 ? "wins" : "win"}` : "Over: no winner"),
    o.ended_by ? h("p", {}, `Ended by ${o.ended_by}.`) : null,
    together ? h("p", {}, `Together: ${o.animals_completed} animals completed, ${o.tiles_laid} tiles laid.`) : null,
    o.scores && !together ? h("ul", {}, o.scores.map((score, s) => h("li", {}, `${name(s)}: ${score}`))) : null,
  ];
}

function describe(match, event) {
  // The match, its seats and commitment are shown above the table already.
  const { index, version, type, seat, seats, seed_commitment: commitment, match: _, game, ...rest } = event;
  const who = seat !== undefined ? `${nameOf(match, seat)}: ` : "";
  const details = Object.entries(rest).map(([k, v]) => {
    const text = typeof v === "object" ? JSON.stringify(v) : String(v);
    return `${k.replaceAll("_", " ")} ${text.length > 40 ? `${text.slice(0, 39)}…` : text}`;
  });
  return `${who}${type.replaceAll("_", " ")}${details.length ? ` (${details.join(", ")})` : ""}`;
}

// ---- A finished match, step by step (GET .../replay) ----

const KEYS = { ArrowLeft: "previous", ArrowRight: "next", Home: "first", End: "last" };
const LABELS = { first: ["« ", "First", ""], previous: ["‹ ", "Previous", ""], next: ["", "Next", " ›"], last: ["", "Last", " »"] };

async function showReplay(game, id) {
  const view = views;
  const module = GAMES[game];
  const back = h("a", { href: "#", class: "button" }, "Back to the lobby");
  const path = `${matchPath(game, id)}/replay`;
  const record = () => h("a", { href: `${matchPath(game, id)}/record` }, "The match's record");
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
    const live = code === "match_not_over" && h("p", {}, "Not over yet: ",
      h("a", { href: `#match/${game}/${id}` }, "watch it live"), ".");
    const long = code === "replay_too_long" && h("p", {},
      "This match is too long to replay here, step by step. ", record(),
      " has every action: check it or replay it with ludotheque verify.");
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
      ...LABELS[move].map((text, i) => i === 1 ? text : h("span", { "aria-hidden": "true" }, text)))]));

  async function go(move) {
    const to = { first: 0, previous: wanted - 1, next: wanted + 1, last }[move];
    if (to < 0 || to > last || to === wanted) return;
    wanted = to;
    if (!steps[to]) {
      note.textContent = `Loading step ${to}…`;
      try {
        await load(to);
      } catch (error) {
        if (view === views && wanted === to) {
          wanted = at;
          note.textContent = `Step ${to} did not load: ${problem(error)}`;
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
    const said = at === 0 ? ["The deal: the table as everyone saw it at the start."]
      : step.events.map((event) => tell(module, event, name)).filter(Boolean);
    if (at > 0 && !said.length) said.push(`${name(step.seat)} played.`);
    // a resignation or an abort: after this many actions, outside the rules
    for (const end of replay.endings.filter((e) => e.after === at)) {
      said.push(end.type === "resigned" ? `${name(end.seat)} resigned.` : `${name(end.seat)} called the match off.`);
    }
    status.replaceChildren(h("p", { class: "counter" }, `Step ${at} of ${last}`),
      h("ul", { class: "said" }, said.map((text) => h("li", {}, text))));
    // one step on: what it changed is marked for a moment, as at a live table
    const before = shownStep === at - 1 ? steps[shownStep]?.view : null;
    shownStep = at;
    const board = module.draw(step.view, { seat: null, legal: [], act: () => {}, name, match: { seats }, redraw: () => {},
      before, earlier: before ? [before] : [] });
    stage.replaceChildren(
      h("section", { class: "board", "aria-label": "Table" }, board),
      at === last ? h("section", { class: "hands", "aria-labelledby": "hands-title" },
        h("h3", { id: "hands-title" }, "Every hand, revealed"),
        replay.hands.map((seen, s) => module.hand(seen, s, name))) : null,
      at === last ? h("section", { class: "outcome", "aria-label": "Outcome" }, results(replay.outcome, name)) : null);
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
    h("h2", {}, `Replay: ${module.title} `, h("small", {}, `table ${id.slice(0, 8)}`)),
    h("ul", { class: "players", "aria-label": "Players" }, seats.map((s) => h("li", {}, name(s.seat)))),
    h("nav", { class: "replay-controls", "aria-label": "Steps" }, Object.values(buttons),
      h("span", { class: "hint" }, " or the arrow keys, Home and End")),
    note, status, stage,
    h("p", { class: "controls" }, record(), " ", back));
  draw();
}

// One public event in words: the game's own sentence, else the service's, else its type.
function tell(module, event, name) {
  const said = module.tell(event, name);
  if (said) return said;
  const who = Number.isInteger(event.seat) ? `${name(event.seat)} ` : "";
  if (event.type === "match_over") {
    const winners = (event.winners || []).map(name).join(" and ");
    return winners ? `The match is over: ${winners} ${event.winners.length === 1 ? "wins" : "win"}.` : "The match is over.";
  }
  return `${who}${event.type.replaceAll("_", " ")}.`;
}

function tickClocks() {
  for (const clock of document.querySelectorAll(".clock")) {
    const left = Math.max(0, Math.round(Number(clock.dataset.deadline) - Date.now() / 1000));
    clock.textContent = ` · ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} left`;
  }
}

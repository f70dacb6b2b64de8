// Ranked play: quick play (the queue), the leaderboards (#leaderboard/G, #leaderboard/G/bots)
// and a player's page with its rating history drawn (#player/ID). Needs a player (api.js guest()).
import { call, me } from "./api.js";
import { h } from "./dom.js";
import { date, language, t, tn } from "./i18n.js";

const WAIT_S = 25; // a ticket's long poll; each one also keeps the ticket alive
let ticket = null; // this tab's ticket: { id, game, stop }, while it waits

const said = (error) => {
  const p = error.problem;
  if (!p) return t("Network error: {message}", { message: error.message });
  return language() === "en" ? t("Refused ({code}): {detail}", { code: p.code, detail: p.detail || p.title })
    : t("Refused: {detail}", { detail: t(REFUSALS[p.code] ?? "the server refused.") });
};
const REFUSALS = {
  already_queued: "you are in the queue already.",
  invalid_token: "your key is not valid any more.",
  player_not_found: "there is no such player.",
  ticket_not_found: "this place in the queue is gone.",
  game_not_found: "there is no such game.",
  invalid_request: "the request is not valid.",
};

// A "Quick play" button per game (with its presets), or the ticket waiting.
export function quickPlay(games, titleOf) {
  const section = h("section", { class: "quick-play", "aria-labelledby": "quick-title" });
  const status = h("p", { role: "status", class: "queue-status" });
  const message = h("p", { role: "alert" });

  async function join(game, preset) {
    message.textContent = "";
    try {
      const found = await call("POST", `v1/games/${game}/queue`, { token: me()?.token, body: { preset } });
      wait(found);
    } catch (error) {
      const existing = error.problem?.ticket;
      if (error.problem?.code === "already_queued" && existing) wait({ id: existing, game, status: "waiting" });
      else message.textContent = said(error);
    }
  }

  function wait(found) {
    ticket?.stop();
    let stopped = false;
    ticket = { id: found.id, game: found.game, stop: () => { stopped = true; } };
    const leave = h("button", { type: "button", onclick: () => {
      stopWaiting();
      draw();
    } }, t("Leave the queue"));
    const started = Date.now();
    const tick = () => {
      status.textContent = t("Looking for opponents for {game}… {s} s", { game: titleOf(found.game), s: Math.round((Date.now() - started) / 1000) });
    };
    tick();
    const timer = setInterval(tick, 1000);
    section.replaceChildren(h("h2", { id: "quick-title" }, t("Quick play")), status, leave, message);
    (async () => {
      let current = found;
      while (!stopped && current.status === "waiting") {
        try {
          current = await call("GET", `v1/queue/tickets/${found.id}?wait=${WAIT_S}`, { token: me()?.token });
        } catch (error) {
          message.textContent = said(error);
          break;
        }
      }
      clearInterval(timer);
      if (stopped) return;
      ticket = null;
      if (current.status === "matched" && current.match) {
        location.hash = `match/${found.game}/${current.match.id}`;
      } else {
        draw();
        message.textContent = current.status === "expired"
          ? t("Your place in the queue expired. Press quick play again.")
          : message.textContent;
      }
    })();
  }

  async function draw() {
    const rows = await Promise.all(games.map(async (g) => {
      const presets = await call("GET", `v1/games/${g.name}/queue`).then((q) => q.presets).catch(() => []);
      if (!presets.length) return null;
      const choice = h("select", { "aria-label": t("Players for {game}", { game: titleOf(g.name) }) },
        presets.map((p) => h("option", { value: p.name }, p.waiting
          ? t("{n} players ({waiting} waiting)", { n: p.players, waiting: p.waiting }) : t("{n} players", { n: p.players }))));
      return h("li", {}, h("button", { type: "button", class: "quick", onclick: () => join(g.name, choice.value) },
        t("Quick play {game}", { game: titleOf(g.name) })), " ", choice, " ",
        h("a", { href: `#leaderboard/${g.name}` }, t("Leaderboard")));
    }));
    section.replaceChildren(h("h2", { id: "quick-title" }, t("Quick play")),
      h("p", {}, t("Be matched with players of your strength; the match is rated.")),
      h("ul", { class: "quick-list" }, rows.filter(Boolean)), message);
  }

  draw();
  return section;
}

// Leave the queue (the page moves on): a ticket nobody watches would be matched for nothing.
export function stopWaiting() {
  if (!ticket) return;
  ticket.stop();
  call("DELETE", `v1/queue/tickets/${ticket.id}`, { token: me()?.token }).catch(() => null);
  ticket = null;
}

const shownRating = (r) => `${r.rating}${r.provisional ? "?" : ""}`;

// #leaderboard/G (everyone) and #leaderboard/G/bots (bot accounts only).
export async function leaderboard(show, game, kind, titleOf) {
  const bots = kind === "bots";
  const base = `v1/games/${game}/leaderboard${bots ? "?bots=only" : "?"}`;
  const body = h("tbody", {});
  const more = h("button", { type: "button", hidden: true }, t("More"));
  const note = h("p", { role: "status" });
  const row = (e) => h("tr", { class: e.player === me()?.id ? "me" : "" },
    h("td", {}, String(e.rank)),
    h("td", {}, h("a", { href: `#player/${e.player}` }, e.name), e.bot ? ` ${t("(bot)")}` : ""),
    h("td", {}, shownRating(e)), h("td", {}, String(e.matches)));
  async function page(after) {
    try {
      const answer = await call("GET", `${base}${after ? `&after=${after}` : ""}`);
      body.append(...answer.entries.map(row));
      more.hidden = !answer.next;
      more.onclick = () => page(answer.next);
      if (!body.children.length) note.textContent = t("Nobody is listed yet: a player is listed after a few rated matches.");
    } catch (error) {
      note.textContent = said(error);
    }
  }
  async function aroundMe() {
    try {
      const answer = await call("GET", `${base}&around=me`, { token: me()?.token });
      body.replaceChildren(...answer.entries.map(row));
      more.hidden = true;
      note.textContent = "";
    } catch (error) {
      note.textContent = said(error);
    }
  }
  show(h("h2", {}, t(bots ? "{game}: bots' leaderboard" : "{game}: leaderboard", { game: titleOf(game) })),
    h("p", {}, h("a", { href: `#leaderboard/${game}${bots ? "" : "/bots"}` }, t(bots ? "Everyone" : "Bots only")),
      " · ", h("button", { type: "button", onclick: aroundMe }, t("Around me")),
      " · ", h("a", { href: "#" }, t("Back to the lobby"))),
    h("table", { class: "board-table" }, h("caption", {}, t("A rating with ? is provisional: too few matches to be sure.")),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("Rank")), h("th", { scope: "col" }, t("Player")),
        h("th", { scope: "col" }, t("Rating")), h("th", { scope: "col" }, t("Rated matches")))), body),
    more, note);
  await page(null);
}

// #player/ID: its profile, and per game its rating over its rated matches (the last 100).
export async function playerPage(show, id, titleOf) {
  let profile;
  let history;
  try {
    [profile, history] = await Promise.all([call("GET", `v1/players/${id}`), call("GET", `v1/players/${id}/ratings?limit=100`)]);
  } catch (error) {
    show(h("p", { role: "alert" }, said(error)), h("a", { href: "#", class: "button" }, t("Back to the lobby")));
    return;
  }
  const games = Object.entries(history.ratings);
  show(h("h2", {}, profile.name, profile.bot ? ` ${t("(bot)")}` : ""),
    h("p", {}, t("Player since {when}.", { when: date(profile.created_at) })),
    games.length ? null : h("p", {}, t("No rated match yet.")),
    ...games.map(([game, now]) => h("section", { class: "rating", "aria-label": t("{game} rating", { game: titleOf(game) }) },
      h("h3", {}, tn(now.matches, now.provisional ? "{game}: {rating} (provisional) after {n} rated match" : "{game}: {rating} after {n} rated match",
        now.provisional ? "{game}: {rating} (provisional) after {n} rated matches" : "{game}: {rating} after {n} rated matches",
        { game: titleOf(game), rating: now.rating })),
      chart(history.changes.filter((c) => c.game === game)),
      h("p", {}, h("a", { href: `#leaderboard/${game}` }, t("Leaderboard"))))),
    h("a", { href: "#", class: "button" }, t("Back to the lobby")));
}

// The rating after each change, oldest first, as a line (SVG, no library).
function chart(history) {
  const points = [...history].reverse().map((c) => c.after.rating);
  if (history.length) points.unshift(history.at(-1).before.rating); // where it started
  if (points.length < 1) return null;
  const [w, hgt, pad] = [320, 120, 8];
  const lo = Math.min(...points);
  const hi = Math.max(...points);
  const x = (i) => pad + (points.length === 1 ? 0 : (i * (w - 2 * pad)) / (points.length - 1));
  const y = (v) => hgt - pad - (hi === lo ? (hgt - 2 * pad) / 2 : ((v - lo) * (hgt - 2 * pad)) / (hi - lo));
  const label = tn(history.length, "Rating from {from} to {to} over {n} rated match (lowest {lo}, highest {hi})",
    "Rating from {from} to {to} over {n} rated matches (lowest {lo}, highest {hi})", { from: points[0], to: points.at(-1), lo, hi });
  return h("svg", { class: "chart", viewBox: `0 0 ${w} ${hgt}`, role: "img", "aria-label": label },
    h("polyline", { points: points.map((v, i) => `${x(i)},${y(v)}`).join(" "), fill: "none", stroke: "currentColor", "stroke-width": 2 }),
    ...points.map((v, i) => h("circle", { cx: x(i), cy: y(v), r: 3 })));
}

// Under a rated match's result: each seat's rating before and after (the match_over event).
export function ratingChanges(log, name) {
  const over = log.find((e) => e.type === "match_over" && e.ratings);
  if (!over) return null;
  return h("ul", { class: "rating-changes", "aria-label": t("Rating changes") }, over.ratings.map((r) => {
    const delta = r.after.rating - r.before.rating;
    return h("li", {}, `${name(r.seat)}: ${shownRating(r.before)} → ${shownRating(r.after)} (${delta >= 0 ? "+" : ""}${delta})`);
  }));
}

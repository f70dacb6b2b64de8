// The public API, as any page may call it: fetch, JSON, problem+json errors.
// Tokens live in localStorage for this origin, never in a URL.

const base = new URL(".", location.href); // /play -> the service's root

export class Refused extends Error {
  constructor(problem, retryAfter = null) {
    super(problem.detail || problem.title || problem.code);
    this.problem = problem;
    this.retryAfter = retryAfter; // seconds, when the answer said (Retry-After)
  }
}

export const isPlayerToken = (token) => typeof token === "string" && token.startsWith("ldq_player_");

export async function call(method, path, { token, body } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const answer = await fetch(new URL(path, base), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = answer.status === 204 ? null : await answer.json();
  if (!answer.ok) {
    // A player token the server no longer knows (revoked, expired): this browser forgets it
    // and the page makes a new guest (app.js listens for "ludotheque:player-lost").
    if (answer.status === 401 && data?.code === "invalid_token" && isPlayerToken(token)) lost(token);
    throw new Refused(data, Number(answer.headers.get("Retry-After")) || null);
  }
  return data;
}

// ---- The player: a guest made on the first visit, its token kept in this browser ----
// {id, name, token, token_expires_at, token_received_at} under ludotheque:player; the token
// acts for every seat the player holds (in every tab, after a reload, on another device
// with another token of the same player), so no seat token is kept for those seats.
const PLAYER = "ludotheque:player";
const NO_PLAYERS = "ludotheque:no-players-until"; // a server without a database said so
const DAY = 86400e3;

export function me() {
  try {
    const found = JSON.parse(localStorage.getItem(PLAYER));
    return found?.token && found.id ? found : null;
  } catch {
    return null;
  }
}

function lost(token) {
  if (me()?.token !== token) return; // another tab has renewed or replaced it already
  localStorage.removeItem(PLAYER);
  dispatchEvent(new Event("ludotheque:player-lost"));
}

// Renew when less than a week is left, or less than half of what was left when this
// browser got the token (a server that gives tokens a short life).
function nearExpiry(player) {
  const expires = Date.parse(player.token_expires_at);
  const lifetime = expires - (player.token_received_at ?? expires);
  return expires - Date.now() < Math.min(7 * DAY, lifetime / 2);
}

// One tab at a time makes or renews the player (two tabs opened together make one guest).
const alone = (task) => (navigator.locks ? navigator.locks.request(PLAYER, task) : task());

// The player of this browser: made now on the first visit (named defaultName), its token
// renewed when near its end; null on a server that keeps no players (503
// players_unavailable: seat tokens then, as before, and no new try before Retry-After)
// or when it cannot be had just now (the next view tries again).
export function guest(defaultName) {
  return alone(async () => {
    let player = me();
    if (player && !(Date.parse(player.token_expires_at) > Date.now())) player = null; // expired
    if (player && nearExpiry(player)) {
      try {
        const renewed = await call("POST", "v1/players/me/tokens", { token: player.token });
        player = { ...player, ...renewed, token_received_at: Date.now() };
        localStorage.setItem(PLAYER, JSON.stringify(player));
      } catch {
        player = me(); // refused: forgotten if its token is dead; else kept until its end
      }
    }
    if (player) return player;
    if (Number(localStorage.getItem(NO_PLAYERS)) > Date.now()) return null;
    try {
      const made = await call("POST", "v1/players", { body: { name: defaultName } });
      player = {
        id: made.id, name: made.name, token: made.token, token_expires_at: made.token_expires_at,
        token_received_at: Date.now(),
      };
      localStorage.setItem(PLAYER, JSON.stringify(player));
      localStorage.removeItem(NO_PLAYERS);
      return player;
    } catch (error) {
      if (error.problem?.code === "players_unavailable") {
        localStorage.setItem(NO_PLAYERS, String(Date.now() + (error.retryAfter || 3600) * 1000));
      }
      return null;
    }
  });
}

export const matchPath = (game, id) => `v1/games/${game}/matches/${id}`;

// { seat: token } of the seats this browser holds in a match.
export function seatsHeld(id) {
  return JSON.parse(localStorage.getItem(`ludotheque:${id}`) || "{}");
}

export function holdSeat(id, seat, token) {
  localStorage.setItem(`ludotheque:${id}`, JSON.stringify({ ...seatsHeld(id), [seat]: token }));
}

// Follow a match's events: calls onEvents(list) for each batch, from the start; returns stop().
// One EventSource for the page, through a ticket (EventSource sends no Authorization header,
// and a token never goes in a URL): POST /v1/stream-tickets with a seat's token in the body,
// or, for a player token (which that body does not take), the match's own
// POST .../stream-tickets with the token in the Authorization header.
// The stream ends at match_over; then the long poll (with the header) goes on, for the
// rematch offer that comes after it. Any trouble with the stream falls back to the long poll.
export function follow(game, id, token, onEvents) {
  const stop = new AbortController();
  let after = 0;
  let source = null;
  const take = (events) => {
    after = events.at(-1).index;
    onEvents(events);
  };
  const poll = async () => {
    source?.close();
    while (!stop.signal.aborted) {
      try {
        const headers = token ? { Authorization: `Bearer ${token}` } : {};
        const url = new URL(`${matchPath(game, id)}/events?after=${after}&wait=25`, base);
        const answer = await fetch(url, { headers, signal: stop.signal });
        if ([401, 403, 404].includes(answer.status)) return; // gone, not ours, or a dead token
        if (!answer.ok) throw new Error(answer.status);
        const page = await answer.json();
        if (page.events.length) take(page.events);
        after = page.next;
      } catch {
        if (!stop.signal.aborted) await new Promise((wake) => setTimeout(wake, 2000));
      }
    }
  };
  const asked = isPlayerToken(token)
    ? call("POST", `${matchPath(game, id)}/stream-tickets`, { token })
    : call("POST", "v1/stream-tickets", { body: { matches: [{ game, match: id, ...(token && { token }) }] } });
  asked
    .then((ticket) => {
      if (stop.signal.aborted) return;
      source = new EventSource(new URL(ticket.stream.replace(/^\//, ""), base));
      source.onmessage = (message) => {
        const event = JSON.parse(message.data);
        take([event]);
        if (event.type === "match_over") poll();
      };
      source.onerror = () => source.readyState === EventSource.CLOSED && poll();
    })
    .catch(() => !stop.signal.aborted && poll());
  stop.signal.addEventListener("abort", () => source?.close());
  return () => stop.abort();
}

// The deal's proof (docs/clients/fairness.md): SHA-256(seed as 8 bytes big-endian || salt).
export async function checkDeal(game, id) {
  const text = await (await fetch(new URL(`${matchPath(game, id)}/record`, base))).text();
  const record = JSON.parse(text);
  const bytes = new Uint8Array(40);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(text.match(/"seed":\s*(\d+)/)[1]));
  bytes.set(record.salt.match(/../g).map((pair) => parseInt(pair, 16)), 8);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { holds: hex === record.seed_commitment, record };
}

// The public API, as any page may call it: fetch, JSON, problem+json errors.
// Tokens live in localStorage for this origin, never in a URL.

const base = new URL(".", location.href); // /play -> the service's root

export class Refused extends Error {
  constructor(problem) {
    super(problem.detail || problem.title || problem.code);
    this.problem = problem;
  }
}

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
  if (!answer.ok) throw new Refused(data);
  return data;
}

export const matchPath = (game, id) => `v1/games/${game}/matches/${id}`;

// { seat: token } of the seats this browser holds in a match.
export function seatsHeld(id) {
  return JSON.parse(localStorage.getItem(`ludotheque:${id}`) || "{}");
}

export function holdSeat(id, seat, token) {
  localStorage.setItem(`ludotheque:${id}`, JSON.stringify({ ...seatsHeld(id), [seat]: token }));
}

// Follow a match's events: calls onEvents(list) for each batch, from `after` on.
// Long poll with the Authorization header (a seat's own view); returns stop().
export function follow(game, id, token, after, onEvents) {
  const stop = new AbortController();
  (async () => {
    while (!stop.signal.aborted) {
      try {
        const headers = token ? { Authorization: `Bearer ${token}` } : {};
        const url = new URL(`${matchPath(game, id)}/events?after=${after}&wait=25`, base);
        const answer = await fetch(url, { headers, signal: stop.signal });
        if (answer.status === 404 || answer.status === 403) return; // gone, or not ours: stop
        if (!answer.ok) throw new Error(answer.status);
        const page = await answer.json();
        after = page.next;
        if (page.events.length) onEvents(page.events);
      } catch {
        if (!stop.signal.aborted) await new Promise((wake) => setTimeout(wake, 2000));
      }
    }
  })();
  return () => stop.abort();
}

// The deal's proof (docs/fairness.md): SHA-256(seed as 8 bytes big-endian || salt).
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

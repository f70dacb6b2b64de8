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

// Follow a match's events: calls onEvents(list) for each batch, from the start; returns stop().
// One EventSource for the page, through a ticket (EventSource sends no Authorization header,
// and a token never goes in a URL): POST /v1/stream-tickets with the token in the body.
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
        if (answer.status === 404 || answer.status === 403) return; // gone, or not ours: stop
        if (!answer.ok) throw new Error(answer.status);
        const page = await answer.json();
        if (page.events.length) take(page.events);
        after = page.next;
      } catch {
        if (!stop.signal.aborted) await new Promise((wake) => setTimeout(wake, 2000));
      }
    }
  };
  call("POST", "v1/stream-tickets", { body: { matches: [{ game, match: id, ...(token && { token }) }] } })
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

'use strict';
/*
 * The load client of `python -m bench.peer`: simulated players playing whole
 * Dékal matches as fast as they can, against Ludothèque or boardgame.io,
 * the same way on both sides.
 *
 *   node client.js --system ours|bgio|floor --port P --clients N --seconds S
 *                  [--warmup W] [--players 2] [--addresses 250] [--moves 64]
 *
 * N clients are N seats: N/players match slots, each playing one match at a
 * time with all its seats at once, and a new match when one ends. Every
 * seat that is to act plays one of its legal actions at random, the moment
 * it learns them; a seat that is not to act waits to be told.
 *
 * - ours: plain HTTP/1.1 keep-alive, one connection per seat and match. A
 *   slot creates its match with every seat a
 *   person (`POST /v1/games/dekal/matches`, one request, the seats' tokens
 *   in the answer); a seat to act `POST .../actions?legal_actions=true`
 *   (one request per move: the answer holds its next legal actions), a
 *   seat that is not `GET ...?legal_actions=true&wait=30`. A seat's first
 *   request of a match is that GET (it answers at once when the seat is to
 *   act), for its legal actions.
 *   With `--addresses K` (default 250), the n-th match is played from
 *   127.0.0.(2 + n mod K): K client addresses, as the machines of a
 *   population of players, for the limits that the server counts per
 *   address (creations a minute and an hour, requests a minute).
 * - bgio: boardgame.io's lobby API over HTTP/1.1 keep-alive creates the
 *   match (`POST /games/dekal/create`) and joins each seat (`POST
 *   /games/dekal/{id}/join`, for its credentials); then each seat opens a
 *   socket.io connection (websocket) and speaks boardgame.io's protocol as
 *   its `Client` with the `SocketIO` transport does (`sync`, then `update`
 *   with a MAKE_MOVE action), without the client-side redux store: every
 *   update the server sends is the seat's `playerView` (the same envelope as
 *   Ludothèque's answer, legal actions included). The socket closes when
 *   the match ends.
 * - floor: the floor of Ludothèque's stack (`bench/baseline_app.py`), played
 *   with the same requests as ours, two seats a match: a slot creates a
 *   fresh match `n` (`POST /floor/<n>/reset?moves=M`, M = `--moves`, 64 as
 *   a two-player Dékal match), each seat on a connection of its own, from
 *   the same addresses; a seat's first request is `GET
 *   /floor/<n>?seat=S&wait=30`, then it moves (`POST /floor/<n>/actions`
 *   with an action as body) when version % 2 is its seat and long-polls
 *   that GET when it is not, until the version reaches M. Seats alternate
 *   strictly: a long poll per move, where a Dékal match has three every
 *   four moves (both seats reveal at once).
 *
 * Measured over the `--seconds` after `--warmup` (it prints "measuring" and
 * "measured" on stdout at the window's ends, for the caller to sample the
 * servers' CPU there), then one JSON line "result {...}":
 * - moves: moves confirmed in the window (the mover's answer: the POST's, or
 *   the update carrying its move on its own socket);
 * - move latency: from sending a move to its confirmation;
 * - handoff: from a move's confirmation to the next seat learning that it
 *   is its turn (its `?wait=` answer; the update on its socket), for every
 *   seat that was waiting and that the move put to act (a seat that learns
 *   it before the mover's confirmation arrives counts 0);
 * - requests of each kind, and errors (status or reason, by kind).
 */

const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { io } = require('socket.io-client');

const HOST = '127.0.0.1';
const REQUESTS_PER_CONNECTION = 100;
const WAIT_S = 30;
const MOVE_TIMEOUT_MS = 10000;

function parse(argv) {
  const args = { system: null, port: 0, clients: 2, seconds: 5, warmup: 1, players: 2, addresses: 250, moves: 64 };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, '');
    if (!(name in args)) throw new Error(`unknown argument ${argv[i]}`);
    args[name] = name === 'system' ? argv[i + 1] : Number(argv[i + 1]);
  }
  if (!['ours', 'bgio', 'floor'].includes(args.system)) throw new Error('--system ours|bgio|floor');
  if (args.system === 'floor' && args.players !== 2) throw new Error('--system floor: two players');
  if (args.clients % args.players !== 0) throw new Error('--clients must be a multiple of --players');
  if (!(args.addresses >= 1 && args.addresses <= 250)) throw new Error('--addresses: 1 to 250');
  return args;
}

// -- recording -------------------------------------------------------------------

class Recorder {
  constructor(start, warmup, seconds) {
    this.from = start + warmup * 1000;
    this.to = this.from + seconds * 1000;
    this.stopping = false;
    this.moves = 0;
    this.latencies = [];
    this.handoffs = [];
    this.requests = {};
    this.errors = {};
    this.matchesStarted = 0;
    this.matchesFinished = 0;
  }

  inWindow(t) {
    return t >= this.from && t < this.to;
  }

  request(kind, t) {
    if (this.inWindow(t)) this.requests[kind] = (this.requests[kind] || 0) + 1;
  }

  error(kind, what, t) {
    if (this.stopping || !this.inWindow(t)) return;
    const key = `${kind}:${what}`;
    this.errors[key] = (this.errors[key] || 0) + 1;
  }

  move(latency, t) {
    if (!this.inWindow(t)) return;
    this.moves += 1;
    this.latencies.push(latency);
  }

  handoff(ms, t) {
    if (this.inWindow(t)) this.handoffs.push(Math.max(0, ms));
  }
}

/**
 * The handoffs of one match: every move's confirmation (its version, who is
 * to act after it, when the mover learnt it), and every seat that learns it
 * is to act after waiting since some version. A learning pairs with the
 * first move after that version, by another seat, that put it to act.
 */
class Handoffs {
  constructor(recorder) {
    this.recorder = recorder;
    this.confirms = [];
    this.pending = [];
  }

  confirm(version, toAct, mover, t) {
    const confirm = { version, toAct, mover, t };
    this.confirms.push(confirm);
    this.pending = this.pending.filter((learnt) => !this.pair(learnt, confirm));
  }

  learn(seat, since, version, t) {
    const learnt = { seat, since, version, t };
    const candidates = this.confirms.filter((c) => this.matches(learnt, c));
    if (candidates.length) {
      const first = candidates.reduce((a, b) => (b.version < a.version ? b : a));
      this.recorder.handoff(t - first.t, t);
    } else {
      this.pending.push(learnt);
    }
  }

  matches(learnt, confirm) {
    return (
      confirm.mover !== learnt.seat &&
      confirm.version > learnt.since &&
      confirm.version <= learnt.version &&
      confirm.toAct.includes(learnt.seat)
    );
  }

  /** A learning that came before its move's confirmation: 0. */
  pair(learnt, confirm) {
    if (!this.matches(learnt, confirm)) return false;
    this.recorder.handoff(0, learnt.t);
    return true;
  }
}

function pick(actions) {
  return actions[Math.floor(Math.random() * actions.length)];
}

// -- HTTP ----------------------------------------------------------------------

class Connection {
  /** One keep-alive connection at a time, from `address`. */
  constructor(port, address) {
    this.port = port;
    this.address = address;
    this.agent = null;
    this.used = 0;
    this.inflight = null;
  }

  request(method, path, body, headers, timeoutMs) {
    if (this.agent === null || this.used >= REQUESTS_PER_CONNECTION) {
      if (this.agent) this.agent.destroy();
      this.agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      this.used = 0;
    }
    this.used += 1;
    const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
    const options = {
      host: HOST,
      port: this.port,
      method,
      path,
      agent: this.agent,
      headers: { ...headers, ...(data ? { 'Content-Type': 'application/json', 'Content-Length': data.length } : {}) },
    };
    if (this.address) options.localAddress = this.address;
    return new Promise((resolve) => {
      const req = http.request(options, (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => {
          this.inflight = null;
          const text = Buffer.concat(chunks).toString();
          let json = null;
          try {
            json = text ? JSON.parse(text) : null;
          } catch (error) {
            json = null;
          }
          resolve({ status: res.statusCode, json, headers: res.headers });
        });
        res.on('error', () => resolve({ status: 0, json: null, headers: {} }));
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
      req.on('error', (error) => {
        this.inflight = null;
        resolve({ status: 0, json: null, headers: {}, reason: error.message });
      });
      this.inflight = req;
      if (data) req.write(data);
      req.end();
    });
  }

  close() {
    if (this.inflight) this.inflight.destroy();
    if (this.agent) this.agent.destroy();
    this.agent = null;
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// -- Ludothèque ----------------------------------------------------------------

async function oursSlot(slot, args, recorder, connections) {
  const base = '/v1/games/dekal/matches';
  while (!recorder.stopping) {
    // each match from the next client address, on new connections: the
    // matches of a population of players
    const address = args.addresses > 1 ? `127.0.0.${2 + (recorder.matchesStarted % args.addresses)}` : null;
    const seats = Array.from({ length: args.players }, () => new Connection(args.port, address));
    connections.push(...seats);
    const body = { players: Array.from({ length: args.players }, (_, s) => ({ name: `P${s}` })) };
    const started = performance.now();
    recorder.matchesStarted += 1;
    const created = await seats[0].request('POST', base, body, {}, 10000);
    recorder.request('create', started);
    let finished = false;
    if (created.status !== 201 || !created.json) {
      recorder.error('create', created.status || created.reason, started);
    } else {
      const match = created.json;
      const handoffs = new Handoffs(recorder);
      const url = `${base}/${match.id}`;
      const played = await Promise.all(
        match.seats.map((seat, s) => oursSeat(s, seats[s], url, seat.token, match, handoffs, recorder)),
      );
      finished = played.every((done) => done);
    }
    for (const seat of seats) {
      seat.close();
      connections.splice(connections.indexOf(seat), 1);
    }
    if (finished) recorder.matchesFinished += 1;
    else if (!recorder.stopping) await sleep(200);
  }
}

/** One seat's loop; true when the match finished, false when it was left. */
async function oursSeat(me, connection, url, token, created, handoffs, recorder) {
  const auth = { Authorization: `Bearer ${token}` };
  let known = { version: created.version, to_act: created.to_act, status: created.status, legal_actions: null };
  while (!recorder.stopping) {
    if (known.status === 'finished') return true;
    const acting = known.to_act.includes(me);
    if (acting && known.legal_actions && known.legal_actions.length) {
      const sent = performance.now();
      const answer = await connection.request('POST', `${url}/actions?legal_actions=true`, pick(known.legal_actions), auth, 10000);
      const t = performance.now();
      recorder.request('action', sent);
      if (answer.status !== 200 || !answer.json) {
        recorder.error('action', answer.status || answer.reason, sent);
        return false;
      }
      recorder.move(t - sent, t);
      handoffs.confirm(answer.json.version, answer.json.to_act, me, t);
      known = answer.json;
    } else {
      const sent = performance.now();
      const answer = await connection.request('GET', `${url}?legal_actions=true&wait=${WAIT_S}`, undefined, auth, (WAIT_S + 10) * 1000);
      const t = performance.now();
      recorder.request('view_wait', sent);
      if (answer.status !== 200 || !answer.json) {
        recorder.error('view_wait', answer.status || answer.reason, sent);
        return false;
      }
      if (!acting && answer.json.to_act.includes(me)) handoffs.learn(me, known.version, answer.json.version, t);
      known = answer.json;
    }
  }
  return false;
}

// -- the floor -------------------------------------------------------------------

async function floorSlot(slot, args, recorder, connections, matches) {
  while (!recorder.stopping) {
    const address = args.addresses > 1 ? `127.0.0.${2 + (recorder.matchesStarted % args.addresses)}` : null;
    const seats = [0, 1].map(() => new Connection(args.port, address));
    connections.push(...seats);
    const url = `/floor/${matches.next()}`;
    const started = performance.now();
    recorder.matchesStarted += 1;
    const created = await seats[0].request('POST', `${url}/reset?moves=${args.moves}`, undefined, {}, 10000);
    recorder.request('create', started);
    let finished = false;
    if (created.status !== 201 || !created.json) {
      recorder.error('create', created.status || created.reason, started);
    } else {
      const handoffs = new Handoffs(recorder);
      const played = await Promise.all(seats.map((seat, s) => floorSeat(s, seat, url, created.json, handoffs, recorder)));
      finished = played.every((done) => done);
    }
    for (const seat of seats) {
      seat.close();
      connections.splice(connections.indexOf(seat), 1);
    }
    if (finished) recorder.matchesFinished += 1;
    else if (!recorder.stopping) await sleep(200);
  }
}

/** Who acts after `version`: the seat version % 2, none once the match is over. */
function floorToAct(value) {
  return value.version >= value.end ? [] : [value.version % 2];
}

/** One seat's loop, as oursSeat: true when the match finished. */
async function floorSeat(me, connection, url, created, handoffs, recorder) {
  let known = created;
  let first = true;
  while (!recorder.stopping) {
    const toAct = floorToAct(known);
    if (!toAct.length) return true;
    const acting = toAct.includes(me);
    if (acting && !first) {
      const sent = performance.now();
      const move = { type: 'take', card: Math.floor(Math.random() * 10) };
      const answer = await connection.request('POST', `${url}/actions`, move, {}, 10000);
      const t = performance.now();
      recorder.request('action', sent);
      if (answer.status !== 200 || !answer.json) {
        recorder.error('action', answer.status || answer.reason, sent);
        return false;
      }
      recorder.move(t - sent, t);
      handoffs.confirm(answer.json.version, floorToAct(answer.json), me, t);
      known = answer.json;
    } else {
      const sent = performance.now();
      const answer = await connection.request('GET', `${url}?seat=${me}&wait=${WAIT_S}`, undefined, {}, (WAIT_S + 10) * 1000);
      const t = performance.now();
      recorder.request('view_wait', sent);
      if (answer.status !== 200 || !answer.json) {
        recorder.error('view_wait', answer.status || answer.reason, sent);
        return false;
      }
      if (!acting && floorToAct(answer.json).includes(me)) handoffs.learn(me, known.version, answer.json.version, t);
      known = answer.json;
      first = false;
    }
  }
  return false;
}

// -- boardgame.io -------------------------------------------------------------

async function bgioSlot(slot, args, recorder, connections, sockets) {
  const lobby = new Connection(args.port, null);
  connections.push(lobby);
  while (!recorder.stopping) {
    const names = Array.from({ length: args.players }, (_, s) => `P${s}`);
    const started = performance.now();
    const created = await lobby.request('POST', '/games/dekal/create', { numPlayers: args.players, setupData: { names } }, {}, 10000);
    recorder.request('create', started);
    if (created.status !== 200 || !created.json) {
      recorder.error('create', created.status || created.reason, started);
      await sleep(200);
      continue;
    }
    const matchID = created.json.matchID;
    const credentials = [];
    for (let s = 0; s < args.players; s++) {
      const sent = performance.now();
      const joined = await lobby.request('POST', `/games/dekal/${matchID}/join`, { playerID: String(s), playerName: names[s] }, {}, 10000);
      recorder.request('join', sent);
      if (joined.status !== 200 || !joined.json) {
        recorder.error('join', joined.status || joined.reason, sent);
        break;
      }
      credentials.push(joined.json.playerCredentials);
    }
    if (credentials.length < args.players) {
      await sleep(200);
      continue;
    }
    recorder.matchesStarted += 1;
    const handoffs = new Handoffs(recorder);
    const played = await Promise.all(
      credentials.map((credential, s) => bgioSeat(s, args, matchID, credential, handoffs, recorder, sockets)),
    );
    if (played.every((finished) => finished)) recorder.matchesFinished += 1;
    else if (!recorder.stopping) await sleep(200);
  }
}

/** One seat on its socket until the match ends (true) or fails (false). */
function bgioSeat(me, args, matchID, credentials, handoffs, recorder, sockets) {
  const playerID = String(me);
  return new Promise((resolve) => {
    const socket = io(`http://${HOST}:${args.port}/dekal`, {
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
    });
    sockets.add(socket);
    let known = null; // the last playerView (G) seen
    let stateID = 0;
    let inflight = null; // {sent, timer}
    let settled = false;
    const done = (finished) => {
      if (settled) return;
      settled = true;
      if (inflight) clearTimeout(inflight.timer);
      sockets.delete(socket);
      socket.close();
      resolve(finished);
    };
    const fail = (kind, what) => {
      recorder.error(kind, what, performance.now());
      done(false);
    };
    const play = () => {
      if (recorder.stopping) return done(false);
      if (known.status === 'finished') return done(true);
      if (inflight || !known.legal_actions.length) return undefined;
      const action = pick(known.legal_actions);
      const sent = performance.now();
      inflight = { sent, timer: setTimeout(() => fail('action', 'timeout'), MOVE_TIMEOUT_MS) };
      recorder.request('action', sent);
      socket.emit(
        'update',
        { type: 'MAKE_MOVE', payload: { type: action.type, args: [action], playerID, credentials } },
        stateID,
        matchID,
        playerID,
      );
      return undefined;
    };
    const receive = (state, deltalog) => {
      const t = performance.now();
      const G = state.G;
      const before = known;
      known = G;
      stateID = state._stateID;
      const mine = (deltalog || []).some(
        (entry) => entry.action && entry.action.type === 'MAKE_MOVE' && entry.action.payload.playerID === playerID,
      );
      if (inflight && mine) {
        clearTimeout(inflight.timer);
        recorder.move(t - inflight.sent, t);
        handoffs.confirm(G.version, G.to_act, me, t);
        inflight = null;
      } else if (before && !before.to_act.includes(me) && G.to_act.includes(me)) {
        handoffs.learn(me, before.version, G.version, t);
      }
      play();
    };
    socket.on('connect', () => {
      recorder.request('sync', performance.now());
      socket.emit('sync', matchID, playerID, credentials, args.players);
    });
    socket.on('sync', (id, syncInfo) => {
      if (id === matchID) receive(syncInfo.state, null);
    });
    socket.on('update', (id, state, deltalog) => {
      if (id === matchID) receive(state, deltalog);
    });
    socket.on('connect_error', (error) => fail('connect', error.message));
    socket.on('disconnect', (reason) => {
      if (!settled) fail('socket', reason);
    });
  });
}

// -- running -------------------------------------------------------------------

function percentile(sorted, p) {
  if (!sorted.length) return null;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 100) / 100;
}

async function main() {
  const args = parse(process.argv.slice(2));
  const start = performance.now();
  const recorder = new Recorder(start, args.warmup, args.seconds);
  const connections = [];
  const sockets = new Set();
  const slots = args.clients / args.players;
  const cpu = {};
  setTimeout(() => {
    cpu.start = process.cpuUsage();
    process.stdout.write('measuring\n');
  }, recorder.from - performance.now());
  const ended = new Promise((resolve) => {
    setTimeout(() => {
      process.stdout.write('measured\n');
      cpu.used = process.cpuUsage(cpu.start);
      recorder.stopping = true;
      for (const connection of connections) connection.close();
      for (const socket of sockets) socket.close();
      resolve();
    }, recorder.to - performance.now());
  });
  // the floor's matches: fresh numbers, apart from an earlier run's on the same server
  let floorMatch = Math.floor(Math.random() * 1e9);
  const floorMatches = { next: () => (floorMatch += 1) };
  const running = Array.from({ length: slots }, (_, slot) => {
    if (args.system === 'ours') return oursSlot(slot, args, recorder, connections);
    if (args.system === 'floor') return floorSlot(slot, args, recorder, connections, floorMatches);
    return bgioSlot(slot, args, recorder, connections, sockets);
  });
  await ended;
  await Promise.race([Promise.all(running), sleep(2000)]);
  const latencies = [...recorder.latencies].sort((a, b) => a - b);
  const handoffs = [...recorder.handoffs].sort((a, b) => a - b);
  const result = {
    system: args.system,
    clients: args.clients,
    players: args.players,
    addresses: args.addresses,
    warmup: args.warmup,
    seconds: args.seconds,
    moves: recorder.moves,
    moves_per_s: Math.round((recorder.moves / args.seconds) * 10) / 10,
    move_latency_ms: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), n: latencies.length },
    handoff_ms: {
      p50: percentile(handoffs, 0.5),
      p99: percentile(handoffs, 0.99),
      over_500ms: handoffs.length ? Math.round((handoffs.filter((h) => h > 500).length / handoffs.length) * 10000) / 10000 : null,
      n: handoffs.length,
    },
    requests: recorder.requests,
    errors: recorder.errors,
    matches_started: recorder.matchesStarted,
    matches_finished: recorder.matchesFinished,
    client_cpu_s: Math.round(((cpu.used.user + cpu.used.system) / 1e6) * 1000) / 1000,
  };
  process.stdout.write(`result ${JSON.stringify(result)}\n`);
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});

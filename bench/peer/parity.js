'use strict';
/*
 * Checks the Dékal port against Ludothèque's engine: reads on stdin a JSON
 * list of matches played by engines/dekal (tests/deploy/test_peer_bench.py
 * makes them), each {state: the engine's state after setup, steps: [{seat,
 * action, to_act, views, legal}]}, where to_act, views (every seat's and a
 * spectator's, last) and legal (every seat's legal actions) are the
 * engine's after the action. Replays each action with the port from the
 * same deal and prints {"steps": n, "mismatches": [...]} (the first few).
 */

const { apply, legalActions, toAct, view } = require('./dekal');

const canonical = (value) => JSON.stringify(value, (key, v) =>
  v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v,
);

function fromEngine(state) {
  const { rng, ...G } = state;
  return JSON.parse(JSON.stringify({ ...G, version: 1 }));
}

const noRandom = {
  Number: () => {
    throw new Error('a random draw: the engine and the port draw differently');
  },
  Shuffle: () => {
    throw new Error('a new deal: the engine and the port shuffle differently');
  },
};

function main(matches) {
  let steps = 0;
  const mismatches = [];
  const differ = (where, got, want) => {
    if (canonical(got) !== canonical(want) && mismatches.length < 10) mismatches.push({ where, got, want });
  };
  matches.forEach((match, m) => {
    const G = fromEngine(match.state);
    match.steps.forEach((step, i) => {
      steps += 1;
      const played = apply(G, noRandom, step.seat, step.action);
      if (played === null) {
        if (mismatches.length < 10) mismatches.push({ where: `match ${m} step ${i}: refused`, step });
        return;
      }
      differ(`match ${m} step ${i} to_act`, toAct(G), step.to_act);
      const n = G.n_players;
      for (let s = 0; s < n; s++) {
        differ(`match ${m} step ${i} view of seat ${s}`, view(G, s), step.views[s]);
        differ(`match ${m} step ${i} legal actions of seat ${s}`, legalActions(G, s), step.legal[s]);
      }
      differ(`match ${m} step ${i} spectator's view`, view(G, null), step.views[n]);
    });
  });
  process.stdout.write(`${JSON.stringify({ steps, mismatches })}\n`);
}

const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => main(JSON.parse(Buffer.concat(chunks).toString())));

'use strict';
/*
 * boardgame.io 0.50.2 serving the Dékal port (dekal.js), for `python -m bench.peer`:
 *
 *   node server.js --port 8123 [--storage memory|flatfile] [--dir DIR]
 *
 * `memory` is boardgame.io's default in-memory store; `flatfile` its FlatFile
 * store (node-persist: one JSON file per key in DIR, written after the
 * players are told, never fsynced). The lobby API (create, join) and the
 * socket.io transport share the port. Any origin is allowed: the bench's
 * clients are on this machine. Run it with NODE_ENV=production, as the bench
 * does (boardgame.io then skips a check that every state is serialisable,
 * and logs less). It prints "listening <port>" once it serves and stops on
 * SIGTERM or SIGINT.
 */

const { Server, FlatFile } = require('boardgame.io/server');
const { Dekal } = require('./dekal');

function parse(argv) {
  const args = { port: 8000, storage: 'memory', dir: null };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (name === '--port') args.port = Number(value);
    else if (name === '--storage') args.storage = value;
    else if (name === '--dir') args.dir = value;
    else throw new Error(`unknown argument ${name}`);
  }
  if (!['memory', 'flatfile'].includes(args.storage)) throw new Error('--storage: memory or flatfile');
  if (args.storage === 'flatfile' && !args.dir) throw new Error('--storage flatfile needs --dir');
  return args;
}

async function main() {
  const args = parse(process.argv.slice(2));
  const db = args.storage === 'flatfile' ? new FlatFile({ dir: args.dir, logging: false, ttl: false }) : undefined;
  const server = Server({ games: [Dekal], db, origins: [/.*/] });
  const running = await server.run({ port: args.port, callback: () => {} });
  process.stdout.write(`listening ${args.port}\n`);
  const stop = () => {
    server.kill(running);
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});

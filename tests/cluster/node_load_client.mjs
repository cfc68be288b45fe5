// Node.js driver clients for the failover-under-load test (test_double_direct.py): a writer
// doing sequential retryable inserts {_id: n} and a reader doing primary reads (one MongoClient
// each), until a line "stop" (or EOF) arrives on stdin. Reports on stdout, one JSON object per line:
//   {"event": "ready"}                      connected
//   {"ack": n}                              insert {_id: n} acknowledged
//   {"error": "...", "op": "insert"|"find"} an operation failed (the driver's retries included)
//   {"unretried": n, "error": "..."}        insert n failed with a network error the driver did
//                                           not retry; retried once here, then {"ack": n, ...}
//   {"event": "done", "acked": [...], "reads": R, "errors": E}   after stop, then exit 0
//   {"stuck_monitor": "writer"|"reader", "address": A, "seconds": S}   the driver's heartbeat
//                                           to A has neither succeeded nor failed (see watch())
//
//   node node_load_client.mjs URI DB COLLECTION
//
// The driver is resolved from tests/integration/node/node_modules (npm install there), or
// from NODE_PATH-style DOCGUARD_NODE_MODULES.
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const modules =
  process.env.DOCGUARD_NODE_MODULES || path.join(here, '..', 'integration', 'node', 'node_modules');
const { MongoClient } = createRequire(path.join(modules, 'noop.js'))('mongodb');

const [uri, dbName, collName] = process.argv.slice(2);
if (!uri || !dbName || !collName) {
  console.error('usage: node node_load_client.mjs URI DB COLLECTION');
  process.exit(2);
}

const say = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// name, message, labels and cause: enough to tell a driver's retry decision from the log.
const describe = (e) =>
  `${e.name}: ${e.message}` +
  (e.errorLabels?.length ? ` labels=${JSON.stringify(e.errorLabels)}` : '') +
  (e.cause ? ` cause=${e.cause.name}: ${e.cause.message}` : '');

let stopping = false;
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (line.trim() === 'stop') stopping = true;
});
rl.on('close', () => {
  stopping = true;
});

// Same settings as the PyMongo clients: retryable writes and reads are the drivers' defaults.
// The writer and the reader each have their own MongoClient: Node driver 6.x does not retry a
// write whose connection went stale because another operation on the same pool failed first
// (sdam/server.js decorateCommandError returns early for a stale connection, before adding the
// RetryableWriteError label), so with both on one client a killed member can surface one error.
const options = {
  heartbeatFrequencyMS: 500,
  serverSelectionTimeoutMS: 10000,
  connectTimeoutMS: 3000,
  maxPoolSize: 4,
  monitorCommands: true,
};
// Pool, topology and command failures on stderr (the test keeps it in a log file): why a
// client saw an error is then in the log next to the double's events.
const t0 = Date.now();
function watch(client, tag) {
  const log = (what, detail) =>
    process.stderr.write(`${((Date.now() - t0) / 1000).toFixed(3)} ${tag} ${what} ${detail}\n`);
  client.on('connectionPoolCleared', (e) =>
    log('poolCleared', `${e.address} interrupt=${e.interruptInUseConnections ?? false}`));
  client.on('connectionClosed', (e) => log('connectionClosed', `${e.address} #${e.connectionId} ${e.reason}`));
  client.on('serverDescriptionChanged', (e) =>
    log('server', `${e.address} ${e.previousDescription.type} -> ${e.newDescription.type}` +
      (e.newDescription.error ? ` (${e.newDescription.error.message})` : '')));
  client.on('serverHeartbeatFailed', (e) => log('heartbeatFailed', `${e.connectionId} ${e.failure?.message}`));
  client.on('commandFailed', (e) => log('commandFailed', `${e.address} ${e.commandName} ${e.failure?.message}`));
  // A heartbeat ends within connectTimeoutMS, succeeded or failed. One that does neither means the
  // driver's monitor has stopped. Seen with Node driver 6.22 through a starved TSan docguard: a
  // check began in the same millisecond as a pool connection's close, when the server (docguard,
  // whose upstream member was killed) closed that and the monitor's connection together, and
  // never ended: the hello went to a socket Node had already destroyed but whose close the
  // driver's connection had not handled yet (seen with an instrumented copy of the driver). Such
  // a write returns false, Node emits neither 'drain' nor 'error', the socket's timeout is gone
  // with it, and the driver's writeCommand waits for 'drain' for good. The client then never
  // selects that server again; each operation fails after serverSelectionTimeoutMS with the
  // last error the server had (MongoServerSelectionError: connection N ... closed).
  // Said once per server, as such, rather than left to surface as a MongoServerSelectionError;
  // the margin (twice the timeout, plus 2 s) keeps a merely starved process from tripping it.
  const started = new Map();  // address -> time its heartbeat started
  const ended = (e) => started.delete(e.connectionId);
  client.on('serverHeartbeatStarted', (e) => started.set(e.connectionId, Date.now()));
  client.on('serverHeartbeatSucceeded', ended);
  client.on('serverHeartbeatFailed', ended);
  const reported = new Set();
  setInterval(() => {
    for (const [address, since] of started) {
      const secs = (Date.now() - since) / 1000;
      if (secs * 1000 < 2 * options.connectTimeoutMS + 2000 || reported.has(address)) continue;
      reported.add(address);
      log('heartbeatStuck', `${address} started ${secs.toFixed(1)} s ago, neither succeeded nor failed`);
      say({ stuck_monitor: tag, address, seconds: secs });
    }
  }, 500).unref();
  return client;
}
const writeClient = watch(new MongoClient(uri, { ...options, appName: `node-writer-${process.pid}` }), 'writer');
const readClient = watch(new MongoClient(uri, { ...options, appName: `node-reader-${process.pid}` }), 'reader');
const coll = writeClient.db(dbName).collection(collName);
const readColl = readClient.db(dbName).collection(collName);
const acked = [];
let reads = 0;
let errors = 0;

async function writer() {
  for (let n = 0; !stopping; n++) {
    try {
      // A duplicate key error here would be a retry applied twice: reported as an error too.
      await coll.insertOne({ _id: n });
      acked.push(n);
      say({ ack: n });
    } catch (e) {
      if (e.name === 'MongoNetworkError' && !e.hasErrorLabel?.('RetryableWriteError')) {
        // The driver did not retry (a stale connection, see above): do what an application
        // does with an idempotent insert, once. A duplicate key then means the first attempt
        // was applied.
        say({ unretried: n, error: describe(e) });
        try {
          await coll.insertOne({ _id: n });
          acked.push(n);
          say({ ack: n, app_retry: 'inserted' });
        } catch (e2) {
          if (e2.code === 11000) {
            acked.push(n);
            say({ ack: n, app_retry: 'duplicate' });
          } else {
            errors++;
            say({ error: `${n} (application retry): ${describe(e2)}`, op: 'insert' });
          }
        }
        continue;
      }
      errors++;
      say({ error: `${n}: ${describe(e)}`, op: 'insert' });
    }
  }
}

async function reader() {
  while (!stopping) {
    try {
      await readColl.findOne({}, { sort: { _id: -1 } });
      reads++;
    } catch (e) {
      errors++;
      say({ error: describe(e), op: 'find' });
    }
    await sleep(5); // an application, not a benchmark: leave CPU to the others
  }
}

try {
  await Promise.all([writeClient.connect(), readClient.connect()]);
  say({ event: 'ready' });
  await Promise.all([writer(), reader()]);
  say({ event: 'done', acked, reads, errors });
  await Promise.all([writeClient.close(), readClient.close()]);
  process.exit(0);
} catch (e) {
  say({ event: 'failed', error: `${e.name}: ${e.message}` });
  process.exit(1);
}

// Node.js driver clients for the failover-under-load test (test_double_direct.py): a writer
// doing sequential retryable inserts {_id: n} and a reader doing primary reads (one MongoClient
// each), until a line "stop" (or EOF) arrives on stdin. Reports on stdout, one JSON object per line:
//   {"event": "ready"}                      connected
//   {"ack": n}                              insert {_id: n} acknowledged
//   {"error": "...", "op": "insert"|"find"} an operation failed (the driver's retries included)
//   {"unretried": n, "error": "..."}        insert n failed with a network error the driver did
//                                           not retry; retried once here, then {"ack": n, ...}
//   {"event": "done", "acked": [...], "reads": R, "errors": E}   after stop, then exit 0
//   {"rebuilt_after_stuck_monitor": "writer"|"reader", "address": A, "seconds": S}
//                                           the driver's heartbeat to A has neither succeeded nor
//                                           failed for S s (see watch()): that MongoClient was
//                                           closed and a new one opened (see Role)
//   {"retry_after_rebuild": n|"find", "error": "..."}   an operation begun on the old MongoClient
//                                           failed; done again once on the new one, then
//                                           {"ack": n, "app_retry": ...} for an insert
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
// onStuck(address, seconds) is called once, when a heartbeat has gone on for too long.
function watch(client, tag, onStuck) {
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
  // The margin (twice the timeout, plus 2 s) keeps a merely starved process from tripping it,
  // and stays under serverSelectionTimeoutMS, so an operation waiting for that server is still
  // waiting when the MongoClient is replaced (see Role).
  const started = new Map();  // address -> time its heartbeat started
  const ended = (e) => started.delete(e.connectionId);
  client.on('serverHeartbeatStarted', (e) => started.set(e.connectionId, Date.now()));
  client.on('serverHeartbeatSucceeded', ended);
  client.on('serverHeartbeatFailed', ended);
  const timer = setInterval(() => {
    for (const [address, since] of started) {
      const secs = (Date.now() - since) / 1000;
      if (secs * 1000 < 2 * options.connectTimeoutMS + 2000) continue;
      clearInterval(timer);
      log('heartbeatStuck', `${address} started ${secs.toFixed(1)} s ago, neither succeeded nor failed`);
      onStuck(address, secs);
      return;
    }
  }, 500);
  timer.unref();
  return client;
}

// The writer's or the reader's MongoClient, replaced by a new one with the same URI and options
// when its monitor is stuck (see watch()). A driver that sees the replica set routes around a
// member whose monitor has stopped; through a proxy (docguard) the client sees one server, the
// proxy, so it cannot: it is stuck until the MongoClient is replaced, which is what an
// application can do. The old client is closed (its pending server selections fail with
// MongoTopologyClosedError, its checked-out connections are closed; close's force flag does
// nothing in driver 6.x); an operation begun on it and failing is done again once on the new
// one (generation tells them apart). The test allows one replacement per Node client, as it
// allows one unretried write: only one member is killed.
class Role {
  constructor(tag) {
    this.tag = tag;
    this.generation = 0;
    this.ready = Promise.resolve();
    this.open();
  }

  open() {
    const name = this.generation ? `${this.tag}.${this.generation}` : this.tag;
    this.client = watch(
      new MongoClient(uri, { ...options, appName: `node-${name}-${process.pid}` }), name,
      (address, seconds) => this.rebuild(address, seconds));
    this.coll = this.client.db(dbName).collection(collName);
  }

  rebuild(address, seconds) {
    if (stopping) return;
    const old = this.client;
    this.generation++;
    this.open();
    say({ rebuilt_after_stuck_monitor: this.tag, address, seconds });
    old.close(true).catch((e) => process.stderr.write(`${this.tag}: closing the old client: ${describe(e)}\n`));
    // A failed connect is left to the operations that follow: they report it.
    this.ready = this.client.connect().then(() => {}, (e) =>
      process.stderr.write(`${this.tag}: connecting the new client: ${describe(e)}\n`));
  }
}

const w = new Role('writer');
const r = new Role('reader');
const acked = [];
let reads = 0;
let errors = 0;

// Insert {_id: n}, done again by the application at most once for each of two reasons: a network
// error the driver did not retry (a stale connection, see above), and a MongoClient replaced
// while the insert was under way (see Role). Either way the insert is idempotent: a duplicate key
// on a retry means an earlier attempt was applied, so n is acknowledged once and stored once.
// A duplicate key on the first attempt would be a driver retry applied twice: an error.
async function insert(n) {
  let retried = false, afterUnretried = false, afterRebuild = false;
  for (;;) {
    const generation = w.generation;
    try {
      await w.coll.insertOne({ _id: n });
      acked.push(n);
      say(retried ? { ack: n, app_retry: 'inserted' } : { ack: n });
      return;
    } catch (e) {
      if (retried && e.code === 11000) {
        acked.push(n);
        say({ ack: n, app_retry: 'duplicate' });
        return;
      }
      if (w.generation !== generation && !afterRebuild) {
        afterRebuild = retried = true;
        say({ retry_after_rebuild: n, error: describe(e) });
        await w.ready;
        continue;
      }
      if (e.name === 'MongoNetworkError' && !e.hasErrorLabel?.('RetryableWriteError') && !afterUnretried) {
        afterUnretried = retried = true;
        say({ unretried: n, error: describe(e) });
        continue;
      }
      errors++;
      say({ error: `${n}${retried ? ' (application retry)' : ''}: ${describe(e)}`, op: 'insert' });
      return;
    }
  }
}

async function writer() {
  for (let n = 0; !stopping; n++) await insert(n);
}

async function reader() {
  while (!stopping) {
    const generation = r.generation;
    try {
      await r.coll.findOne({}, { sort: { _id: -1 } });
      reads++;
    } catch (e) {
      if (r.generation !== generation) {
        // Begun on a MongoClient since replaced (see Role): read again on the new one.
        say({ retry_after_rebuild: 'find', error: describe(e) });
        await r.ready;
        continue;
      }
      errors++;
      say({ error: describe(e), op: 'find' });
    }
    await sleep(5); // an application, not a benchmark: leave CPU to the others
  }
}

try {
  await Promise.all([w.client.connect(), r.client.connect()]);
  say({ event: 'ready' });
  await Promise.all([writer(), reader()]);
  say({ event: 'done', acked, reads, errors });
  await Promise.all([w.client.close(), r.client.close()]);
  process.exit(0);
} catch (e) {
  say({ event: 'failed', error: `${e.name}: ${e.message}` });
  process.exit(1);
}

// The Node.js driver through docguard's Unix domain socket (the sidecar layout): insert, find,
// and a code-121 block from a rule.
//
// Starts a docguard of its own listening on a socket in a temp dir, in front of the suite's
// FerretDB. Environment (run.sh sets them):
//   FERRETDB_URI      mongodb://127.0.0.1:PORT of FerretDB (required unless DOCGUARD_DIRECT=1)
//   DOCGUARD_BIN      docguard binary (default: build/bin/docguard of this repository)
//   DOCGUARD_DIRECT=1 no docguard under test: every test here is skipped
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { MongoClient, MongoServerError } from 'mongodb';
import { requireUpstream, skipWithoutDocguard, startDocguard, stopDocguard } from './support.mjs';

const skip = skipWithoutDocguard;
requireUpstream();

let made, work, proc, logPath, sock, admin, client;
const dbName = `it_node_unix_${process.pid}`;

function unixConfig(sock) {
  return `# written by tests/integration/node/unix_socket.test.mjs
listen:
  - unix: ${sock}
    mode: "0600"
mode: block
tracking:
  read_sample_rate: 0
rules:
  - match: "*.arr"
    max_array_length: 3
`;
}

before(async () => {
  if (skip) return;
  // Short: a socket path has at most 107 bytes. Lower case: the driver lowercases the host of
  // a connection string, a socket path included, so mkdtemp's mixed-case names would not do.
  made = mkdtempSync('/tmp/dg-node-unix-');
  work = made.toLowerCase();
  if (work !== made) mkdirSync(work, { mode: 0o700 });
  sock = join(work, 'docguard.sock');
  ({ proc, logPath, admin } = await startDocguard({ work, configName: 'unix.yaml', config: unixConfig(sock),
    listen: false, ready: () => existsSync(sock) }));
  client = new MongoClient(`mongodb://${encodeURIComponent(sock)}/`, { serverSelectionTimeoutMS: 10000 });
  await client.connect();
});

after(async () => {
  if (skip) return;
  await client?.db(dbName).dropDatabase().catch(() => {});
  await client?.close();
  const alive = proc && proc.exitCode === null;
  if (alive) {
    assert.equal(await stopDocguard(proc), 0, 'docguard did not stop cleanly');
    assert.ok(!existsSync(sock), 'the socket file outlived docguard');
  }
  for (const dir of [work, made]) if (dir) rmSync(dir, { recursive: true, force: true });
  assert.ok(alive, 'docguard (unix socket) died during the tests');
});

test('the socket file has the configured mode', { skip }, () => {
  const st = lstatSync(sock);
  assert.ok(st.isSocket());
  assert.equal(st.mode & 0o777, 0o600);
});

test('insertOne + find through the socket; the member is the socket', { skip }, async () => {
  const hello = await client.db('admin').command({ hello: 1 });
  assert.equal(hello.me, sock);
  const c = client.db(dbName).collection('arr');
  await c.insertOne({ _id: 1, a: [1, 2] });
  assert.deepEqual(await c.findOne({ _id: 1 }), { _id: 1, a: [1, 2] });
});

test('a violating insert is blocked with MongoServerError 121', { skip }, async () => {
  const c = client.db(dbName).collection('arr');
  const err = await c.insertOne({ _id: 2, a: [1, 2, 3, 4] }).then(() => null, (e) => e);
  assert.ok(err instanceof MongoServerError, `expected MongoServerError, got ${err}`);
  assert.equal(err.code, 121);
  assert.equal(err.errInfo?.rule, 'max_array_length');
  assert.deepEqual((await c.find({}).toArray()).map((d) => d._id), [1]);
  const lines = readFileSync(logPath, 'utf8').split('\n').filter((l) => l.includes('design rule violated'));
  assert.ok(lines.length > 0);
  assert.ok(JSON.parse(lines.at(-1)).peer.startsWith(`unix:${sock}(`), lines.at(-1));
});

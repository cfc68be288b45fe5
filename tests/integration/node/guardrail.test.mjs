// The query guardrail with the Node.js driver: an unindexed find from a scoped app is refused
// with code 291 (NoQueryExecutionPlans, the server's notablescan error) and an errInfo naming the
// rule, the shape and the index that would serve it; the same find from another app passes.
//
// Starts a docguard of its own in front of the suite's FerretDB (introspection off: the
// collection's indexes become known from the client's own listIndexes through docguard).
// Environment (run.sh sets them): FERRETDB_URI, DOCGUARD_BIN, DOCGUARD_DIRECT=1 (skips all).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient, MongoServerError } from 'mongodb';

const here = dirname(fileURLToPath(import.meta.url));
const DIRECT = process.env.DOCGUARD_DIRECT === '1';
const FERRETDB_URI = process.env.FERRETDB_URI;
const BIN = process.env.DOCGUARD_BIN || resolve(here, '../../../build/bin/docguard');
const skip = DIRECT ? 'DOCGUARD_DIRECT=1: no docguard under test' : false;
if (!DIRECT && !FERRETDB_URI) throw new Error('set FERRETDB_URI (tests/integration/run.sh does)');

const dbName = `it_node_guardrail_${process.pid}`;
const CONFIG = `# written by tests/integration/node/guardrail.test.mjs
rules:
  - id: ci-indexes
    match: "${dbName}.*"
    apps: ["ci-*"]
    action: block
    require_index: true
introspection:
  enabled: false
`;

let work, proc, logPath, uri, admin, ci, web, upstream;

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startDocguard() {
  const [lport, aport] = [await freePort(), await freePort()];
  const cfg = join(work, 'guardrail.yaml');
  writeFileSync(cfg, CONFIG);
  logPath = join(work, `docguard-${lport}.log`);
  const fd = openSync(logPath, 'a');
  uri = `mongodb://127.0.0.1:${lport}`;
  admin = `127.0.0.1:${aport}`;
  proc = spawn(BIN, ['--listen', `127.0.0.1:${lport}`, '--upstream', FERRETDB_URI, '--admin', admin,
    '--config', cfg, '--log-format', 'json', '--threads', '2'], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = null;
  proc.once('exit', (code) => { exited = code ?? -1; });
  const deadline = Date.now() + 20000;
  while (Date.now() < deadline) {
    if (exited !== null) break;
    try {
      const r = await fetch(`http://${admin}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (r.status === 200) return;
    } catch { /* not up yet */ }
    await sleep(100);
  }
  let tail = '';
  try { tail = readFileSync(logPath, 'utf8').split('\n').slice(-20).join('\n'); } catch { /* none */ }
  throw new Error(`docguard did not start (exit ${exited}); log:\n${tail}`);
}

async function stopDocguard() {
  if (!proc || proc.exitCode !== null) return;
  const done = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
  await done;
  clearTimeout(t);
}

before(async () => {
  if (skip) return;
  work = mkdtempSync(join(tmpdir(), 'docguard-node-guardrail-'));
  await startDocguard();
  ci = new MongoClient(uri, { appName: 'ci-node', serverSelectionTimeoutMS: 10000 });
  web = new MongoClient(uri, { appName: 'web', serverSelectionTimeoutMS: 10000 });
  upstream = new MongoClient(FERRETDB_URI, { directConnection: true, serverSelectionTimeoutMS: 10000 });
  await Promise.all([ci.connect(), web.connect(), upstream.connect()]);
  const orders = web.db(dbName).collection('orders');
  await orders.insertMany([...Array(10).keys()].map((i) => ({ _id: i, status: i % 2 ? 'open' : 'done', total: i })));
  await orders.createIndex({ status: 1 });
  await orders.listIndexes().toArray(); // a complete list: from now on the guardrail judges
});

after(async () => {
  if (skip) return;
  await upstream?.db(dbName).dropDatabase().catch(() => {});
  await Promise.all([ci?.close(), web?.close(), upstream?.close()]);
  await stopDocguard();
  rmSync(work, { recursive: true, force: true });
});

test('an unindexed find from a ci app is refused with 291 and errInfo', { skip }, async () => {
  const orders = ci.db(dbName).collection('orders');
  await assert.rejects(orders.find({ total: { $gte: 5 } }).sort({ total: -1 }).toArray(), (e) => {
    assert.ok(e instanceof MongoServerError, String(e));
    assert.equal(e.code, 291);
    assert.equal(e.codeName, 'NoQueryExecutionPlans');
    assert.match(e.errmsg, /^No indexed plans available, and running with 'notablescan'/);
    assert.deepEqual(e.errInfo, {
      rule: 'ci-indexes', shape: '{total: {$gte: ?}} sort {total: -1}', index: { total: -1 },
      match: `${dbName}.*`, ruleLine: 3,
    });
    return true;
  });
  assert.equal((await orders.find({ status: 'open' }).toArray()).length, 5);
  assert.equal((await orders.find({ _id: 3 }).toArray()).length, 1);
  assert.equal((await web.db(dbName).collection('orders').find({ total: { $gte: 5 } }).toArray()).length, 5);
});

test('an unindexed updateMany from a ci app gets a write error with code 291', { skip }, async () => {
  const orders = ci.db(dbName).collection('orders');
  await assert.rejects(orders.updateMany({ total: 3 }, { $set: { x: 1 } }), (e) => {
    assert.equal(e.code, 291, String(e));
    assert.equal(e.errInfo?.shape, '{total: ?}');
    return true;
  });
  assert.equal(await upstream.db(dbName).collection('orders').countDocuments({ x: 1 }), 0);
});

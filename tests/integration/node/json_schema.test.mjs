// $jsonSchema rules (json_schema) with the Node.js driver: a refusal is the server's code 121 with
// the errInfo {failingDocumentId, details: {operatorName: "$jsonSchema", schemaRulesNotSatisfied}}
// a MongoServerError / MongoBulkWriteError carries, in inserts, replacements, $set and $unset,
// ordered and unordered batches; a candidate validator blocks nothing.
//
// Starts a docguard of its own in front of the suite's FerretDB (which has no validators: every
// refusal is docguard's). Environment as in rules.test.mjs (FERRETDB_URI, DOCGUARD_BIN,
// DOCGUARD_DIRECT=1 skips).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient, MongoBulkWriteError, MongoServerError } from 'mongodb';

const here = dirname(fileURLToPath(import.meta.url));
const DIRECT = process.env.DOCGUARD_DIRECT === '1';
const FERRETDB_URI = process.env.FERRETDB_URI;
const BIN = process.env.DOCGUARD_BIN || resolve(here, '../../../build/bin/docguard');
const skip = DIRECT ? 'DOCGUARD_DIRECT=1: no docguard under test' : false;
if (!DIRECT && !FERRETDB_URI) throw new Error('set FERRETDB_URI (tests/integration/run.sh does)');

const CONFIG = `# written by tests/integration/node/json_schema.test.mjs
mode: warn
tracking:
  read_sample_rate: 0
rules:
  - id: products-schema
    match: "*.products"
    action: block
    json_schema:
      bsonType: object
      required: [name, price]
      properties:
        name: { bsonType: string, description: "name must be a string" }
        price: { bsonType: number, minimum: 0 }
candidate_rules:
  - id: users-email
    match: "*.users"
    action: block
    json_schema: { required: [email] }
`;

let work, proc, logPath, uri, admin, client, upstream, db, up;
const dbName = `it_node_schema_${process.pid}`;

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
  const cfg = join(work, 'schema.yaml');
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

async function metric(name, labels) {
  const res = await fetch(`http://${admin}/metrics`);
  let sum = 0;
  for (const line of (await res.text()).split('\n')) {
    const m = line.match(new RegExp(`^${name}\\{(.*)\\}\\s+(\\S+)`));
    if (!m) continue;
    const ls = {};
    for (const kv of m[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) ls[kv[1]] = kv[2];
    if (Object.entries(labels).every(([k, v]) => ls[k] === v)) sum += Number(m[2]);
  }
  return sum;
}

before(async () => {
  if (skip) return;
  work = mkdtempSync(join(tmpdir(), 'docguard-node-schema-'));
  await startDocguard();
  client = new MongoClient(uri, { serverSelectionTimeoutMS: 10000, appName: 'node-shop' });
  await client.connect();
  upstream = new MongoClient(FERRETDB_URI, { directConnection: true, serverSelectionTimeoutMS: 10000 });
  await upstream.connect();
  db = client.db(dbName);
  up = upstream.db(dbName);
});

after(async () => {
  if (skip) return;
  await up?.dropDatabase().catch(() => {});
  await client?.close();
  await upstream?.close();
  const alive = proc && proc.exitCode === null;
  await stopDocguard();
  if (work) rmSync(work, { recursive: true, force: true });
  assert.ok(alive, 'docguard (json_schema) died during the tests');
});

test('insertOne failing the schema: MongoServerError 121 with the server\'s errInfo', { skip }, async () => {
  const c = db.collection('products');
  const err = await c.insertOne({ _id: 1, name: 7, price: 1 }).then(() => null, (e) => e);
  assert.ok(err instanceof MongoServerError, `expected MongoServerError, got ${err}`);
  assert.equal(err.code, 121);
  assert.equal(err.codeName, 'DocumentValidationFailure');
  assert.equal(err.errmsg ?? err.message, 'Document failed validation');
  assert.deepEqual(err.errInfo, {
    failingDocumentId: 1,
    details: {
      operatorName: '$jsonSchema',
      schemaRulesNotSatisfied: [{
        operatorName: 'properties',
        propertiesNotSatisfied: [{
          propertyName: 'name',
          description: 'name must be a string',
          details: [{
            operatorName: 'bsonType', specifiedAs: { bsonType: 'string' },
            reason: 'type did not match', consideredValue: 7, consideredType: 'int',
          }],
        }],
      }],
    },
  });
  assert.equal(await up.collection('products').countDocuments({}), 0);
});

test('insertMany ordered and unordered: good documents stored, bad ones absent', { skip }, async () => {
  const c = db.collection('products');
  await c.deleteMany({});
  const docs = [{ _id: 1, name: 'a', price: 1 }, { _id: 2, name: 'b' }, { _id: 3, name: 'c', price: 3 },
    { _id: 4, price: 4 }];
  let err = await c.insertMany(docs, { ordered: true }).then(() => null, (e) => e);
  assert.ok(err instanceof MongoBulkWriteError, `expected MongoBulkWriteError, got ${err}`);
  assert.deepEqual(err.writeErrors.map((w) => [w.index, w.code]), [[1, 121]]);
  assert.deepEqual(err.writeErrors[0].errInfo.details.schemaRulesNotSatisfied[0].missingProperties, ['price']);
  assert.deepEqual((await up.collection('products').find({}).sort({ _id: 1 }).toArray()).map((d) => d._id), [1]);
  await c.deleteMany({});
  err = await c.insertMany(docs, { ordered: false }).then(() => null, (e) => e);
  assert.deepEqual(err.writeErrors.map((w) => [w.index, w.code]), [[1, 121], [3, 121]]);
  assert.deepEqual((await up.collection('products').find({}).sort({ _id: 1 }).toArray()).map((d) => d._id), [1, 3]);
});

test('replaceOne, $set of a wrong type and $unset of a required field are refused', { skip }, async () => {
  const c = db.collection('products');
  await c.deleteMany({});
  await c.insertOne({ _id: 9, name: 'pen', price: 2 });
  for (const op of [
    () => c.replaceOne({ _id: 9 }, { name: 'pen' }),
    () => c.replaceOne({ _id: 10 }, { name: 1, price: 1 }, { upsert: true }),
    () => c.updateOne({ _id: 9 }, { $set: { price: 'two' } }),
    () => c.updateOne({ _id: 9 }, { $unset: { name: '' } }),
  ]) {
    const err = await op().then(() => null, (e) => e);
    assert.ok(err instanceof MongoServerError, `expected MongoServerError, got ${err}`);
    assert.equal(err.code, 121);
    assert.equal(err.errInfo.details.operatorName, '$jsonSchema');
  }
  assert.deepEqual(await up.collection('products').find({}).toArray(), [{ _id: 9, name: 'pen', price: 2 }]);
  assert.equal(await metric('docguard_violations_total', { db: dbName, collection: 'products', rule: 'json_schema', action: 'block', app: 'node-shop' }) >= 4, true);
});

test('a candidate validator blocks nothing and counts would-fail writes per app', { skip }, async () => {
  const c = db.collection('users');
  await c.insertMany([{ _id: 1 }, { _id: 2, email: 'a@b' }, { _id: 3 }]);
  assert.equal(await up.collection('users').countDocuments({}), 3);
  assert.equal(await metric('docguard_candidate_violations_total', { db: dbName, collection: 'users', rule: 'json_schema', action: 'block', app: 'node-shop' }), 2);
});

// Design rules in block mode with the Node.js driver.
//
// Starts a docguard of its own (block config written to a temp dir) in front of the suite's
// FerretDB, so the shared docguard's config is left alone. Environment (run.sh sets them):
//   FERRETDB_URI      mongodb://127.0.0.1:PORT of FerretDB (required unless DOCGUARD_DIRECT=1)
//   DOCGUARD_BIN      docguard binary (default: build/bin/docguard of this repository)
//   DOCGUARD_DIRECT=1 no docguard under test: every test here is skipped
// What the upstream holds is read back from FerretDB directly, never through docguard.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoBulkWriteError, MongoServerError } from 'mongodb';
import { metricSum, metricsText, closeSuite, openSuite, requireUpstream, skipWithoutDocguard } from './support.mjs';

const skip = skipWithoutDocguard;
requireUpstream();

const CONFIG = `# written by tests/integration/node/rules.test.mjs
mode: block
tracking:
  read_sample_rate: 0
rules:
  - match: "*.arr"
    max_array_length: 3
  - match: "*.size"
    max_document_bytes: 2KiB
  - match: "*.push"
    require_push_slice: true
`;

let admin, db, up;
const dbName = `it_node_rules_${process.pid}`;

async function violations(coll, rule) {
  return metricSum(await metricsText(admin), 'docguard_violations_total',
    { db: dbName, collection: coll, rule, action: 'block' });
}

// What FerretDB holds, read directly, sorted by _id.
async function held(coll) {
  return await up.collection(coll).find({}).sort({ _id: 1 }).toArray();
}

function assertDocguardError(e, { rule, match, field, measured, bound, failingId }) {
  assert.equal(e.code, 121, e.message);
  assert.equal(e.codeName, 'DocumentValidationFailure');
  assert.match(e.errmsg ?? e.message, new RegExp(`^docguard: design rule ${rule}`));
  const info = e.errInfo;
  assert.ok(info, `no errInfo on ${e.message}`);
  assert.equal(info.rule, rule);
  // `match` names the deciding rule for the reader; the glob is not told to clients.
  assert.equal(info.match, undefined, match);
  assert.equal(info.ruleLine, undefined);
  assert.equal(info.fieldPath, field);
  assert.equal(Number(info.measured), measured);
  assert.equal(Number(info.bound), bound);
  if (failingId !== undefined) assert.deepEqual(info.failingDocumentId, failingId);
}

let suite;
before(async () => {
  if (skip) return;
  suite = await openSuite({ workPrefix: 'docguard-node-rules-', configName: 'rules-block.yaml', config: CONFIG, dbName });
  ({ admin, db, up } = suite);
});

after(async () => {
  if (skip) return;
  assert.ok(await closeSuite(suite), 'docguard (block) died during the tests');
});

const arrDocs = () => [
  { _id: 0, a: [1] }, { _id: 1, a: [] }, { _id: 2, a: [1, 2, 3, 4] },
  { _id: 3, a: [1, 2, 3] }, { _id: 4, x: { a: [1, 2, 3, 4, 5] } },
];

test('insertMany ordered: MongoBulkWriteError at the first violation, none written after it', { skip }, async () => {
  const c = db.collection('arr');
  await c.deleteMany({});
  const err = await c.insertMany(arrDocs(), { ordered: true }).then(() => null, (e) => e);
  assert.ok(err instanceof MongoBulkWriteError, `expected MongoBulkWriteError, got ${err}`);
  assert.deepEqual(err.writeErrors.map((w) => w.index), [2]);
  const we = err.writeErrors[0];
  assert.equal(we.code, 121);
  assert.match(we.errmsg, /^docguard: design rule max_array_length/);
  const info = we.errInfo;
  assert.deepEqual({ ...info }, { rule: 'max_array_length', fieldPath: 'a', measured: 4, bound: 3, failingDocumentId: 2 });
  assert.equal(err.result.insertedCount, 2);
  assert.deepEqual((await held('arr')).map((d) => d._id), [0, 1]);
});

test('insertMany unordered: every non-violating document written', { skip }, async () => {
  const c = db.collection('arr');
  await c.deleteMany({});
  const before = await violations('arr', 'max_array_length');
  const err = await c.insertMany(arrDocs(), { ordered: false }).then(() => null, (e) => e);
  assert.ok(err instanceof MongoBulkWriteError, `expected MongoBulkWriteError, got ${err}`);
  assert.deepEqual(err.writeErrors.map((w) => w.index), [2, 4]);
  assert.deepEqual(err.writeErrors.map((w) => w.code), [121, 121]);
  assert.deepEqual(err.writeErrors.map((w) => w.errInfo.fieldPath), ['a', 'x.a']);
  assert.deepEqual(err.writeErrors.map((w) => w.errInfo.failingDocumentId), [2, 4]);
  assert.equal(err.result.insertedCount, 3);
  assert.deepEqual(await held('arr'), arrDocs().filter((d) => [0, 1, 3].includes(d._id)));
  assert.equal(await violations('arr', 'max_array_length'), before + 2);
});

test('insertOne violating: MongoServerError 121 with errInfo', { skip }, async () => {
  const c = db.collection('size');
  const doc = { _id: 'big', p: 'y'.repeat(3000) };
  const err = await c.insertOne(doc).then(() => null, (e) => e);
  assert.ok(err instanceof MongoServerError, `expected MongoServerError, got ${err}`);
  assertDocguardError(err, { rule: 'max_document_bytes', match: '*.size', field: '', measured: 3026, bound: 2048, failingId: 'big' });
  assert.deepEqual(await held('size'), []);
  await c.insertOne({ _id: 'small' });
  assert.deepEqual(await held('size'), [{ _id: 'small' }]);
});

test('updateOne / updateMany / replaceOne violating: MongoServerError 121, nothing changed', { skip }, async () => {
  const c = db.collection('arr');
  await c.deleteMany({});
  await c.insertMany([{ _id: 1, a: [1], k: 1 }, { _id: 2, a: [1], k: 1 }]);
  let err = await c.updateOne({ _id: 1 }, { $set: { a: [1, 2, 3, 4] } }).then(() => null, (e) => e);
  assert.ok(err instanceof MongoServerError, `expected MongoServerError, got ${err}`);
  assertDocguardError(err, { rule: 'max_array_length', match: '*.arr', field: 'a', measured: 4, bound: 3, failingId: 1 });
  err = await c.updateMany({ k: 1 }, { $set: { b: [1, 2, 3, 4] } }).then(() => null, (e) => e);
  assertDocguardError(err, { rule: 'max_array_length', match: '*.arr', field: 'b', measured: 4, bound: 3 });
  err = await c.updateOne({ k: 9 }, { $set: { a: [1, 2, 3, 4] } }, { upsert: true }).then(() => null, (e) => e);
  assert.equal(err?.code, 121);
  err = await c.replaceOne({ _id: 2 }, { a: [1, 2, 3, 4, 5] }).then(() => null, (e) => e);
  assertDocguardError(err, { rule: 'max_array_length', match: '*.arr', field: 'a', measured: 5, bound: 3, failingId: 2 });
  const p = db.collection('push');
  await p.insertOne({ _id: 1, tags: [] });
  err = await p.updateOne({ _id: 1 }, { $push: { tags: 'x' } }).then(() => null, (e) => e);
  assertDocguardError(err, { rule: 'require_push_slice', match: '*.push', field: 'tags', measured: 1, bound: 0, failingId: 1 });
  assert.deepEqual(await held('arr'), [{ _id: 1, a: [1], k: 1 }, { _id: 2, a: [1], k: 1 }]);
  assert.deepEqual(await held('push'), [{ _id: 1, tags: [] }]);
  // allowed updates go through
  assert.equal((await c.updateOne({ _id: 1 }, { $set: { a: [7] } })).modifiedCount, 1);
  assert.deepEqual((await held('arr'))[0], { _id: 1, a: [7], k: 1 });
});

test('findOneAndUpdate / findOneAndReplace violating: MongoServerError 121 (command error)', { skip }, async () => {
  const c = db.collection('arr');
  await c.deleteMany({});
  await c.insertOne({ _id: 1, a: [1] });
  let err = await c.findOneAndUpdate({ _id: 1 }, { $set: { a: [1, 2, 3, 4] } }).then(() => null, (e) => e);
  assert.ok(err instanceof MongoServerError, `expected MongoServerError, got ${err}`);
  assertDocguardError(err, { rule: 'max_array_length', match: '*.arr', field: 'a', measured: 4, bound: 3, failingId: 1 });
  err = await c.findOneAndReplace({ _id: 1 }, { a: [1, 2, 3, 4] }).then(() => null, (e) => e);
  assertDocguardError(err, { rule: 'max_array_length', match: '*.arr', field: 'a', measured: 4, bound: 3, failingId: 1 });
  assert.deepEqual(await held('arr'), [{ _id: 1, a: [1] }]);
  const r = await c.findOneAndUpdate({ _id: 1 }, { $set: { a: [2] } }, { returnDocument: 'after' });
  assert.deepEqual(r, { _id: 1, a: [2] });
  assert.deepEqual(await held('arr'), [{ _id: 1, a: [2] }]);
});

test('bulkWrite mixing inserts, updates and deletes: indices of the original batch', { skip }, async () => {
  const c = db.collection('arr');
  await c.deleteMany({});
  await up.collection('arr').insertMany([{ _id: 'd1' }, { _id: 'u1', a: [] }]);
  const ops = [
    { insertOne: { document: { _id: 'i0', a: [1] } } },
    { updateOne: { filter: { _id: 'u1' }, update: { $set: { a: [1, 2] } } } },
    { insertOne: { document: { _id: 'i2', a: [1, 2, 3, 4] } } },                  // blocked
    { deleteOne: { filter: { _id: 'd1' } } },
    { insertOne: { document: { _id: 'i4' } } },
    { updateOne: { filter: { _id: 'u1' }, update: { $set: { b: [1, 2, 3, 4, 5] } } } }, // blocked
  ];
  const err = await c.bulkWrite(ops, { ordered: false }).then(() => null, (e) => e);
  assert.ok(err instanceof MongoBulkWriteError, `expected MongoBulkWriteError, got ${err}`);
  assert.deepEqual(err.writeErrors.map((w) => w.index).sort((a, b) => a - b), [2, 5]);
  for (const w of err.writeErrors) {
    assert.equal(w.code, 121);
    assert.equal(w.errInfo.rule, 'max_array_length');
  }
  assert.equal(err.result.insertedCount, 2);
  assert.equal(err.result.modifiedCount, 1);
  assert.equal(err.result.deletedCount, 1);
  assert.deepEqual(await held('arr'), [{ _id: 'i0', a: [1] }, { _id: 'i4' }, { _id: 'u1', a: [1, 2] }]);

  // ordered: stops at the first violation
  await c.deleteMany({});
  const err2 = await c.bulkWrite([
    { insertOne: { document: { _id: 'o0' } } },
    { updateOne: { filter: { _id: 'o0' }, update: { $set: { a: [1, 2, 3, 4] } } } },  // blocked
    { insertOne: { document: { _id: 'o2' } } },
  ], { ordered: true }).then(() => null, (e) => e);
  assert.ok(err2 instanceof MongoBulkWriteError, `expected MongoBulkWriteError, got ${err2}`);
  assert.deepEqual(err2.writeErrors.map((w) => w.index), [1]);
  assert.equal(err2.result.insertedCount, 1);
  assert.deepEqual(await held('arr'), [{ _id: 'o0' }]);
});

// The query guardrail with the Node.js driver: an unindexed find from a scoped app is refused
// with code 291 (NoQueryExecutionPlans, the server's notablescan error) and an errInfo naming the
// rule, the shape and the index that would serve it; the same find from another app passes.
//
// Starts a docguard of its own in front of the suite's FerretDB (introspection off: the
// collection's indexes become known from the client's own listIndexes through docguard).
// Environment (run.sh sets them): FERRETDB_URI, DOCGUARD_BIN, DOCGUARD_DIRECT=1 (skips all).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, MongoServerError } from 'mongodb';
import { FERRETDB_URI, requireUpstream, skipWithoutDocguard, startDocguard, stopDocguard } from './support.mjs';

const skip = skipWithoutDocguard;
requireUpstream();

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

before(async () => {
  if (skip) return;
  work = mkdtempSync(join(tmpdir(), 'docguard-node-guardrail-'));
  ({ proc, logPath, uri, admin } = await startDocguard({ work, configName: 'guardrail.yaml', config: CONFIG }));
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
  await stopDocguard(proc);
  rmSync(work, { recursive: true, force: true });
});

test('an unindexed find from a ci app is refused with 291 and errInfo', { skip }, async () => {
  const orders = ci.db(dbName).collection('orders');
  await assert.rejects(orders.find({ total: { $gte: 5 } }).sort({ total: -1 }).toArray(), (e) => {
    assert.ok(e instanceof MongoServerError, String(e));
    assert.equal(e.code, 291);
    assert.equal(e.codeName, 'NoQueryExecutionPlans');
    assert.match(e.errmsg, /^No indexed plans available, and running with 'notablescan'/);
    // The rule's kind; its id, glob and line only with errors.reveal_rule_source.
    assert.deepEqual(e.errInfo, {
      rule: 'require_index', shape: '{total: {$gte: ?}} sort {total: -1}', index: { total: -1 },
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

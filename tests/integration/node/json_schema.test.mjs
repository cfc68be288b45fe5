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
import { MongoClient, MongoBulkWriteError, MongoServerError } from 'mongodb';
import { metricSum, metricsText, closeSuite, openSuite, requireUpstream, skipWithoutDocguard } from './support.mjs';

const skip = skipWithoutDocguard;
requireUpstream();

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

let admin, db, up;
const dbName = `it_node_schema_${process.pid}`;

async function metric(name, labels) {
  return metricSum(await metricsText(admin), name, labels);
}

let suite;
before(async () => {
  if (skip) return;
  suite = await openSuite({ workPrefix: 'docguard-node-schema-', configName: 'schema.yaml', config: CONFIG, dbName, clientOptions: { appName: 'node-shop' } });
  ({ admin, db, up } = suite);
});

after(async () => {
  if (skip) return;
  assert.ok(await closeSuite(suite), 'docguard (json_schema) died during the tests');
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

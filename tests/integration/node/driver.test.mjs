// Node.js driver through docguard. Environment:
//   DOCGUARD_URI    mongodb://127.0.0.1:PORT of docguard (required)
//   DOCGUARD_ADMIN  127.0.0.1:PORT of docguard's admin listener (metrics checks skipped without it)
//   DOCGUARD_DIRECT=1 when DOCGUARD_URI is FerretDB itself (docguard-only checks skipped)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoBulkWriteError } from 'mongodb';
import { metricSum, metricsText } from './support.mjs';

const URI = process.env.DOCGUARD_URI;
const ADMIN = process.env.DOCGUARD_ADMIN;
const PROXIED = process.env.DOCGUARD_DIRECT !== '1';
if (!URI) throw new Error('set DOCGUARD_URI (tests/integration/run.sh does)');
const hostPort = URI.replace(/^mongodb:\/\//, '').split(/[/?]/)[0];

const metrics = () => metricsText(ADMIN);

let client;
let db;
const dbName = `it_node_${process.pid}`;

before(async () => {
  client = new MongoClient(URI, { serverSelectionTimeoutMS: 10000 });
  await client.connect();
  db = client.db(dbName);
});

after(async () => {
  await client.db(dbName).dropDatabase().catch(() => {});
  await client.close();
});

test('CRUD', async () => {
  const c = db.collection('crud');
  const { insertedId } = await c.insertOne({ sku: 'a1', price: 20, tags: ['home'] });
  assert.equal((await c.findOne({ sku: 'a1' })).price, 20);
  const u = await c.updateOne({ _id: insertedId }, { $set: { price: 25 }, $push: { tags: 'sale' } });
  assert.equal(u.modifiedCount, 1);
  assert.deepEqual((await c.findOne({ _id: insertedId })).tags, ['home', 'sale']);
  await c.replaceOne({ sku: 'a1' }, { sku: 'a1', price: 30 });
  assert.equal((await c.findOne({ sku: 'a1' })).tags, undefined);
  const up = await c.updateOne({ sku: 'b2' }, { $set: { price: 1 } }, { upsert: true });
  assert.ok(up.upsertedId);
  const fam = await c.findOneAndUpdate({ sku: 'b2' }, { $inc: { stock: 3 } }, { returnDocument: 'after' });
  assert.equal(fam.stock, 3);
  assert.equal(await c.countDocuments(), 2);
  assert.equal((await c.deleteOne({ sku: 'a1' })).deletedCount, 1);
  assert.equal((await c.deleteMany({})).deletedCount, 1);
});

test('insertMany of 5000 documents (kind-1 sequence)', async () => {
  const c = db.collection('many');
  const docs = Array.from({ length: 5000 }, (_, i) => ({ i, payload: 'x'.repeat(100) }));
  const r = await c.insertMany(docs);
  assert.equal(r.insertedCount, 5000);
  assert.equal(await c.countDocuments(), 5000);
});

test('cursor across many batches (getMore)', async () => {
  const c = db.collection('cursor');
  await c.insertMany(Array.from({ length: 2000 }, (_, i) => ({ i })));
  const seen = [];
  for await (const d of c.find({}, { projection: { _id: 0, i: 1 } }).sort({ i: 1 }).batchSize(10)) seen.push(d.i);
  assert.equal(seen.length, 2000);
  assert.ok(seen.every((v, i) => v === i));
  const cur = c.find().batchSize(5);
  for (let k = 0; k < 12; k++) await cur.next();
  await cur.close(); // killCursors
  assert.equal(await c.countDocuments({ i: { $lt: 100 } }), 100);
});

test('aggregate', async () => {
  const c = db.collection('orders');
  await c.insertMany(Array.from({ length: 700 }, (_, i) => ({ cust: `c${i % 7}`, amount: i, status: i % 2 ? 'A' : 'B' })));
  const out = await c.aggregate([
    { $match: { status: 'A' } },
    { $group: { _id: '$cust', total: { $sum: '$amount' } } }, // FerretDB 1.24: one accumulator per $group
    { $sort: { _id: 1 } },
  ]).toArray();
  assert.deepEqual(out.map((d) => d._id), ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
  let expected = 0;
  for (let i = 1; i < 700; i += 2) expected += i;
  assert.equal(out.reduce((s, d) => s + d.total, 0), expected);
  const rows = await c.aggregate([{ $sort: { amount: 1 } }, { $project: { _id: 0, amount: 1 } }], { batchSize: 25 }).toArray();
  assert.equal(rows.length, 700);
  assert.equal(rows[699].amount, 699);
});

for (const ordered of [true, false]) {
  test(`bulkWrite ordered=${ordered}`, async () => {
    const c = db.collection(`bulk_${ordered}`);
    await c.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i, v: 0 })));
    const r = await c.bulkWrite([
      { insertOne: { document: { _id: 100, v: 1 } } },
      { updateOne: { filter: { _id: 1 }, update: { $set: { v: 5 } } } },
      { updateMany: { filter: { _id: { $gte: 5, $lt: 10 } }, update: { $inc: { v: 2 } } } },
      { replaceOne: { filter: { _id: 2 }, replacement: { v: 7 } } },
      { updateOne: { filter: { _id: 200 }, update: { $set: { v: 9 } }, upsert: true } },
      { deleteOne: { filter: { _id: 3 } } },
      { deleteMany: { filter: { _id: { $in: [4, 100] } } } },
    ], { ordered });
    assert.equal(r.insertedCount, 1);
    assert.equal(r.matchedCount, 7);
    assert.equal(r.modifiedCount, 7);
    assert.equal(r.upsertedCount, 1);
    assert.equal(r.deletedCount, 3);
    assert.equal(await c.countDocuments(), 9);
    await assert.rejects(
      c.bulkWrite([{ insertOne: { document: { _id: 300 } } }, { insertOne: { document: { _id: 1 } } },
        { insertOne: { document: { _id: 301 } } }], { ordered }),
      (err) => {
        assert.ok(err instanceof MongoBulkWriteError);
        assert.equal(err.writeErrors.length ?? 1, 1);
        assert.equal(err.result.insertedCount, ordered ? 1 : 2);
        return true;
      });
  });
}

for (const compressor of ['snappy', 'zlib', 'zstd']) {
  test(`compression ${compressor}`, async () => {
    const name = 'docguard_compressed_messages_total';
    const check = PROXIED && ADMIN;
    const before = check ? metricSum(await metrics(), name, { compressor }) : 0;
    const cc = new MongoClient(URI, { compressors: [compressor], serverSelectionTimeoutMS: 10000 });
    try {
      const c = cc.db(dbName).collection(`comp_${compressor}`);
      await c.insertMany(Array.from({ length: 500 }, (_, i) => ({ i, text: 'compress me '.repeat(20) })));
      assert.equal(await c.countDocuments(), 500);
      const rows = await c.find({ i: { $gte: 100 } }).sort({ i: 1 }).batchSize(50).toArray();
      assert.equal(rows.length, 400);
      await c.updateMany({}, { $set: { seen: true } });
      assert.equal(await c.countDocuments({ seen: true }), 500);
    } finally {
      await cc.close();
    }
    if (check) {
      const afterV = metricSum(await metrics(), name, { compressor });
      assert.ok(afterV > before, `${name}{compressor="${compressor}"} did not increase (${before} -> ${afterV})`);
    }
  });
}

test('topology contains only docguard (plain URI, no directConnection)', async () => {
  const seen = new Set();
  const tc = new MongoClient(`mongodb://${hostPort}`, { serverSelectionTimeoutMS: 10000 });
  tc.on('topologyDescriptionChanged', (ev) => {
    for (const addr of ev.newDescription.servers.keys()) seen.add(addr);
  });
  tc.on('serverOpening', (ev) => seen.add(ev.address));
  try {
    await tc.connect();
    const c = tc.db(dbName).collection('topo');
    await c.insertOne({ x: 1 });
    assert.equal((await c.findOne({ x: 1 })).x, 1);
    await new Promise((r) => setTimeout(r, 1000));
    const desc = tc.topology.description;
    assert.deepEqual([...desc.servers.keys()], [hostPort]);
    assert.deepEqual([...seen], [hostPort]);
    const hello = await tc.db('admin').command({ hello: 1 });
    if (PROXIED) {
      // The default persona: primary of a one-member set whose only member is docguard.
      assert.equal(desc.type, 'ReplicaSetWithPrimary');
      assert.deepEqual(hello.hosts, [hostPort]);
      assert.equal(hello.primary, hostPort);
      assert.equal(hello.me, hostPort);
      assert.equal(hello.setName, 'docguard');
      assert.equal(hello.msg, undefined);
    } else {
      for (const k of ['hosts', 'setName', 'primary', 'me']) assert.equal(hello[k], undefined, `hello leaks ${k}`);
    }
  } finally {
    await tc.close();
  }
});

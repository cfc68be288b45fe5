// SCRAM through docguard with the Node.js driver: docguard in front of a FerretDB
// with SCRAM users. Environment (tests/integration/run.sh's harness sets them):
//   DOCGUARD_AUTH_URI       mongodb://127.0.0.1:PORT of that docguard (or the FerretDB, direct)
//   DOCGUARD_AUTH_USER / DOCGUARD_AUTH_PASSWORD   a user in admin with SCRAM-SHA-1 and -256
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError } from 'mongodb';

const URI = process.env.DOCGUARD_AUTH_URI;
const USER = process.env.DOCGUARD_AUTH_USER;
const PASSWORD = process.env.DOCGUARD_AUTH_PASSWORD;
const skip = URI ? false : 'DOCGUARD_AUTH_URI not set (run through tests/integration/run.sh)';

function client(password, mechanism) {
  const opts = { serverSelectionTimeoutMS: 10000, authSource: 'admin' };
  if (password !== undefined) opts.auth = { username: USER, password };
  if (mechanism) opts.authMechanism = mechanism;
  return new MongoClient(URI, opts);
}

for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-1', undefined]) {
  test(`${mechanism ?? 'negotiated mechanism'}: authenticated CRUD`, { skip }, async () => {
    const c = client(PASSWORD, mechanism);
    const db = c.db(`it_node_scram_${process.pid}_${(mechanism ?? 'default').replace(/-/g, '')}`);
    try {
      await db.collection('c').insertMany([{ i: 1 }, { i: 2 }]);
      assert.equal(await db.collection('c').countDocuments({}), 2);
      const status = await c.db('admin').command({ connectionStatus: 1 });
      assert.ok(
        status.authInfo.authenticatedUsers.some((u) => u.user === USER && u.db === 'admin'),
        JSON.stringify(status),
      );
      await db.dropDatabase();
    } finally {
      await c.close();
    }
  });
}

for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-1']) {
  test(`${mechanism}: wrong password gets the server's error 18`, { skip }, async () => {
    const c = client('wrong', mechanism);
    try {
      await assert.rejects(c.db('admin').command({ ping: 1 }), (e) => {
        assert.ok(e instanceof MongoServerError, `${e.name}: ${e.message}`);
        assert.equal(e.code, 18);
        return true;
      });
    } finally {
      await c.close();
    }
  });
}

test('no credentials: a write is refused by the server (13)', { skip }, async () => {
  const c = client(undefined);
  try {
    await assert.rejects(c.db('it_node_scram_anon').collection('c').insertOne({}), (e) => {
      assert.equal(e.code, 13, `${e.name}: ${e.message}`);
      return true;
    });
  } finally {
    await c.close();
  }
});

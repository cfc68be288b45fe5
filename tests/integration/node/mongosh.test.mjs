// mongosh (from node_modules) through docguard: insert + find. Needs DOCGUARD_URI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const URI = process.env.DOCGUARD_URI;
if (!URI) throw new Error('set DOCGUARD_URI (tests/integration/run.sh does)');
const mongosh = path.join(here, 'node_modules', '.bin', 'mongosh');
const dbName = `it_mongosh_${process.pid}`;
const base = URI.replace(/\/+$/, '').split('?')[0];

async function sh(script) {
  const { stdout } = await run(mongosh, ['--quiet', '--norc', `${base}/${dbName}`, '--eval', script], {
    timeout: 60000,
    env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1', DO_NOT_TRACK: '1' },
  });
  return stdout.trim();
}

test('mongosh insert + find through docguard', async () => {
  const out = await sh(`
    db.items.insertOne({ name: "from-mongosh", n: 1 });
    db.items.insertMany([{ name: "a", n: 2 }, { name: "b", n: 3 }]);
    const d = db.items.findOne({ name: "from-mongosh" }, { _id: 0 });
    print("RESULT " + JSON.stringify({ doc: d, count: db.items.countDocuments(), hello: db.hello().setName || db.hello().msg || null }));
    db.dropDatabase();
    "done";
  `);
  const last = out.split('\n').filter((l) => l.startsWith('RESULT ')).pop()?.slice(7);
  assert.ok(last, `unexpected mongosh output: ${out}`);
  const r = JSON.parse(last);
  assert.deepEqual(r.doc, { name: 'from-mongosh', n: 1 });
  assert.equal(r.count, 3);
  // The default persona: a one-member replica set named docguard.
  if (process.env.DOCGUARD_DIRECT !== '1') assert.equal(r.hello, 'docguard');
});

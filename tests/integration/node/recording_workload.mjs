// The Node.js driver's share of tests/integration/python/test_recording_drivers.py: run as
// `node recording_workload.mjs` with WORKLOAD_URI (credentials and appName in it), WORKLOAD_DB
// and WORKLOAD_COLL set. Not a test file. Prints one JSON line of what it read.
import { MongoClient } from 'mongodb';

const { WORKLOAD_URI, WORKLOAD_DB, WORKLOAD_COLL } = process.env;
const client = new MongoClient(WORKLOAD_URI, { retryWrites: true, maxPoolSize: 1 });
await client.connect();
const coll = client.db(WORKLOAD_DB).collection(WORKLOAD_COLL);
await coll.insertMany(Array.from({ length: 250 }, (_, i) => ({ i, pad: 'x'.repeat(100) })));
const read = (await coll.find({}, { batchSize: 50 }).toArray()).length; // find + 4 getMores
const early = coll.find({}, { batchSize: 10 });
await early.next();
await early.close(); // killCursors
const updated = await coll.updateOne({ i: 1 }, { $set: { r: 1 } }); // retryable: txnNumber
console.log(JSON.stringify({ read, modified: updated.modifiedCount }));
await client.close();

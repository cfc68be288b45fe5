// mongosh's share of tests/integration/python/test_recording_drivers.py: run as
// `mongosh --quiet --norc URI recording_workload.mongosh.js` with WORKLOAD_DB and WORKLOAD_COLL
// set. Not a test file. Prints one JSON line of what it read.
const coll = db.getSiblingDB(process.env.WORKLOAD_DB).getCollection(process.env.WORKLOAD_COLL);
coll.insertMany(Array.from({ length: 250 }, (_, i) => ({ i, pad: 'x'.repeat(100) })));
const read = coll.find({}).batchSize(50).toArray().length; // find + 4 getMores
const early = coll.find({}).batchSize(10);
early.next();
early.close(); // killCursors
const updated = coll.updateOne({ i: 1 }, { $set: { r: 1 } }); // retryable: txnNumber
print(JSON.stringify({ read, modified: updated.modifiedCount }));

"""What the double adds to FerretDB (double_features.py) and its command record, checked with
PyMongo against the double directly: validators shown by listCollections, $sample, $indexStats,
where reads went. These test the double itself, so they never run through docguard.
"""

from __future__ import annotations

import datetime
import socket
import struct
import uuid

import bson
import pytest
from bson.int64 import Int64
from pymongo.errors import OperationFailure
from pymongo.read_preferences import Secondary

import harness
import rs_double

pytestmark = pytest.mark.skipif(harness.via_docguard(), reason="tests the double itself")

SCHEMA = {"$jsonSchema": {"bsonType": "object", "required": ["a"],
                          "properties": {"a": {"bsonType": "int"}}}}


@pytest.fixture
def client(double):
    c = double_client(double)
    yield c
    c.close()


def double_client(double, **kw):
    import pymongo
    kw.setdefault("heartbeatFrequencyMS", 500)
    kw.setdefault("serverSelectionTimeoutMS", 10000)
    return pymongo.MongoClient(double.uri(), **kw)


def _dbname() -> str:
    return "feat_" + uuid.uuid4().hex[:10]


def _raw_command(address: str, doc: dict, timeout: float = 5.0) -> dict:
    """One OP_MSG command on a fresh socket to one member, exactly as given."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(rs_double._op_msg(7, 0, doc))
        buf = b""
        while len(buf) < 4 or len(buf) < struct.unpack_from("<i", buf)[0]:
            chunk = s.recv(65536)
            assert chunk, "connection closed"
            buf += chunk
    return rs_double._op_msg_body(buf)[1]


def test_validator_shown_by_list_collections(double, client):
    db = client[_dbname()]
    db.v.insert_one({"a": 1})
    db.plain.insert_one({"a": 1})
    double.set_validator(f"{db.name}.v", SCHEMA, level="moderate", action="warn")

    entry = next(db.list_collections(filter={"name": "v"}))
    assert entry["options"]["validator"] == SCHEMA
    assert (entry["options"]["validationLevel"], entry["options"]["validationAction"]) == (
        "moderate", "warn")
    every = {e["name"]: e for e in db.list_collections()}
    assert every["v"]["options"]["validator"] == SCHEMA
    assert "validator" not in every["plain"]["options"]
    # nameOnly: names only, as a server gives them.
    assert sorted(db.list_collection_names()) == ["plain", "v"]
    # Any member shows it (all are the same FerretDB).
    sec = client.get_database(db.name, read_preference=Secondary())
    assert next(sec.list_collections(filter={"name": "v"}))["options"]["validationLevel"] == (
        "moderate")
    # The defaults are the server's; not enforced: a document breaking it is accepted.
    double.set_validator(f"{db.name}.v", {"a": {"$type": "int"}})
    opts = next(db.list_collections(filter={"name": "v"}))["options"]
    assert (opts["validationLevel"], opts["validationAction"]) == ("strict", "error")
    db.v.insert_one({"a": "not an int"})
    double.set_validator(f"{db.name}.v", None)
    assert next(db.list_collections(filter={"name": "v"}))["options"] == {}
    with pytest.raises(ValueError):
        double.set_validator(f"{db.name}.v", SCHEMA, level="lenient")


def test_sample_answered_only_when_enabled(double, client):
    db = client[_dbname()]
    db.c.insert_many([{"i": i} for i in range(300)])

    with pytest.raises(OperationFailure) as off:  # FerretDB's own answer
        list(db.c.aggregate([{"$sample": {"size": 5}}]))
    assert off.value.code == 238

    double.enable_sample(True)
    try:
        docs = list(db.c.aggregate([{"$sample": {"size": 5}}]))
        assert len(docs) == 5 and len({d["_id"] for d in docs}) == 5
        # More than one batch (FerretDB's find batches 101): getMore continues FerretDB's cursor.
        docs = list(db.c.aggregate([{"$sample": {"size": 250}}], batchSize=60))
        assert len(docs) == 250 and len({d["_id"] for d in docs}) == 250
        assert len(list(db.c.aggregate([{"$sample": {"size": 1000}}]))) == 300
        assert list(db.c.aggregate([{"$sample": {"size": 0}}])) == []
        assert list(db.missing.aggregate([{"$sample": {"size": 3}}])) == []
        r = db.command("aggregate", "c", pipeline=[{"$sample": {"size": 2}}], cursor={})
        assert r["cursor"]["ns"] == f"{db.name}.c" and r["cursor"]["id"] == 0
        with pytest.raises(OperationFailure) as bad:
            list(db.c.aggregate([{"$sample": {"size": -1}}]))
        assert bad.value.code == 28747
        # Only the exact pipeline is answered; anything more is FerretDB's to refuse.
        with pytest.raises(OperationFailure) as more:
            list(db.c.aggregate([{"$sample": {"size": 5}}, {"$project": {"i": 1}}]))
        assert more.value.code == 238
        # A secondary answers it too.
        sec = db.get_collection("c", read_preference=Secondary())
        assert len(list(sec.aggregate([{"$sample": {"size": 4}}]))) == 4
        answered = double.commands(command="aggregate", collection="c", outcome="answered")
        assert len(answered) >= 7 and any(c["member"] != 0 for c in answered)
    finally:
        double.enable_sample(False)
    with pytest.raises(OperationFailure):
        list(db.c.aggregate([{"$sample": {"size": 5}}]))


def test_index_stats(double, client):
    db = client[_dbname()]
    db.c.insert_one({"a": 1, "b": 2})
    db.c.create_index("a")
    db.c.create_index([("b", 1), ("a", -1)], name="b_a", unique=True)
    ns = f"{db.name}.c"
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    double.set_index_stats(ns, {"a_1": 7, "b_a": 2**40})

    stats = {d["name"]: d for d in db.c.aggregate([{"$indexStats": {}}])}
    assert sorted(stats) == ["_id_", "a_1", "b_a"]
    assert [stats[n]["accesses"]["ops"] for n in ("_id_", "a_1", "b_a")] == [0, 7, 2**40]
    assert all(isinstance(d["accesses"]["ops"], Int64) for d in stats.values())
    b_a = stats["b_a"]
    assert list(b_a["key"].items()) == [("b", 1), ("a", -1)]
    assert b_a["spec"]["unique"] is True and b_a["spec"]["name"] == "b_a"
    assert b_a["host"] == double.addresses[0]
    assert b_a["accesses"]["since"].replace(tzinfo=datetime.timezone.utc) >= before
    # A trailing $match of equalities is evaluated; other stages are refused.
    only = list(db.c.aggregate([{"$indexStats": {}}, {"$match": {"name": "a_1"}}]))
    assert [d["name"] for d in only] == ["a_1"]
    with pytest.raises(OperationFailure) as e:
        list(db.c.aggregate([{"$indexStats": {}}, {"$sort": {"name": 1}}]))
    assert e.value.code == 238
    # A missing collection has no indexes.
    assert list(db.missing.aggregate([{"$indexStats": {}}])) == []

    # Per member: member 2 has its own table; member 1 keeps the one for every member.
    double.set_index_stats(ns, {"a_1": 3}, member=2)
    cmd = {"aggregate": "c", "pipeline": [{"$indexStats": {}}], "cursor": {}, "$db": db.name,
           "$readPreference": {"mode": "secondary"}}
    for member, ops in ((1, 7), (2, 3)):
        r = _raw_command(double.addresses[member], cmd)
        got = {d["name"]: d for d in r["cursor"]["firstBatch"]}
        assert got["a_1"]["accesses"]["ops"] == ops and got["a_1"]["host"] == (
            double.addresses[member])
    double.set_index_stats(ns, None)
    assert {d["accesses"]["ops"] for d in db.c.aggregate([{"$indexStats": {}}])} == {0}


def test_answers_use_the_clients_authentication(ferret_auth):
    """$sample and $indexStats run their find/listIndexes on the client's own upstream
    connection, so they work where FerretDB requires SCRAM."""
    d = harness.start_double(ferret_auth)
    c = double_client(d, username=harness.ADMIN_USER, password=harness.ADMIN_PASSWORD,
                      authSource="admin")
    try:
        db = c[_dbname()]
        db.c.insert_many([{"i": i} for i in range(10)])
        d.enable_sample(True)
        assert len(list(db.c.aggregate([{"$sample": {"size": 4}}]))) == 4
        d.set_index_stats(f"{db.name}.c", {"_id_": 5})
        assert [s["accesses"]["ops"] for s in db.c.aggregate([{"$indexStats": {}}])] == [5]
    finally:
        c.close()
        d.close()


def test_collstats_relayed_from_ferretdb(client):
    """FerretDB answers both itself (the double passes them through): the fields a client reads."""
    db = client[_dbname()]
    db.c.insert_many([{"i": i} for i in range(10)])
    db.c.create_index("i")
    st = next(db.c.aggregate([{"$collStats": {"storageStats": {}}}]))["storageStats"]
    assert st["count"] == 10 and st["nindexes"] == 2
    assert all(k in st for k in ("size", "avgObjSize", "storageSize", "totalIndexSize"))
    cs = db.command("collStats", "c")
    assert cs["count"] == 10 and cs["nindexes"] == 2 and cs["avgObjSize"] > 0


def test_secondary_reads_recorded(double):
    c = double_client(double, appName="feature-test")
    try:
        db = c[_dbname()]
        db.c.insert_many([{"i": i} for i in range(5)])
        double.clear_commands()
        sec = db.get_collection("c", read_preference=Secondary())
        for _ in range(4):
            assert len(list(sec.find({}))) == 5
        assert sec.count_documents({}) == 5
        reads = [r for r in double.commands(db=db.name) if r["command"] in ("find", "aggregate")]
        assert len(reads) == 5
        assert all(r["member"] in (1, 2) and r["read_preference"] == "secondary"
                   and r["collection"] == "c" and r["app_name"] == "feature-test"
                   and r["outcome"] == "relayed" for r in reads), reads
        assert not double.commands(0, db=db.name)
        # Per-member queries agree with the whole record.
        assert sorted(r["seq"] for m in (1, 2) for r in double.commands(m, db=db.name)
                      if r["command"] in ("find", "aggregate")) == [r["seq"] for r in reads]
        # A primary read: on member 0, with no $readPreference (PyMongo sends none for primary).
        db.c.find_one()
        prim = double.commands(0, command="find", db=db.name)
        assert len(prim) == 1 and prim[0]["read_preference"] is None
        # getMore names its collection.
        list(sec.find({}, batch_size=2))
        more = double.commands(command="getMore", db=db.name)
        assert more and all(r["collection"] == "c" and r["member"] in (1, 2) for r in more)
        # Refused commands are recorded as such.
        r = _raw_command(double.addresses[1], {"find": "c", "$db": db.name})
        assert r["code"] == 13435
        assert double.commands(1, db=db.name, outcome="refused")[-1]["command"] == "find"

        double.clear_commands(1)
        assert not double.commands(1) and double.commands(0, db=db.name)
        double.clear_commands()
        assert not double.commands(db=db.name)
        assert double.status()["members"][0]["forwarded"]["insert"] >= 1  # counts stay
        db.c.find_one()
        assert [r["command"] for r in double.commands(db=db.name)] == ["find"]
    finally:
        c.close()


def test_record_is_bounded(double):
    m = double.double.members[1]
    db = _dbname()
    for _ in range(rs_double.COMMAND_RECORD + 5):
        double.double._record(m, {}, "find", {"find": "c", "$db": db}, "relayed")
    assert len(double.commands(1)) == rs_double.COMMAND_RECORD


def test_control_port(double_process):
    """The same features over the CLI's line protocol (harness.DoubleProcess sends the lines)."""
    d = double_process
    c = double_client(d, appName="control-test")
    try:
        db = c[_dbname()]
        db.c.insert_many([{"i": i} for i in range(20)])
        db.c.create_index("i")
        ns = f"{db.name}.c"
        d.set_validator(ns, SCHEMA, "moderate", "error")
        opts = next(db.list_collections(filter={"name": "c"}))["options"]
        assert opts["validator"] == SCHEMA and opts["validationLevel"] == "moderate"
        d.set_validator(ns, None)
        assert next(db.list_collections(filter={"name": "c"}))["options"] == {}

        d.enable_sample(True)
        assert len(list(db.c.aggregate([{"$sample": {"size": 3}}]))) == 3
        assert d.status()["features"]["sample"] is True
        d.enable_sample(False)
        with pytest.raises(OperationFailure):
            list(db.c.aggregate([{"$sample": {"size": 3}}]))

        d.set_index_stats(ns, {"i_1": 11})
        stats = {s["name"]: s["accesses"]["ops"] for s in db.c.aggregate([{"$indexStats": {}}])}
        assert stats == {"_id_": 0, "i_1": 11}

        d.clear_commands()
        list(db.get_collection("c", read_preference=Secondary()).find())
        finds = d.commands(command="find", db=db.name)
        assert len(finds) == 1 and finds[0]["member"] in (1, 2)
        assert finds[0]["app_name"] == "control-test" and finds[0]["read_preference"] == "secondary"
        assert d.commands(finds[0]["member"], command="find", db=db.name) == finds
        assert d.commands(0, command="find", db=db.name) == []
        db.c.find_one()  # on the primary: no $readPreference, matched with null
        assert len(d.commands(0, command="find", db=db.name, read_preference=None)) == 1
        d.clear_commands(finds[0]["member"])
        assert [r["member"] for r in d.commands(command="find", db=db.name)] == [0]
        with pytest.raises(RuntimeError):
            d.command("validator nodot {}")
        with pytest.raises(RuntimeError):
            d.command("indexstats db.c {not json")
    finally:
        c.close()


def test_hello_delay_holds_back_one_member(double):
    import time
    hello = {"hello": 1, "$db": "admin"}
    double.delay_hello(1, 0.4)
    t0 = time.monotonic()
    reply = _raw_command(double.addresses[1], hello)
    assert time.monotonic() - t0 >= 0.4
    assert reply["me"] == double.addresses[1] and reply["secondary"] is True
    t0 = time.monotonic()
    _raw_command(double.addresses[0], hello)
    assert time.monotonic() - t0 < 0.4  # the others answer at once
    double.delay_hello(1, 0)
    t0 = time.monotonic()
    _raw_command(double.addresses[1], hello)
    assert time.monotonic() - t0 < 0.4
    with pytest.raises(ValueError):
        double.delay_hello(1, -1)

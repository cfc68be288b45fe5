"""The query guardrail through docguard with PyMongo against FerretDB: unindexed queries of the
scoped apps are refused with the server's notablescan error (291) and an errInfo naming the rule kind,
the shape and the index that would serve; indexed ones pass; writes are refused per statement
with the batch semantics of the code-121 path; indexes are learned from introspection and from
commands through docguard; unknown indexes never block; candidates only count; exceptions
expire; max_time_ms reaches the upstream. FerretDB 1.24 has no notablescan, so every 291 here
comes from docguard."""

from __future__ import annotations

import socket
import struct
import threading
import time

import bson
import pymongo
import pytest
from pymongo.errors import BulkWriteError, OperationFailure, WriteError

import harness

pytestmark = pytest.mark.proxy

CONFIG = """\
rules:
  - id: ci-indexes
    match: "guard.*"
    apps: ["ci-*"]
    action: block
    require_index: true
    allow:
      - {shape: "{sku: ?}", owner: team-x, until: 2999-12-31}
      - {shape: "{legacy: ?}", owner: team-y, until: 2020-01-31}
  - id: web-watch
    match: "guard.*"
    apps: ["web"]
    action: warn
    require_index: true
candidate_rules:
  - id: cand-indexes
    match: "cand.*"
    action: block
    require_index: true
advisor:
  live_sample_every: 1
introspection:
  max_commands_per_second: 50
  jitter: 0
  interval: 2s
"""


def _status(proc: harness.Proc) -> dict:
    return harness.admin_json(proc, "/status")


def _passes(proc: harness.Proc) -> int:
    return _status(proc)["introspection"].get("passes", 0)


_wait_for_pass = harness.wait_for_introspection_pass


def _metric(proc: harness.Proc, name: str, **labels: str) -> float:
    return harness.metric_sum(harness.fetch_metrics(f"127.0.0.1:{proc.ports['admin']}"), name,
                              **labels)


def _load(client: pymongo.MongoClient) -> None:
    db = client.guard
    db.orders.insert_many([{"_id": i, "status": "open" if i % 2 else "done", "customer": i % 5,
                            "created": i, "total": i * 10, "legacy": i, "sku": i}
                           for i in range(20)])
    db.orders.create_index("status")
    db.orders.create_index([("customer", 1), ("created", -1)])
    client.cand.orders.insert_many([{"_id": i, "x": i} for i in range(5)])
    db.jobs.insert_many([{"_id": i, "status": "open" if i % 2 else "done", "created": i}
                         for i in range(20)])
    db.jobs.create_index([("created", -1)])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("guardrail")
    fdb = harness.start_ferretdb(workdir)
    direct_uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    direct = pymongo.MongoClient(direct_uri, directConnection=True)
    _load(direct)
    config = workdir / "guardrail.yaml"
    config.write_text(CONFIG)
    dg = harness.start_docguard(direct_uri, workdir, config=config)
    uri = f"mongodb://127.0.0.1:{dg.ports['listen']}"
    clients = {app: pymongo.MongoClient(uri, appname=app, serverSelectionTimeoutMS=10000)
               for app in ("ci-nightly", "web")}
    try:
        _wait_for_pass(dg)
        yield dg, direct, clients
    finally:
        for c in clients.values():
            c.close()
        direct.close()
        dg.stop()
        fdb.stop()


def test_unindexed_find_from_ci_is_refused_with_291_and_errinfo(cluster):
    dg, _, clients = cluster
    with pytest.raises(OperationFailure) as refused:
        list(clients["ci-nightly"].guard.orders.find({"total": 30}))
    err = refused.value
    assert err.code == 291
    assert err.details["codeName"] == "NoQueryExecutionPlans"
    assert err.details["errmsg"].startswith(
        "No indexed plans available, and running with 'notablescan'")
    # The rule's kind, not its id, glob or line: the operator's configuration stays in the logs
    # and /status (errors.reveal_rule_source).
    assert err.details["errInfo"] == {"rule": "require_index", "shape": "{total: ?}",
                                      "index": {"total": 1}}
    assert "ci-indexes" not in err.details["errmsg"]
    before = _metric(dg, "docguard_violations_total", rule="require_index", action="warn",
                     app="web")
    # The same find from another app passes, and the warn rule for that app counts it.
    assert len(list(clients["web"].guard.orders.find({"total": 30}))) == 1
    assert _metric(dg, "docguard_violations_total", rule="require_index", action="warn",
                   app="web") == before + 1
    assert _metric(dg, "docguard_violations_total", rule="require_index", action="block",
                   app="ci-nightly") >= 1


def test_served_queries_pass(cluster):
    _, _, clients = cluster
    orders = clients["ci-nightly"].guard.orders
    assert orders.find_one({"_id": 3})["_id"] == 3
    assert len(list(orders.find({"status": "open"}))) == 10
    assert len(list(orders.find({"customer": 2}).sort("created", -1))) == 4  # compound prefix
    assert len(list(orders.find({"$or": [{"status": "done"}, {"customer": 1}]}))) >= 10
    assert len(list(orders.find({}))) == 20  # empty filter: the server allows it too
    assert orders.count_documents({"status": "open"}) == 10
    assert len(orders.distinct("total", {"status": "open"})) == 10
    assert len(list(orders.aggregate([{"$match": {"status": "open"}},
                                      {"$group": {"_id": "$customer"}}]))) == 5


def test_what_the_servers_planner_serves_passes_and_forced_scans_are_refused(cluster):
    """An index on {created: -1}: a range on its field, the sort it gives and a hint naming it
    are indexed plans under notablescan; a $natural hint, and a $match the optimizer moves ahead
    of an $addFields it does not read, are collection scans."""
    _, _, clients = cluster
    jobs = clients["ci-nightly"].guard.jobs
    assert len(list(jobs.find({"status": "open", "created": {"$gte": 10}}))) == 5
    assert len(list(jobs.find({"status": "open"}).sort("created", -1).limit(20))) == 10
    assert len(list(jobs.find({"status": "open"}).hint("created_-1"))) == 10
    with pytest.raises(OperationFailure) as natural:
        list(jobs.find({"status": "open"}).hint([("$natural", 1)]))
    assert natural.value.code == 291
    assert "$natural" in natural.value.details["errmsg"]
    assert "'notablescan'" in natural.value.details["errmsg"]
    with pytest.raises(OperationFailure) as behind:
        list(jobs.aggregate([{"$addFields": {"x": 1}}, {"$match": {"status": "open"}}]))
    assert behind.value.code == 291
    assert behind.value.details["errInfo"]["index"] == {"status": 1}
    # A $match on the field $addFields computes stays behind it: an empty query, which scans.
    assert len(list(jobs.aggregate([{"$addFields": {"status": "x"}},
                                    {"$match": {"status": "x"}}]))) == 20


def test_unindexed_or_branch_and_writes_are_refused(cluster):
    _, direct, clients = cluster
    orders = clients["ci-nightly"].guard.orders
    with pytest.raises(OperationFailure) as refused:
        list(orders.find({"$or": [{"status": "open"}, {"total": 5}]}))
    assert refused.value.code == 291
    assert refused.value.details["errInfo"]["index"] == {"total": 1}
    with pytest.raises(OperationFailure) as refused:
        orders.count_documents({"total": 5})
    assert refused.value.code == 291
    with pytest.raises(WriteError) as write_refused:
        orders.update_many({"total": {"$gt": 100}}, {"$set": {"flag": 1}})
    assert write_refused.value.code == 291
    assert write_refused.value.details["errInfo"]["shape"] == "{total: {$gt: ?}}"
    with pytest.raises(WriteError) as write_refused:
        orders.delete_many({"total": {"$gt": 100}})
    assert write_refused.value.code == 291
    assert direct.guard.orders.count_documents({"flag": 1}) == 0
    assert direct.guard.orders.count_documents({}) == 20


def test_bulk_writes_keep_the_batch_semantics(cluster):
    _, direct, clients = cluster
    orders = clients["ci-nightly"].guard.orders
    ops = [pymongo.UpdateOne({"_id": 1}, {"$set": {"bulk": "a"}}),
           pymongo.UpdateMany({"total": {"$gte": 0}}, {"$set": {"bulk": "b"}}),
           pymongo.UpdateOne({"_id": 2}, {"$set": {"bulk": "c"}})]
    with pytest.raises(BulkWriteError) as ordered:
        orders.bulk_write(ops, ordered=True)
    result = ordered.value.details
    assert result["nMatched"] == 1
    assert [(e["index"], e["code"]) for e in result["writeErrors"]] == [(1, 291)]
    assert direct.guard.orders.find_one({"_id": 2}).get("bulk") is None  # stopped at index 1
    with pytest.raises(BulkWriteError) as unordered:
        orders.bulk_write(ops, ordered=False)
    result = unordered.value.details
    assert result["nMatched"] == 2
    assert [(e["index"], e["code"]) for e in result["writeErrors"]] == [(1, 291)]
    assert direct.guard.orders.find_one({"_id": 2})["bulk"] == "c"
    assert direct.guard.orders.count_documents({"bulk": "b"}) == 0


def test_an_index_created_through_docguard_applies_at_once(cluster):
    _, _, clients = cluster
    orders = clients["ci-nightly"].guard.orders
    with pytest.raises(OperationFailure):
        list(orders.find({"created": 3}))
    clients["web"].guard.orders.create_index("created")
    assert len(list(orders.find({"created": 3}))) == 1


def test_an_index_created_directly_applies_after_the_next_read(cluster):
    dg, direct, clients = cluster
    orders = clients["ci-nightly"].guard.orders
    with pytest.raises(OperationFailure):
        list(orders.find({"legacy": 3, "other": 1}))
    direct.guard.orders.create_index("other")
    passes = _passes(dg)
    _wait_for_pass(dg, after=passes + 1)  # a whole pass that started after the index
    assert list(orders.find({"legacy": 3, "other": 1})) == []


def test_exceptions_apply_until_they_expire(cluster):
    dg, _, clients = cluster
    orders = clients["ci-nightly"].guard.orders
    assert len(list(orders.find({"sku": 4}))) == 1  # tolerated until 2999-12-31
    with pytest.raises(OperationFailure) as refused:
        list(orders.find({"legacy": 4}))  # its exception ended on 2020-01-31
    assert refused.value.details["errInfo"]["shape"] == "{legacy: ?}"
    exceptions = _status(dg)["guardrail"]["exceptions"]
    assert {"rule": "ci-indexes", "candidate": False, "shape": "{legacy: ?}", "owner": "team-y",
            "until": "2020-01-31", "expired": True} in exceptions
    assert any(e["shape"] == "{sku: ?}" and not e["expired"] for e in exceptions)
    list(orders.find({"sku": 5}))
    with pytest.raises(OperationFailure):
        list(orders.find({"legacy": 5}))
    expired_logs = [line for line in harness.read_log_lines(dg.log_path)
                    if "guardrail exception expired" in line]
    assert len(expired_logs) == 1  # logged once, however often it is met


def test_a_candidate_guardrail_blocks_nothing_and_counts_exactly(cluster):
    dg, _, clients = cluster
    before = _metric(dg, "docguard_candidate_violations_total", rule="require_index",
                     action="block", db="cand", collection="orders")
    for i in range(3):
        assert len(list(clients["ci-nightly"].cand.orders.find({"x": i}))) == 1
    assert _metric(dg, "docguard_candidate_violations_total", rule="require_index",
                   action="block", db="cand", collection="orders") == before + 3
    assert _metric(dg, "docguard_violations_total", rule="require_index", db="cand") == 0


def test_explain_hello_and_getmore_are_never_judged(cluster):
    _, _, clients = cluster
    client = clients["ci-nightly"]
    client.guard.command("explain", {"find": "orders", "filter": {"total": 5}})
    client.admin.command("hello")
    assert len(list(client.guard.orders.find({}, batch_size=2))) == 20  # getMore after the first


def test_introspection_off_blocks_nothing_and_counts_unknown(tmp_path):
    fdb = harness.start_ferretdb(tmp_path)
    direct_uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    config = tmp_path / "off.yaml"
    config.write_text(CONFIG.replace("  interval: 2s\n", "  enabled: false\n"))
    dg = harness.start_docguard(direct_uri, tmp_path, config=config)
    client = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}", appname="ci-job")
    try:
        client.guard.orders.insert_many([{"_id": i, "total": i} for i in range(3)])
        for i in range(4):
            assert len(list(client.guard.orders.find({"total": i}))) == (1 if i < 3 else 0)
        assert _metric(dg, "docguard_guardrail_unknown_total", db="guard",
                       collection="orders") == 4
        assert _status(dg)["guardrail"]["unknown"] == {"guard.orders": 4}
        # A client's own listIndexes is a complete list: from then on the guardrail judges.
        list(client.guard.orders.list_indexes())
        with pytest.raises(OperationFailure) as refused:
            list(client.guard.orders.find({"total": 1}))
        assert refused.value.code == 291
    finally:
        client.close()
        dg.stop()
        fdb.stop()


class RecordingRelay:
    """A TCP relay between docguard and FerretDB that keeps the body of every OP_MSG docguard
    sends upstream, to see what the server was asked."""

    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.upstream_port))
            threading.Thread(target=self._replies, args=(up, conn), daemon=True).start()
            threading.Thread(target=self._requests, args=(conn, up), daemon=True).start()

    @staticmethod
    def _replies(up: socket.socket, conn: socket.socket) -> None:
        try:
            while data := up.recv(65536):
                conn.sendall(data)
        except OSError:
            pass
        conn.close()

    def _requests(self, conn: socket.socket, up: socket.socket) -> None:
        buffer = b""
        try:
            while data := conn.recv(65536):
                buffer += data
                while len(buffer) >= 16:
                    length, _, _, opcode = struct.unpack("<iiii", buffer[:16])
                    if len(buffer) < length:
                        break
                    message, buffer = buffer[:length], buffer[length:]
                    if opcode == 2013 and message[20] == 0:  # OP_MSG whose first section is the body
                        body_length = struct.unpack("<i", message[21:25])[0]
                        with self.lock:
                            self.bodies.append(bson.decode(message[21:21 + body_length]))
                    up.sendall(message)
        except OSError:
            pass
        up.close()

    def finds(self, collection: str) -> list[dict]:
        with self.lock:
            return [b for b in self.bodies if b.get("find") == collection]


def test_max_time_ms_reaches_the_upstream_unless_the_query_has_one(tmp_path):
    fdb = harness.start_ferretdb(tmp_path)
    relay = RecordingRelay(fdb.ports["listen"])
    config = tmp_path / "time.yaml"
    config.write_text('rules:\n  - match: "timed.*"\n    apps: ["batch-*"]\n'
                      "    max_time_ms: 1500\nintrospection:\n  enabled: false\n")
    dg = harness.start_docguard(f"mongodb://127.0.0.1:{relay.port}", tmp_path, config=config)
    uri = f"mongodb://127.0.0.1:{dg.ports['listen']}"
    batch = pymongo.MongoClient(uri, appname="batch-report")
    web = pymongo.MongoClient(uri, appname="web")
    try:
        batch.timed.items.insert_one({"_id": 1, "a": 1})
        assert len(list(batch.timed.items.find({"a": 1}))) == 1
        assert len(list(batch.timed.items.find({"a": 1}).max_time_ms(700))) == 1
        assert len(list(web.timed.items.find({"a": 1}))) == 1
        sent = [b.get("maxTimeMS") for b in relay.finds("items")]
        assert sent == [1500, 700, None]
    finally:
        batch.close()
        web.close()
        dg.stop()
        relay.close()
        fdb.stop()


def test_an_empty_in_list_is_served_as_the_server_serves_it(cluster):
    """{$in: []} matches nothing: the server answers from an EOF plan, no index needed, in a
    find, an $or branch, a count and a delete. docguard passes them (counted as unknown)."""
    _, direct, clients = cluster
    orders = clients["ci-nightly"].guard.orders
    assert list(orders.find({"total": {"$in": []}})) == []
    assert list(orders.find({"total": 5, "customer": {"$in": []}})) == []
    assert len(list(orders.find({"$or": [{"status": "open"}, {"total": {"$in": []}}]}))) == 10
    assert orders.count_documents({"total": {"$in": []}}) == 0
    assert orders.delete_many({"total": {"$in": []}}).deleted_count == 0
    assert direct.guard.orders.count_documents({}) == 20
    # A $natural hint on an indexed equality is still refused with 291.
    with pytest.raises(OperationFailure) as natural:
        list(orders.find({"status": "open"}).hint([("$natural", 1)]))
    assert natural.value.code == 291


def test_an_update_with_a_sort_an_index_provides_is_served(cluster):
    """An updateOne with `sort` (8.0): the sort is part of the plan, and an index on the sort
    field serves the statement as it serves a find with that sort. FerretDB 1.24 predates the
    field: what is checked is that docguard forwards the statement (FerretDB answers it, whatever
    it answers) and still refuses the same statement sorted on an unindexed field."""
    _, _, clients = cluster
    db = clients["ci-nightly"].guard
    statement = {"q": {"total": 7}, "u": {"$set": {"seen": 1}}, "sort": {"status": 1}}
    try:
        reply = db.command({"update": "orders", "updates": [statement]})
        assert reply["ok"] == 1
        assert all(e.get("code") != 291 for e in reply.get("writeErrors", [])), reply
    except OperationFailure as e:
        assert e.code != 291, e.details  # FerretDB's own answer to a field it does not know
    unsorted = dict(statement, sort={"total": 1})
    reply = db.command({"update": "orders", "updates": [unsorted]})
    assert [e["code"] for e in reply.get("writeErrors", [])] == [291], reply

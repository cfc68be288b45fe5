"""The workload ledger through docguard with PyMongo against FerretDB: known counts of several
query shapes from two apps come back exact in /report.json's `workload`, ranked by upstream time,
with their apps, whether an index serves them and the index each unindexed one needs; the
unindexed operations are counted per app in /metrics; 10,000 distinct shapes leave the ledger
within workload.max_shapes (the rest counted as overflow, nothing lost) and /metrics bounded."""

from __future__ import annotations


import pymongo
import pytest

import harness

pytestmark = pytest.mark.proxy

MAX_SHAPES = 50

CONFIG = f"""\
workload:
  max_shapes: {MAX_SHAPES}
introspection:
  max_commands_per_second: 50
  jitter: 0
  interval: 2s
"""


def _workload(proc: harness.Proc) -> tuple[list[dict], dict]:
    report = harness.admin_json(proc, "/report.json")
    return report["workload"], report["workload_overflow"]


def _entry(workload: list[dict], command: str, shape: str, collection: str = "items") -> dict:
    found = [w for w in workload
             if w["command"] == command and w["shape"] == shape and w["collection"] == collection]
    assert len(found) == 1, (command, shape, [(w["command"], w["shape"]) for w in workload])
    return found[0]


def _apps(entry: dict) -> dict[str, int]:
    return {a["app"]: a["count"] for a in entry["apps"]}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("workload")
    fdb = harness.start_ferretdb(workdir)
    direct_uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    direct = pymongo.MongoClient(direct_uri, directConnection=True)
    db = direct.ledger
    db.items.insert_many([{"_id": i, "status": "open" if i % 2 else "done", "customer": i % 7}
                          for i in range(60)])
    db.items.create_index("status")
    # Large documents for the slow shape: each of its finds returns about 2 MB.
    db.blobs.insert_many([{"_id": i, "kind": "big", "blob": "x" * 40_000} for i in range(50)])
    db.blobs.create_index("kind")
    db.flood.insert_one({"_id": 0})
    config = workdir / "workload.yaml"
    config.write_text(CONFIG)
    dg = harness.start_docguard(direct_uri, workdir, config=config)
    uri = f"mongodb://127.0.0.1:{dg.ports['listen']}"
    clients = {app: pymongo.MongoClient(uri, appname=app, serverSelectionTimeoutMS=10000)
               for app in ("app-a", "app-b")}
    try:
        harness.wait_for_introspection_pass(dg)
        yield dg, clients
    finally:
        for c in clients.values():
            c.close()
        direct.close()
        dg.stop()
        fdb.stop()


@pytest.fixture(scope="module")
def traffic(cluster):
    """Known counts of several shapes from two apps."""
    dg, clients = cluster
    a, b = clients["app-a"].ledger, clients["app-b"].ledger
    for i in range(30):
        assert len(list(a.items.find({"status": "open"}).limit(3))) == 3
    for i in range(10):
        assert len(list(b.items.find({"status": "done"}).limit(3))) == 3
    for i in range(20):
        list(a.items.find({"customer": i % 7}))  # no index on customer
    for i in range(8):
        assert len(list(b.blobs.find({"kind": "big"}))) == 50  # the slow one: ~2 MB each
    for i in range(6):
        assert a.command("count", "items", query={"status": "open"})["n"] == 30
    for i in range(5):
        a.items.update_many({"customer": i}, {"$set": {"seen": True}})
    return dg


def test_exact_counts_per_shape_and_app(traffic):
    workload, _ = _workload(traffic)
    status = _entry(workload, "find", "{status: ?}")
    assert status["count"] == 40
    assert _apps(status) == {"app-a": 30, "app-b": 10}
    assert status["documents"] == 120  # cursor.firstBatch: 3 each
    assert status["errors"] == 0
    assert status["verdicts"] == {"passed": 40, "warned": 0, "blocked": 0, "candidate": 0}
    assert status["indexed"] is True and status["index"] is None
    customer = _entry(workload, "find", "{customer: ?}")
    assert customer["count"] == 20 and _apps(customer) == {"app-a": 20}
    count = _entry(workload, "count", "{status: ?}")
    assert count["count"] == 6 and count["documents"] == 6 * 30  # n
    update = _entry(workload, "update", "{customer: ?}")
    assert update["count"] == 5 and _apps(update) == {"app-a": 5}
    big = _entry(workload, "find", "{kind: ?}", collection="blobs")
    assert big["count"] == 8 and _apps(big) == {"app-b": 8} and big["documents"] == 400
    for entry in (status, customer, count, update, big):
        assert entry["db"] == "ledger"
        assert 0 < entry["p99_micros"] and entry["total_micros"] >= entry["count"]


def test_ranked_by_total_time_and_the_slow_shape_costs_most_per_operation(traffic):
    workload, _ = _workload(traffic)
    totals = [w["total_micros"] for w in workload]
    assert totals == sorted(totals, reverse=True)
    # Upstream time is measured, so which shape's total is largest depends on the machine; what
    # each operation costs does not: a 2 MB find takes longer than a find of three small documents.
    big = _entry(workload, "find", "{kind: ?}", collection="blobs")
    small = _entry(workload, "find", "{status: ?}")
    assert big["total_micros"] / big["count"] > small["total_micros"] / small["count"], [
        (w["collection"], w["shape"], w["count"], w["total_micros"]) for w in workload]


def test_unindexed_shapes_name_the_index_they_need(traffic):
    workload, _ = _workload(traffic)
    for command in ("find", "update"):
        entry = _entry(workload, command, "{customer: ?}")
        assert entry["indexed"] is False
        assert entry["index"] == {"customer": 1}
    assert _entry(workload, "find", "{kind: ?}", collection="blobs")["indexed"] is True
    samples = harness.fetch_metrics(f"127.0.0.1:{traffic.ports['admin']}")
    assert harness.metric_sum(samples, "docguard_unindexed_operations_total", db="ledger",
                              collection="items", app="app-a") == 25
    assert harness.metric_sum(samples, "docguard_unindexed_operations_total", app="app-b") == 0
    code, html = harness.http_get(f"http://127.0.0.1:{traffic.ports['admin']}/report")
    assert code == 200 and "<h2>Workload</h2>" in html and "{customer: 1}" in html


def test_ten_thousand_distinct_shapes_stay_within_the_bound(cluster, traffic):
    dg, clients = cluster
    before, before_overflow = _workload(dg)
    sent = sum(w["count"] for w in before) + before_overflow["count"]
    flood = clients["app-a"].ledger
    # One update batch of 1,000 statements each with a field of its own: 10,000 shapes.
    for batch in range(10):
        updates = [{"q": {f"f{batch * 1000 + i}": 1}, "u": {"$set": {"x": 1}}}
                   for i in range(1000)]
        assert flood.command("update", "flood", updates=updates)["ok"] == 1
    workload, overflow = _workload(dg)
    assert len(workload) <= MAX_SHAPES
    assert overflow["max_shapes"] == MAX_SHAPES
    assert sum(w["count"] for w in workload) + overflow["count"] == sent + 10_000
    assert overflow["count"] >= 10_000 - MAX_SHAPES
    # The heavy shapes are still there, counted as before.
    assert _entry(workload, "find", "{kind: ?}", collection="blobs")["count"] == 8
    assert _entry(workload, "find", "{status: ?}")["count"] == 40
    # /metrics: one series for the flood's unindexed operations, no label per shape.
    text = harness.http_get(f"http://127.0.0.1:{dg.ports['admin']}/metrics")[1]
    samples = harness.parse_prometheus(text)
    assert harness.metric_sum(samples, "docguard_unindexed_operations_total", db="ledger",
                              collection="flood", app="app-a") == 10_000
    assert "f9999" not in text
    assert len([line for line in text.splitlines() if line and not line.startswith("#")]) < 10_000

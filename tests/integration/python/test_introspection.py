"""docguard reads the database it guards: indexes, validators and documents written before it
started count, with no traffic at all (FerretDB with no auth, and with SCRAM and a credentials
file); catalog commands seen in traffic count at once; introspection can be turned off."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pymongo
import pytest
from pymongo.errors import WriteError

import harness

pytestmark = pytest.mark.proxy


def _config(path: Path, extra: str = "") -> Path:
    path.write_text(
        "rules:\n"
        "  - match: \"intro.items\"\n"
        "    action: block\n"
        "    array_length: { tags: 1000 }\n"
        "advisor:\n"
        "  live_sample_every: 1\n"
        "introspection:\n"
        "  max_commands_per_second: 50\n"
        "  jitter: 0\n" + extra)
    return path


def _status(proc: harness.Proc) -> dict:
    code, body = harness.http_get(f"http://127.0.0.1:{proc.ports['admin']}/status")
    assert code == 200, body
    return json.loads(body)


def _report(proc: harness.Proc) -> dict:
    code, body = harness.http_get(f"http://127.0.0.1:{proc.ports['admin']}/report.json")
    assert code == 200, body
    return json.loads(body)


def _wait_for_pass(proc: harness.Proc, passes: int = 1, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = _status(proc)
        if status["introspection"].get("passes", 0) >= passes:
            return status
        time.sleep(0.2)
    raise AssertionError(f"no introspection pass within {timeout} s: {_status(proc)}")


def _load(client: pymongo.MongoClient) -> None:
    db = client.intro
    db.orders.insert_many([{"_id": i, "customerId": i % 7, "total": i} for i in range(50)])
    db.orders.create_index("customerId")
    db.products.insert_one({"_id": "long", "tags": list(range(5000))})
    db.products.insert_many([{"_id": i, "tags": [i]} for i in range(30)])
    db.items.insert_one({"_id": 7, "tags": list(range(950))})


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A FerretDB holding data written before docguard starts, and docguard in front of it."""
    workdir = tmp_path_factory.mktemp("introspection")
    fdb = harness.start_ferretdb(workdir)
    direct_uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    direct = pymongo.MongoClient(direct_uri, directConnection=True)
    _load(direct)
    dg = harness.start_docguard(direct_uri, workdir,
                                config=_config(workdir / "docguard.yaml"))
    try:
        yield dg, direct
    finally:
        direct.close()
        dg.stop()
        fdb.stop()


def test_stored_documents_and_indexes_count_with_no_traffic(cluster):
    dg, _ = cluster
    status = _wait_for_pass(dg)
    assert status["introspection"]["last_result"] in ("ok", "partial"), status["introspection"]
    orders = status["collection_facts"]["intro.orders"]
    assert orders["source"] == "cluster"
    assert orders["documents"] == 50
    assert "customerId_1" in orders["indexes"]
    assert orders["validator"] == "none"
    assert orders["last_read"] is not None
    # FerretDB 1.24 has no $sample (238 NotImplemented): the documents were read with find.
    assert orders["sample_method"] == "find"
    report = _report(dg)
    large = harness.findings(report, collection="products", kind="large_array")
    assert large and large[0]["field"] == "tags" and large[0]["source"] == "sample", large
    no_validator = harness.findings(report, collection="orders", kind="no_validator")
    assert no_validator and no_validator[0]["source"] == "metadata"


def test_an_index_created_before_start_means_no_unindexed_finding(cluster):
    dg, _ = cluster
    _wait_for_pass(dg)
    client = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}")
    for i in range(20):
        list(client.intro.orders.find({"customerId": i % 7}))
        list(client.intro.products.find({"vendorId": i}))
    report = _report(dg)
    assert harness.findings(report, collection="orders", kind="unindexed_reference") == []
    assert [f for f in report["findings"] if f["collection"] == "orders"
            and f["kind"] == "unindexed_query" and f["field"] == "customerId"] == []
    # The same traffic on a field no index starts with is advised on.
    unindexed = [f for f in report["findings"] if f["collection"] == "products"
                 and f["field"] == "vendorId"
                 and f["kind"] in ("unindexed_reference", "unindexed_query")]
    assert unindexed, report["findings"]
    client.close()


def test_push_onto_a_long_stored_array_is_blocked(cluster):
    dg, direct = cluster
    _wait_for_pass(dg)
    client = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}")
    with pytest.raises(WriteError) as raised:
        client.intro.items.update_one({"_id": 7}, {"$push": {"tags": {"$each": list(range(100))}}})
    assert raised.value.code == 121
    assert len(direct.intro.items.find_one({"_id": 7})["tags"]) == 950
    # A push that keeps it within the bound passes.
    client.intro.items.update_one({"_id": 7}, {"$push": {"tags": {"$each": [1, 2]}}})
    assert len(direct.intro.items.find_one({"_id": 7})["tags"]) == 952
    client.close()


def test_catalog_commands_in_traffic_count_at_once(cluster):
    dg, _ = cluster
    _wait_for_pass(dg)
    client = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}")
    client.intro.orders.create_index("total")
    assert "total_1" in _status(dg)["collection_facts"]["intro.orders"]["indexes"]
    client.intro.orders.drop_index("total_1")
    assert "total_1" not in _status(dg)["collection_facts"]["intro.orders"]["indexes"]
    client.intro.create_collection("fresh")
    fresh = _status(dg)["collection_facts"]["intro.fresh"]
    assert fresh["indexes"] == ["_id_"] and fresh["validator"] == "none"
    client.intro.fresh.drop()
    assert "intro.fresh" not in _status(dg)["collection_facts"]
    client.close()


def test_metrics(cluster):
    dg, _ = cluster
    _wait_for_pass(dg)
    metrics = harness.fetch_metrics(f"127.0.0.1:{dg.ports['admin']}")
    assert harness.metric_sum(metrics, "docguard_collection_documents", db="intro",
                              collection="orders") == 50
    assert harness.metric_sum(metrics, "docguard_collection_size_bytes", db="intro",
                              collection="orders") > 0
    runs = (harness.metric_sum(metrics, "docguard_introspection_runs_total", result="ok") +
            harness.metric_sum(metrics, "docguard_introspection_runs_total", result="partial"))
    assert runs >= 1
    assert harness.metric_sum(metrics, "docguard_introspection_commands_total") > 0
    assert harness.metric_sum(metrics, "docguard_introspection_seconds_count") >= 1


def test_introspection_off(tmp_path):
    fdb = harness.start_ferretdb(tmp_path)
    uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    pymongo.MongoClient(uri, directConnection=True).intro.products.insert_one(
        {"_id": 1, "tags": list(range(5000))})
    dg = harness.start_docguard(
        uri, tmp_path, config=_config(tmp_path / "off.yaml", "  enabled: false\n"))
    try:
        time.sleep(1.0)
        status = _status(dg)
        assert status["introspection"] == {"enabled": False}
        assert "intro.products" not in status["collection_facts"]
        assert harness.findings(_report(dg), collection="products", kind="large_array") == []
    finally:
        dg.stop()
        fdb.stop()


def test_scram_with_a_credentials_file(tmp_path):
    fdb = harness.start_ferretdb(tmp_path, auth=True)
    uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    admin = pymongo.MongoClient(uri, directConnection=True, username=harness.AUTH_USER,
                                password=harness.AUTH_PASSWORD)
    _load(admin)
    admin.close()
    # Without credentials: the pass fails, is counted and logged, and nothing is guessed.
    bare = harness.start_docguard(uri, tmp_path, config=_config(tmp_path / "bare.yaml"),
                                  wait_upstream=False)
    try:
        status = _wait_for_pass(bare)
        assert status["introspection"]["last_result"] == "failed"
        metrics = harness.fetch_metrics(f"127.0.0.1:{bare.ports['admin']}")
        assert harness.metric_sum(metrics, "docguard_introspection_runs_total",
                                  result="failed") >= 1
        assert harness.findings(_report(bare), collection="orders", kind="no_validator") == []
    finally:
        bare.stop()
    credentials = tmp_path / "introspection.credentials"
    credentials.write_text(f"user: {harness.AUTH_USER}\npassword: {harness.AUTH_PASSWORD}\n")
    dg = harness.start_docguard(
        uri, tmp_path,
        config=_config(tmp_path / "scram.yaml", f"  credentials_file: {credentials}\n"),
        wait_upstream=False)
    try:
        status = _wait_for_pass(dg)
        assert status["introspection"]["last_result"] in ("ok", "partial"), status
        assert "customerId_1" in status["collection_facts"]["intro.orders"]["indexes"]
        assert harness.findings(_report(dg), collection="products", kind="large_array")
        log = dg.log_path.read_text()
        assert harness.AUTH_PASSWORD not in log
    finally:
        dg.stop()
        fdb.stop()


def test_a_fleet_reads_once_per_interval_through_the_lease(tmp_path):
    """Three instances with introspection.lease_database: one reads the cluster per interval,
    the others load what it stored, and all three report the same facts."""
    fdb = harness.start_ferretdb(tmp_path)
    uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    direct = pymongo.MongoClient(uri, directConnection=True)
    _load(direct)
    fleet = []
    try:
        for i in range(3):
            fleet.append(harness.start_docguard(uri, tmp_path / f"dg{i}", config=_config(
                tmp_path / f"fleet{i}.yaml", "  interval: 3s\n  lease_database: docguard_fleet\n")))
        # Two intervals: every instance has had a turn at the lease.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            statuses = [_status(dg) for dg in fleet]
            if all(s["introspection"].get("passes", 0) >= 2 for s in statuses):
                break
            time.sleep(0.3)
        statuses = [_status(dg) for dg in fleet]
        results = sorted(s["introspection"]["last_result"] for s in statuses)
        holders = [s for s in statuses if s["introspection"]["lease_held"]]
        assert len(holders) == 1, [s["introspection"] for s in statuses]
        assert results.count("shared") == 2, results
        # Reads of the cluster (passes that did not load the fleet's facts) by one instance only.
        reading = [dg for dg in fleet
                   if harness.metric_sum(harness.fetch_metrics(f"127.0.0.1:{dg.ports['admin']}"),
                                         "docguard_introspection_runs_total", result="ok")
                   + harness.metric_sum(harness.fetch_metrics(f"127.0.0.1:{dg.ports['admin']}"),
                                        "docguard_introspection_runs_total", result="partial") > 0]
        assert len(reading) == 1
        facts = [s["collection_facts"]["intro.orders"] for s in statuses]
        for f in facts:
            assert f["source"] == "cluster"
            assert f["documents"] == 50 and "customerId_1" in f["indexes"], f
        assert len({json.dumps({k: f[k] for k in ("documents", "indexes", "validator")},
                               sort_keys=True) for f in facts}) == 1
        for dg in fleet:
            assert harness.findings(_report(dg), collection="products", kind="large_array"), dg.log_path
        # The fleet's own database is not advised on.
        assert not any(k.startswith("docguard_fleet.") for k in statuses[0]["collection_facts"])
        lease = direct.docguard_fleet.docguard_lease.find_one({"_id": "introspection"})
        assert lease and lease["holder"] == holders[0]["introspection"]["lease_holder"]
    finally:
        for dg in fleet:
            dg.stop()
        direct.close()
        fdb.stop()

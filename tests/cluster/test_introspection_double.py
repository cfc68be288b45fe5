"""docguard's introspection (its own paced reads of the cluster it guards) in front of the
replica-set double, with what FerretDB lacks supplied by the double: validators in
listCollections, $sample, $indexStats. Also `docguard scan` of the replica set.

docguard is started here with an `introspection:` section of its own (fast: 50 commands/s, no
jitter) and the double's replicaSet URI as its upstream; the double's command record shows where
each of introspection's commands went, with which read preference and on which connection
(app_name "docguard-introspection"; the scan CLI's is "docguard-scan").

A FerretDB of this module's own: introspection reads every database, and only these tests' are
there. Skipped unless DOCGUARD_CLUSTER_VIA=docguard (the suite's docguard run), like
test_through_docguard.py.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid

import pymongo
import pytest

import harness

pytestmark = pytest.mark.skipif(not harness.via_docguard(),
                                reason="docguard-only (DOCGUARD_CLUSTER_VIA=docguard)")

INTRO, SCAN = "docguard-introspection", "docguard-scan"
# What introspection and the scan send that a member judges as a read (cursor follow-ups aside).
READS = {"listDatabases", "listCollections", "listIndexes", "aggregate", "find", "collStats"}
CURSORS = {"getMore", "killCursors"}
RATE = 50  # introspection.max_commands_per_second here


# ---------------------------------------------------------------- fixtures and helpers

@pytest.fixture(scope="module")
def intro_ferret(workdir):
    try:
        p = harness.start_ferretdb(workdir / "ferret-introspection")
    except harness.StartError as e:
        pytest.fail(str(e))
    yield p
    p.stop()


@pytest.fixture
def rsd(intro_ferret):
    """rs0 (member 0 primary) in front of the module's FerretDB."""
    d = harness.start_double(intro_ferret)
    yield d
    d.close()


@pytest.fixture
def seeded(rsd):
    """A fresh database written through the double's primary before docguard starts: `orders`
    (40 documents, indexes customerId_1 and total_1) and one-document collections `plain`,
    `warned`, `strict`, `off`. Dropped afterwards (the FerretDB is shared by the module)."""
    name = "rsintro_" + uuid.uuid4().hex[:8]
    client = pymongo.MongoClient(rsd.uri(), serverSelectionTimeoutMS=10000)
    db = client[name]
    db.orders.insert_many([{"_id": i, "customerId": i % 7, "total": i} for i in range(40)])
    db.orders.create_index("customerId")
    db.orders.create_index("total")
    for coll in ("plain", "warned", "strict", "off"):
        db[coll].insert_one({"_id": 1, "a": 1})
    rsd.clear_commands()
    yield name
    client.drop_database(name)
    client.close()


@pytest.fixture
def introspecting(rsd, workdir):
    """Factory: docguard in front of the double with `introspection:` settings (strings as YAML
    gives them); stopped afterwards."""
    started: list[harness.Proc] = []

    def start(**settings) -> harness.Proc:
        s = {"max_commands_per_second": RATE, "jitter": 0, **settings}
        cfg = workdir / f"introspection-{uuid.uuid4().hex[:8]}.yaml"
        cfg.write_text("advisor:\n  live_sample_every: 1\nintrospection:\n" +
                       "".join(f"  {k}: {v}\n" for k, v in s.items()))
        try:
            proc = harness.base.start_docguard(rsd.uri(heartbeatFrequencyMS=500),
                                               workdir / "docguard", config=cfg)
        except harness.StartError as e:
            pytest.fail(str(e))
        started.append(proc)
        return proc

    yield start
    for p in started:
        p.stop()


def _get(proc: harness.Proc, path: str) -> dict:
    code, body = harness.base.http_get(f"http://127.0.0.1:{proc.ports['admin']}{path}")
    assert code == 200, body
    return json.loads(body)


def _wait_for_pass(proc: harness.Proc, passes: int = 1, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = _get(proc, "/status")
        if status["introspection"].get("passes", 0) >= passes:
            return status
        time.sleep(0.2)
    raise AssertionError(f"no introspection pass within {timeout} s: {_get(proc, '/status')}")


def _brief(records: list[dict]) -> list[tuple]:
    return [(r["member"], r["command"], r["collection"], r["read_preference"], r["app_name"])
            for r in records]


def _scan(double, db: str, *args: str) -> dict:
    uri = double.uri().replace("/?", f"/{db}?", 1)
    result = subprocess.run([str(harness.base.docguard_bin()), "scan", uri, "--format", "json",
                             *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# ---------------------------------------------------------------- where the reads go

def test_introspection_uses_its_own_connections_paced_and_secondary_preferred(
        rsd, seeded, introspecting):
    dg = introspecting(interval="1h")  # one pass only: its commands can be counted exactly
    status = _wait_for_pass(dg)
    assert status["introspection"]["last_result"] == "ok", status["introspection"]
    time.sleep(0.5)  # the pass's pool is closed after /status counts it
    everything = rsd.commands(app_name=INTRO)
    # libmongoc may end the pool's implicit sessions when it closes (endSessions, no read
    # preference, not counted by docguard): at most one per pass.
    intro = [r for r in everything if r["command"] != "endSessions"]
    assert len(everything) - len(intro) <= 1, _brief(everything)
    # Every command docguard counted arrived on introspection's own connections (and no more).
    assert len(intro) == status["introspection"]["commands"], _brief(intro)
    assert {"listDatabases", "listCollections", "listIndexes", "aggregate", "find"} <= {
        r["command"] for r in intro}, _brief(intro)
    assert all(r["read_preference"] == "secondaryPreferred"
               for r in intro if r["command"] in READS), _brief(intro)
    assert all(r["command"] in READS | CURSORS for r in intro), _brief(intro)
    assert all(r["outcome"] in ("relayed", "answered") for r in intro), _brief(intro)
    assert {r["member"] for r in intro} & {1, 2}, "no introspection read reached a secondary"
    # No client connection carried any of it: what else the members saw is docguard's start-up
    # probe (ping) and its upstream_auth probe (an unauthenticated listDatabases under an
    # appName of its own), nothing introspection sends.
    others = [r for r in rsd.commands()
              if r["app_name"] not in (INTRO, "docguard-auth-probe")]
    assert not [r for r in others if r["command"] in READS | CURSORS], _brief(others)
    # Paced: N commands at RATE per second take at least (N - 1) / RATE seconds.
    n = status["introspection"]["commands"]
    assert status["introspection"]["last_seconds"] >= 0.9 * (n - 1) / RATE, status["introspection"]

    # Client traffic goes to the primary on the client's connections, and adds nothing to
    # introspection's record.
    client = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}",
                                 appname="rsintro-client", serverSelectionTimeoutMS=10000)
    client[seeded].orders.find_one({"customerId": 3})
    client[seeded].orders.insert_one({"_id": 1000, "customerId": 1})
    client.close()
    mine = rsd.commands(app_name="rsintro-client")
    assert {(r["member"], r["command"]) for r in mine} >= {(0, "find"), (0, "insert")}, _brief(mine)
    assert all(r["member"] == 0 for r in mine), _brief(mine)
    assert len(rsd.commands(app_name=INTRO)) == len(everything)


@pytest.mark.parametrize("reader", ["introspection", "scan"])
def test_no_read_on_the_primary_while_a_secondary_exists(rsd, seeded, introspecting, reader):
    # The secondaries answer hello 0.5 s after the primary: a client discovers them last, as
    # happens whenever the primary's hello is the first to return.
    rsd.delay_hello(1, 0.5)
    rsd.delay_hello(2, 0.5)
    if reader == "introspection":
        _wait_for_pass(introspecting(interval="1h"))
        app = INTRO
    else:
        _scan(rsd, seeded)
        app = SCAN
    records = rsd.commands(app_name=app)
    assert records, f"nothing recorded from {app}"
    on_primary = [r for r in records if r["member"] == 0 and r["command"] in READS | CURSORS]
    assert on_primary == [], _brief(on_primary)


def test_without_a_secondary_introspection_reads_the_primary(rsd, seeded, introspecting):
    rsd.kill(1)
    rsd.kill(2)
    dg = introspecting(interval="1h")
    status = _wait_for_pass(dg)
    assert status["introspection"]["last_result"] == "ok", status["introspection"]
    assert status["collection_facts"][f"{seeded}.orders"]["documents"] == 40
    intro = rsd.commands(app_name=INTRO)
    assert intro and all(r["member"] == 0 for r in intro), _brief(intro)
    # secondaryPreferred, served by the primary (which would refuse a read without it: 13435).
    assert all(r["read_preference"] == "secondaryPreferred"
               for r in intro if r["command"] in READS), _brief(intro)
    assert all(r["outcome"] != "refused" for r in intro), _brief(intro)


# ---------------------------------------------------------------- validators

SCHEMA = {"$jsonSchema": {"bsonType": "object", "required": ["a"],
                          "properties": {"a": {"bsonType": "int"}}}}


def test_validators_from_list_collections(rsd, seeded, introspecting):
    rsd.set_validator(f"{seeded}.warned", SCHEMA, level="strict", action="warn")
    rsd.set_validator(f"{seeded}.strict", SCHEMA, level="strict", action="error")
    rsd.set_validator(f"{seeded}.off", SCHEMA, level="off", action="error")
    dg = introspecting(interval="1h")
    status = _wait_for_pass(dg)
    facts = status["collection_facts"]
    assert {c: facts[f"{seeded}.{c}"]["validator"] for c in ("warned", "strict", "off", "plain")} == {
        "warned": "warn", "strict": "error", "off": "off", "plain": "none"}, facts
    report = _get(dg, "/report.json")

    warned = harness.findings(report, db=seeded, collection="warned", kind="validator_not_enforced")
    assert len(warned) == 1 and warned[0]["source"] == "metadata", warned
    assert "validationAction: warn" in warned[0]["evidence"], warned
    assert harness.findings(report, db=seeded, collection="warned", kind="no_validator") == []

    assert harness.findings(report, db=seeded, collection="strict", kind="validator_not_enforced") == []
    assert harness.findings(report, db=seeded, collection="strict", kind="no_validator") == []

    off = harness.findings(report, db=seeded, collection="off", kind="validator_not_enforced")
    assert len(off) == 1 and "validationLevel is off" in off[0]["evidence"], off
    assert harness.findings(report, db=seeded, collection="off", kind="no_validator") == []

    plain = harness.findings(report, db=seeded, collection="plain", kind="no_validator")
    assert len(plain) == 1 and plain[0]["source"] == "metadata", plain
    assert "listCollections" in plain[0]["evidence"], plain
    assert harness.findings(report, db=seeded, collection="plain", kind="validator_not_enforced") == []


# ---------------------------------------------------------------- $sample

def test_sample_method_follows_what_the_server_answers(rsd, seeded, introspecting):
    ns = f"{seeded}.orders"
    dg = introspecting(interval="2s", sample_size=1000)
    # The double relays $sample to FerretDB, which answers 238 NotImplemented: find instead.
    orders = _wait_for_pass(dg)["collection_facts"][ns]
    assert (orders["sample_method"], orders["sampled_documents"]) == ("find", 40), orders
    finds = rsd.commands(app_name=INTRO, command="find", collection="orders")
    assert finds and all(r["read_preference"] == "secondaryPreferred" for r in finds), _brief(finds)

    rsd.enable_sample(True)
    # A pass may be under way: the one after it started with $sample answered.
    passes = _get(dg, "/status")["introspection"]["passes"]
    rsd.clear_commands()
    orders = _wait_for_pass(dg, passes + 2)["collection_facts"][ns]
    assert (orders["sample_method"], orders["sampled_documents"]) == ("$sample", 40), orders
    # Answered by the double ($sample and $indexStats), never relayed to FerretDB's 238.
    answered = rsd.commands(app_name=INTRO, command="aggregate", collection="orders",
                            outcome="answered")
    assert answered, _brief(rsd.commands(app_name=INTRO))

    rsd.enable_sample(False)
    passes = _get(dg, "/status")["introspection"]["passes"]
    orders = _wait_for_pass(dg, passes + 2)["collection_facts"][ns]
    assert orders["sample_method"] == "find", orders


# ---------------------------------------------------------------- $indexStats

def test_index_stats_read_by_introspection(rsd, seeded, introspecting):
    rsd.set_index_stats(f"{seeded}.orders", {"_id_": 30, "customerId_1": 0, "total_1": 12})
    dg = introspecting(interval="1h")
    status = _wait_for_pass(dg)
    orders = status["collection_facts"][f"{seeded}.orders"]
    assert orders["indexes"] == ["_id_", "customerId_1", "total_1"], orders
    assert orders["unknown"] == [], orders  # index usage included
    # The double answered $indexStats on orders for introspection, with secondaryPreferred.
    answered = rsd.commands(app_name=INTRO, command="aggregate", collection="orders",
                            outcome="answered")
    assert answered and all(r["read_preference"] == "secondaryPreferred" for r in answered), (
        _brief(answered))


def test_live_report_has_unused_index(rsd, seeded, introspecting):
    rsd.set_index_stats(f"{seeded}.orders", {"_id_": 30, "customerId_1": 0, "total_1": 12})
    dg = introspecting(interval="1h")
    _wait_for_pass(dg)
    report = _get(dg, "/report.json")
    unused = harness.findings(report, db=seeded, collection="orders", kind="unused_index")
    assert [f["field"] for f in unused] == ["customerId"], report["findings"]
    assert "customerId_1" in unused[0]["evidence"], unused


def test_scan_of_the_replica_set_reports_unused_index(rsd, seeded):
    rsd.set_index_stats(f"{seeded}.orders", {"_id_": 30, "customerId_1": 0, "total_1": 12})
    # The primary answers hello last, so that the scan's first reads cannot go to it before the
    # secondaries are known (test_no_read_on_the_primary_while_a_secondary_exists is that case).
    rsd.delay_hello(0, 0.3)
    report = _scan(rsd, seeded)
    unused = [f for f in report["findings"] if f["kind"] == "unused_index"]
    assert [(f["collection"], f["field"]) for f in unused] == [("orders", "customerId")], unused
    assert "customerId_1" in unused[0]["evidence"] and "0 accesses" in unused[0]["evidence"]
    orders = next(c for c in report["collections"] if c["collection"] == "orders")
    assert orders["documents"] == 40 and orders["sample_method"] == "all", orders

    scan = rsd.commands(app_name=SCAN)
    reads = [r for r in scan if r["command"] in READS]
    assert reads and all(r["member"] in (1, 2) for r in reads), _brief(scan)
    assert all(r["read_preference"] == "secondaryPreferred" for r in reads), _brief(reads)
    index_stats = [r for r in reads if r["command"] == "aggregate" and r["collection"] == "orders"
                   and r["outcome"] == "answered"]
    assert index_stats, _brief(scan)
    # Nothing of it on a client's connection: everything else the members saw is the seeding.
    assert not [r for r in rsd.commands() if r["app_name"] != SCAN], _brief(rsd.commands())

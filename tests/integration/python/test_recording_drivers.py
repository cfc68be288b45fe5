"""Recording and replay with four drivers: PyMongo, Node.js, Go and mongosh, each with its own
appName, each through a recording docguard in front of a FerretDB with SCRAM ("prod"), each doing
kind-1 inserts (insertMany), a cursor of five batches, a cursor closed early (killCursors) and a
retryable write. The recording holds each app's requests in per-connection order and no secret.
Replayed at --speed max against a staging seeded alike, behind a docguard whose query guardrail
blocks unindexed reads of the catalog: every getMore succeeds, each connection's commands arrive
in order, every shape returns the same documents, exit 0. Seeded with one document changed and
one index dropped: the report flags the changed document's shape and the query that lost its
index (refused by the guardrail, 291) and nothing else, exit 1."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pymongo
import pytest
from pymongo import monitoring

import harness
from harness import (admin_call, body_of, commands_per_connection, read_packets, sequences_of,
                     start_proxy)

pytestmark = pytest.mark.proxy

DB = "it_drivers"
CATALOG = [{"_id": i, "sku": f"sku-{i}", "price": i * 10} for i in range(50)]
APPS = ("drv-python", "drv-node", "drv-go", "drv-mongosh")
INTEGRATION = harness.REPO / "tests" / "integration"
NODE_DIR = INTEGRATION / "node"
GUARDRAIL = f"""\
rules:
  - id: catalog-indexes
    match: "{DB}.catalog"
    action: block
    require_index: true
introspection:
  max_commands_per_second: 50
  jitter: 0
  interval: 2s
"""


def seed(uri: str, changed: dict | None = None, drop_index: str | None = None) -> None:
    with pymongo.MongoClient(uri, username=harness.AUTH_USER, password=harness.AUTH_PASSWORD,
                             authSource="admin") as c:
        c.drop_database(DB)
        docs = [dict(d) for d in CATALOG]
        if changed:
            docs[changed["_id"]] = changed
        c[DB].catalog.insert_many(docs)
        c[DB].catalog.create_index("sku")
        c[DB].catalog.create_index("price")
        if drop_index:
            c[DB].catalog.drop_index(drop_index)


def driver_uri(port: int, app: str) -> str:
    """One pooled connection per driver: a replay at max speed runs connections side by side, so
    a workload spread over several (mongosh's reads could overtake its insert) would not be
    replayed in the order it ran."""
    return (f"mongodb://{harness.AUTH_USER}:{harness.AUTH_PASSWORD}@127.0.0.1:{port}/"
            f"?authSource=admin&authMechanism=SCRAM-SHA-256&appName={app}&maxPoolSize=1")


class Started(harness.CommandsStarted, monitoring.CommandListener):
    pass


def python_workload(uri: str, listener: Started) -> dict:
    c = pymongo.MongoClient(uri, retryWrites=True, maxPoolSize=1, event_listeners=[listener])
    events = c[DB]["events_drv-python"]
    events.insert_many([{"i": i, "pad": "x" * 100} for i in range(250)])  # kind-1
    read = len(list(events.find({}, batch_size=50)))  # find + 4 getMores
    cursor = events.find({}, batch_size=10)
    next(cursor)
    cursor.close()  # killCursors
    modified = events.update_one({"i": 1}, {"$set": {"r": 1}}).modified_count  # txnNumber
    # The catalog: a point read by sku (its index is dropped in one staging) and a range read by
    # price that returns _id 7 (changed in that staging).
    assert c[DB].catalog.find_one({"sku": "sku-3"})["_id"] == 3
    assert len(list(c[DB].catalog.find({"price": {"$gte": 50}}, batch_size=10))) == 45
    c.close()
    return {"read": read, "modified": modified}


def tools(work: Path) -> dict:
    """How each non-Python driver runs here: argv for a WORKLOAD_URI, or why it cannot."""
    node = shutil.which("node")
    out: dict = {}
    if node and (NODE_DIR / "node_modules" / "mongodb").is_dir():
        out["drv-node"] = lambda uri: [node, str(NODE_DIR / "recording_workload.mjs")]
    else:
        out["drv-node"] = ("no node or no tests/integration/node/node_modules "
                           "(scripts/install-deps.sh installs them)")
    mongosh = NODE_DIR / "node_modules" / ".bin" / "mongosh"
    if mongosh.exists():
        out["drv-mongosh"] = lambda uri: [str(mongosh), "--quiet", "--norc", uri,
                                          str(NODE_DIR / "recording_workload.mongosh.js")]
    else:
        out["drv-mongosh"] = "no mongosh in tests/integration/node/node_modules"
    go = shutil.which("go")
    exe = work / "recordingworkload"
    if go:
        built = subprocess.run([go, "build", "-o", str(exe), "./cmd/recordingworkload"],
                               cwd=INTEGRATION / "go", capture_output=True, text=True,
                               timeout=300)
        out["drv-go"] = ((lambda uri: [str(exe)]) if built.returncode == 0 else
                         f"the Go workload did not build: {built.stderr[-500:]}")
    else:
        out["drv-go"] = "no go toolchain"
    return out


def run_driver(argv: list[str], uri: str, app: str) -> dict:
    env = {**os.environ, "WORKLOAD_URI": uri, "WORKLOAD_DB": DB, "WORKLOAD_COLL": f"events_{app}",
           "MONGOSH_NO_UPDATE_CHECK": "1", "DO_NOT_TRACK": "1"}
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (app, proc.stdout, proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    """prod and staging (FerretDB with SCRAM), the four drivers' workload recorded on prod."""
    work = tmp_path_factory.mktemp("drivers")
    prod = harness.start_ferretdb(work / "prod", auth=True)
    staging = harness.start_ferretdb(work / "staging", auth=True)
    prod_uri = f"mongodb://127.0.0.1:{prod.ports['listen']}"
    rec = work / "rec"
    runners = tools(work)
    ran, skipped = ["drv-python"], {}
    try:
        seed(prod_uri)
        dg = start_proxy(work / "dg-prod", prod_uri,
                         f"recording: {{enabled: true, directory: '{rec}'}}\n")
        try:
            port = dg.ports["listen"]
            listener = Started()
            results = {"drv-python": python_workload(driver_uri(port, "drv-python"), listener)}
            for app in APPS[1:]:
                runner = runners[app]
                if isinstance(runner, str):
                    skipped[app] = runner
                    continue
                uri = driver_uri(port, app)
                results[app] = run_driver(runner(uri), uri, app)
                ran.append(app)
            for app, r in results.items():
                assert r == {"read": 250, "modified": 1}, (app, r)
            code, status = admin_call(dg, "POST", "/recording/stop")
            assert code == 200 and status["state"] == "stopped", status
        finally:
            dg.stop()
        yield {"work": work, "rec": rec, "staging": staging, "ran": ran, "skipped": skipped,
               "python_sent": listener.events}
    finally:
        prod.stop()
        staging.stop()


def side_lines(rec: Path) -> dict[tuple[int, int], dict]:
    return {(s["connection"], s["order"]): s for f in sorted(rec.glob("*.docguard.jsonl"))
            for s in map(json.loads, f.read_text().splitlines())}


def test_every_driver_is_recorded_in_order_without_secrets(clusters):
    rec = clusters["rec"]
    for app, why in clusters["skipped"].items():
        print(f"{app} not run: {why}")
    packets = read_packets(rec)
    side = side_lines(rec)
    assert len(side) == len(packets)
    by_app: dict[str, list] = {}
    for p in packets:
        s = side[(p.connection, p.order)]
        if p.event == 0 and "app" in s:
            by_app.setdefault(s["app"], []).append(p)
    for app in clusters["ran"]:
        requests = by_app.get(app, [])
        names = [next(iter(body_of(p))) for p in requests]
        for name in ("saslContinue", "insert", "find", "getMore", "killCursors", "update"):
            assert name in names, (app, name, names)
        # SCRAM: a saslStart, or its first message in the handshake (speculativeAuthenticate).
        assert "saslStart" in names or any(
            "speculativeAuthenticate" in body_of(p) for p in requests), (app, names)
        # The workload's commands in the order the driver ran them: a cursor of five batches
        # (firstBatch and at least four getMores), a cursor closed early, the retryable write.
        steps = " ".join(n for n in names if n in ("insert", "find", "getMore", "killCursors",
                                                   "update"))
        assert re.match(r"insert find (getMore ){4,}find killCursors update", steps), (app, steps)
        inserts = [p for p in requests if next(iter(body_of(p))) == "insert"]
        # PyMongo and the Go driver send insertMany's documents as a kind-1 sequence; the Node.js
        # driver (and mongosh, built on it) puts them in the body's array.
        docs = sum(sequences_of(p).get("documents", 0) + len(body_of(p).get("documents", []))
                   for p in inserts)
        assert docs == 250, (app, docs)
        if app in ("drv-python", "drv-go"):
            assert sum(sequences_of(p).get("documents", 0) for p in inserts) == 250, app
        updates = [body_of(p) for p in requests if next(iter(body_of(p))) == "update"]
        assert any("txnNumber" in b for b in updates), (app, updates)  # retryable
        for p in requests:
            b = body_of(p)
            if next(iter(b)) in ("saslStart", "saslContinue"):
                assert b["payload"] == "[redacted by docguard]", (app, b)
            if "speculativeAuthenticate" in b:
                assert b["speculativeAuthenticate"] == "[redacted by docguard]", (app, b)
    # Every command PyMongo sent is there, in the order it sent them.
    python = [(p.request_id, next(iter(body_of(p)))) for p in by_app["drv-python"]]
    assert [e for e in python if e in clusters["python_sent"]] == clusters["python_sent"]
    # Per-connection order: each connection's packets run from session start to end, offsets
    # never go back, and each reply follows its request.
    by_conn: dict[int, list] = {}
    for p in packets:
        by_conn.setdefault(p.connection, []).append(p)
    for conn, ps in by_conn.items():
        assert ps[0].event == 2 and ps[-1].event == 3, conn
        assert [p.offset for p in ps] == sorted(p.offset for p in ps), conn
        assert [p.order for p in ps] == sorted(p.order for p in ps), conn
        seen = set()
        for p in ps:
            if p.event == 0:
                seen.add(p.request_id)
            elif p.event == 1:
                assert p.response_to in seen, conn
    # No password or SCRAM payload bytes in any file.
    password = harness.AUTH_PASSWORD.encode()
    needles = [password, base64.b64encode(password), b"n,,n=", b"biwsbj0", b"c=biws,r=",
               base64.b64encode(b"c=biws,r=")[:8]]
    for path in rec.iterdir():
        data = path.read_bytes()
        for needle in needles:
            assert needle not in data, (path.name, needle)
    if clusters["skipped"]:
        pytest.skip(f"drivers not run here: {clusters['skipped']}")


def replay(clusters, name: str, **seeding):
    """Seeds staging, replays at max speed through a docguard in front of it (guardrail in block
    mode on the catalog, recording on); returns the exit code, the report and what was sent."""
    work = clusters["work"] / name
    staging_uri = f"mongodb://127.0.0.1:{clusters['staging'].ports['listen']}"
    seed(staging_uri, **seeding)
    replayed = work / "rec"
    work.mkdir(parents=True)
    creds = work / "introspection.credentials"
    creds.write_text(f"user: {harness.AUTH_USER}\npassword: {harness.AUTH_PASSWORD}\n")
    dg = start_proxy(work / "dg", staging_uri,
                     f"recording: {{enabled: true, directory: '{replayed}'}}\n" + GUARDRAIL +
                     f"  credentials_file: '{creds}'\n")
    try:
        # The guardrail knows staging's indexes once introspection has listed them.
        deadline = time.monotonic() + 60
        while admin_call(dg, "GET", "/status")[1]["introspection"].get("passes", 0) < 1:
            assert time.monotonic() < deadline, admin_call(dg, "GET", "/status")
            time.sleep(0.1)
        target = (f"mongodb://{harness.AUTH_USER}:{harness.AUTH_PASSWORD}@127.0.0.1:"
                  f"{dg.ports['listen']}/?authSource=admin")
        proc = subprocess.run([str(harness.docguard_bin()), "replay", "--recording",
                               str(clusters["rec"]), "--target", target, "--speed", "max",
                               "--show-values", "--report-dir", str(work / "report")],
                              capture_output=True, text=True, timeout=180)
        admin_call(dg, "POST", "/recording/stop")
    finally:
        dg.stop()
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads((work / "report" / "report.json").read_text())
    return proc.returncode, report, replayed


def test_replay_of_every_driver_on_identical_staging_matches(clusters):
    code, report, replayed = replay(clusters, "same")
    assert code == 0, json.dumps(report, indent=1)
    assert report["differing_shapes"] == 0
    counts = report["counts"]
    assert counts["failed"] == 0 and counts["sent"] > 0
    getmore = report["commands"]["getMore"]
    drivers = len(clusters["ran"])
    assert getmore["sent"] >= 4 * drivers + 4 and getmore["ok"] == getmore["sent"], report
    for shape in report["shapes"]:
        assert shape["recorded_documents"] == shape["replayed_documents"], shape
    # Each recorded connection's commands arrived on one connection, in the recorded order,
    # and every getMore the replay sent was answered ok by staging.
    assert commands_per_connection(replayed) == commands_per_connection(clusters["rec"])
    replies = harness.getmore_replies(replayed)
    assert len(replies) == getmore["sent"] and all(r["ok"] == 1 for r in replies), replies


def test_changed_document_and_dropped_index_are_flagged_alone(clusters):
    code, report, _ = replay(clusters, "changed", changed={"_id": 7, "sku": "sku-7", "price": 71},
                             drop_index="sku_1")
    assert code == 1, json.dumps(report, indent=1)
    differing = {s["shape"]: s for s in report["shapes"] if s["differs"]}
    assert set(differing) == {f"find {DB}.catalog {{price: {{$gte: ?}}}}",
                              f"find {DB}.catalog {{sku: ?}}"}, json.dumps(report, indent=1)
    changed = differing[f"find {DB}.catalog {{price: {{$gte: ?}}}}"]
    assert changed["difference"].startswith("documents differ"), changed
    assert '"price" : 70' in changed["example"]["recorded_reply"]
    assert '"price" : 71' in changed["example"]["replayed_reply"]
    refused = differing[f"find {DB}.catalog {{sku: ?}}"]
    assert refused["difference"] == "ok 1 vs 0 (code 291 NoQueryExecutionPlans)", refused
    assert '"code" : 291' in refused["example"]["replayed_reply"]
    # The guardrail's refusal: the rule's kind; its id stays in docguard's log
    # (errors.reveal_rule_source).
    assert '"rule" : "require_index"' in refused["example"]["replayed_reply"]
    assert "catalog-indexes" not in refused["example"]["replayed_reply"]
    assert report["differing_shapes"] == 2

"""`docguard replay`: a PyMongo workload recorded through docguard in front of one FerretDB
("prod") is replayed against a second FerretDB with SCRAM ("staging"), itself behind a recording
docguard so that what the replay sent can be read back. Seeded alike, every shape matches and
the exit code is 0 at every speed; the 1x replay takes the recorded time; with one document
changed in staging, the report flags that document's shape alone and the exit code is 1."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pymongo
import pytest
from pymongo.write_concern import WriteConcern

import harness
from harness import (admin_call, body_of, commands_per_connection, read_packets,
                     start_proxy)

pytestmark = pytest.mark.proxy

DB = "it_replay"
CATALOG = [{"_id": i, "sku": f"sku-{i}", "price": i * 10} for i in range(50)]
SLEEPS = [1.0, 1.0, 1.0, 0.8]  # 3 s of pauses on the main connection: 10% of it is 0.3 s


def seed(client: pymongo.MongoClient, changed: dict | None = None) -> None:
    db = client[DB]
    db.drop_collection("catalog")
    db.drop_collection("events")
    docs = [dict(d) for d in CATALOG]
    if changed:
        docs[changed["_id"]] = changed
    db.catalog.insert_many(docs)


def workload(uri: str) -> None:
    """Two connections at once: kind-1 inserts, cursors of several batches, one closed early,
    a retryable write, point reads on the catalog; pauses between the steps."""
    errors: list[BaseException] = []

    def main() -> None:
        c = pymongo.MongoClient(uri, appName="replay-main", retryWrites=True, maxPoolSize=1)
        events = c[DB].events
        events.insert_many([{"i": i, "pad": "x" * 100} for i in range(300)])  # kind-1
        time.sleep(SLEEPS[0])
        assert len(list(events.find({}, batch_size=70))) == 300  # find + 4 getMores
        assert len(list(events.find({"i": {"$gte": 100}}).sort("i", 1).batch_size(50))) == 200
        time.sleep(SLEEPS[1])
        cursor = events.find({}, batch_size=10)
        next(cursor)
        cursor.close()  # killCursors
        with c.start_session() as s:
            events.update_one({"i": 1}, {"$set": {"r": 1}}, session=s)  # txnNumber
            events.update_one({"i": 2}, {"$set": {"r": 2}}, session=s)
        time.sleep(SLEEPS[2])
        assert events.count_documents({"r": {"$exists": True}}) == 2
        # Unacknowledged (moreToCome): recorded without a reply, replayed, not compared.
        events.with_options(write_concern=WriteConcern(w=0)).insert_one({"i": -1})
        c.close()

    def side() -> None:
        c = pymongo.MongoClient(uri, appName="replay-side", retryWrites=True, maxPoolSize=1)
        catalog = c[DB].catalog
        time.sleep(SLEEPS[0] / 2)
        for sku in (3, 7, 11):
            assert catalog.find_one({"sku": f"sku-{sku}"})["_id"] == sku
        assert len(list(catalog.find({"price": {"$gte": 100}}, batch_size=10))) == 40
        time.sleep(SLEEPS[3] + SLEEPS[1])
        c.close()

    def run(f):
        try:
            f()
        except BaseException as e:  # noqa: BLE001 - reported by the caller
            errors.append(e)

    threads = [threading.Thread(target=run, args=(f,)) for f in (main, side)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    """prod (plain FerretDB), the recorded workload on it, and staging (FerretDB with SCRAM)."""
    work = tmp_path_factory.mktemp("replay")
    prod = harness.start_ferretdb(work / "prod")
    staging = harness.start_ferretdb(work / "staging", auth=True)
    prod_uri = f"mongodb://127.0.0.1:{prod.ports['listen']}"
    staging_uri = f"mongodb://127.0.0.1:{staging.ports['listen']}"
    rec = work / "rec"
    try:
        with pymongo.MongoClient(prod_uri) as c:
            seed(c)
        dg = start_proxy(work / "dg-prod", prod_uri,
                         f"recording: {{enabled: true, directory: '{rec}'}}\n")
        try:
            workload(f"mongodb://127.0.0.1:{dg.ports['listen']}")
            code, status = admin_call(dg, "POST", "/recording/stop")
            assert code == 200 and status["state"] == "stopped", status
        finally:
            dg.stop()
        yield {"work": work, "rec": rec, "staging_uri": staging_uri}
    finally:
        prod.stop()
        staging.stop()


def staging_client(uri: str) -> pymongo.MongoClient:
    return pymongo.MongoClient(uri, username=harness.AUTH_USER, password=harness.AUTH_PASSWORD,
                               authSource="admin")


def replay(clusters, name: str, speed: str, changed: dict | None = None,
           extra: tuple[str, ...] = ()):
    """Seeds staging, replays through a recording docguard in front of it; returns the exit
    code, the wall time, the report and what the replay sent (its own recording)."""
    work = clusters["work"] / name
    with staging_client(clusters["staging_uri"]) as c:
        seed(c, changed)
    replayed = work / "rec"
    dg = start_proxy(work / "dg", clusters["staging_uri"],
                     f"recording: {{enabled: true, directory: '{replayed}'}}\n")
    target = (f"mongodb://{harness.AUTH_USER}:{harness.AUTH_PASSWORD}@127.0.0.1:"
              f"{dg.ports['listen']}/?authSource=admin")
    try:
        started = time.monotonic()
        proc = subprocess.run([str(harness.docguard_bin()), "replay", "--recording",
                               str(clusters["rec"]), "--target", target, "--speed", speed,
                               "--report-dir", str(work / "report"), *extra],
                              capture_output=True, text=True, timeout=120)
        wall = time.monotonic() - started
        admin_call(dg, "POST", "/recording/stop")
    finally:
        dg.stop()
    assert proc.returncode in (0, 1), proc.stderr
    assert "requests on" in proc.stderr  # the one-line summary, stderr being no terminal
    report = json.loads((work / "report" / "report.json").read_text())
    assert (work / "report" / "report.html").read_text().count("<svg") == 1
    return proc.returncode, wall, report, replayed


def assert_faithful(clusters, code: int, report: dict, replayed: Path) -> None:
    assert code == 0, json.dumps(report, indent=1)
    assert report["differing_shapes"] == 0
    counts = report["counts"]
    assert counts["failed"] == 0 and counts["sent"] > 0 and counts["skipped_legacy"] == 0
    getmore = report["commands"]["getMore"]
    assert getmore["sent"] >= 4 + 3 + 3 and getmore["ok"] == getmore["sent"], report["commands"]
    for shape in report["shapes"]:
        assert shape["recorded_documents"] == shape["replayed_documents"], shape
    assert sum(s["replayed_documents"] for s in report["shapes"]) >= 300 + 200 + 10 + 40 + 3
    # Each recorded connection's commands arrived on one connection, in the recorded order.
    assert commands_per_connection(replayed) == commands_per_connection(clusters["rec"])
    # The replayed getMores named the staging cursors (every one answered ok).
    replies = harness.getmore_replies(replayed)
    assert len(replies) == getmore["sent"] and all(r["ok"] == 1 for r in replies), replies


@pytest.mark.parametrize("speed", ["max", "4"])
def test_replay_of_identical_staging_matches_every_shape(clusters, speed):
    code, wall, report, replayed = replay(clusters, f"same-{speed}", speed)
    assert_faithful(clusters, code, report, replayed)
    print(f"replay --speed {speed}: {wall:.2f} s wall "
          f"({report['counts']['replay_micros'] / 1e6:.2f} s paced), recorded "
          f"{report['counts']['recorded_micros'] / 1e6:.2f} s")


def test_replay_at_1x_takes_the_recorded_time(clusters):
    code, wall, report, replayed = replay(clusters, "same-1", "1")
    assert_faithful(clusters, code, report, replayed)
    recorded = report["counts"]["recorded_micros"] / 1e6
    paced = report["counts"]["replay_micros"] / 1e6  # from the clock's start to the last end
    assert recorded >= sum(SLEEPS[:3])  # the pauses are in the recording
    print(f"replay --speed 1: {wall:.2f} s wall ({paced:.2f} s paced), recorded {recorded:.2f} s")
    # The process also connects and authenticates each client before the clock starts.
    assert wall >= recorded
    assert abs(paced - recorded) <= 0.1 * recorded, (paced, recorded)


def test_one_changed_document_flags_its_shape_alone(clusters):
    code, _, report, _ = replay(clusters, "changed-types", "max",
                                changed={"_id": 7, "sku": "sku-7", "price": 71})
    assert code == 1, json.dumps(report, indent=1)
    differing = [s for s in report["shapes"] if s["differs"]]
    assert [s["shape"] for s in differing] == [f"find {DB}.catalog {{sku: ?}}"], differing
    # Without --show-values the report names the field and the types, never the data.
    assert differing[0]["difference"].endswith('price: "<int32>" vs "<int32>"'), differing[0]
    assert "sku-7" not in json.dumps(report) and '"price" : 70' not in json.dumps(report)

    code, _, report, _ = replay(clusters, "changed", "max",
                                changed={"_id": 7, "sku": "sku-7", "price": 71},
                                extra=("--show-values",))
    assert code == 1, json.dumps(report, indent=1)
    differing = [s for s in report["shapes"] if s["differs"]]
    assert [s["shape"] for s in differing] == [f"find {DB}.catalog {{sku: ?}}"], differing
    assert differing[0]["differing"] == 1  # sku-7's read, not sku-3's or sku-11's
    assert differing[0]["difference"].endswith("price: 70 vs 71"), differing[0]
    example = differing[0]["example"]
    assert '"price" : 70' in example["recorded_reply"]
    assert '"price" : 71' in example["replayed_reply"]
    assert "sku-7" in example["request"]
    html = (clusters["work"] / "changed" / "report" / "report.html").read_text()
    assert f"1 of {len(report['shapes'])} shapes differ" in html
    assert "<h2>Differences</h2>" in html and html.count("<h3>") == 1
    assert "sku-7" in html and "&quot;price&quot; : 71" in html

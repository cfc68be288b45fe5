"""A replay does only what it is asked to, keeps sessions and cursors as the server sees them,
and says what really differs. A workload recorded through a block-mode docguard in front of a
FerretDB with SCRAM ("prod") holds user management, retryable writes of two apps in sessions of
their own, a cursor opened on one connection and continued on another, a refused insert and a batch docguard trimmed. It is replayed at 1, 4 and
max against a second FerretDB ("staging") behind a recording docguard, so what the replay sent is
read back."""

from __future__ import annotations

import json
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import pymongo
import pytest

import harness
from harness import admin_call, body_of, read_packets, start_proxy

pytestmark = pytest.mark.proxy

DB = "it_safe"
ITEMS = [{"_id": i, "cat": f"c{i % 3}", "qty": i, "tag": f"t{i}"} for i in range(12)]
RULES = f"""mode: block
rules:
  - match: "{DB}.capped"
    action: block
    max_document_bytes: 1KB
"""


def seed(uri: str, auth: bool, changed: bool = False) -> None:
    kw = {"username": harness.AUTH_USER, "password": harness.AUTH_PASSWORD} if auth else {}
    with pymongo.MongoClient(uri, **kw) as c:
        db = c[DB]
        for name in ("items", "events", "capped", "side"):
            db.drop_collection(name)
        docs = [dict(d) for d in ITEMS]
        if changed:
            docs[5] = {"_id": 5, "cat": "c2", "qty": 500, "tag": "changed"}
        db.items.insert_many(docs)
        db.side.insert_many([{"_id": i, "i": i} for i in range(9)])
        try:
            c.admin.command("dropUser", "appuser")
        except pymongo.errors.OperationFailure:
            pass


def client(port: int, app: str) -> pymongo.MongoClient:
    return pymongo.MongoClient(f"mongodb://127.0.0.1:{port}", username=harness.AUTH_USER,
                               password=harness.AUTH_PASSWORD, authSource="admin", appName=app,
                               maxPoolSize=1, retryWrites=True)


def workload(port: int) -> None:
    admin = client(port, "admin-tool")
    admin.admin.command("createUser", "appuser", pwd="app-password-1", roles=[])
    admin.admin.command("updateUser", "appuser", pwd="app-password-2")
    admin.close()
    for app in ("app-a", "app-b"):  # retryable writes, txnNumber 1 and 2 in each app's session
        c = client(port, app)
        with c.start_session() as s:
            c[DB].events.insert_one({"app": app, "n": 1}, session=s)
            c[DB].events.insert_one({"app": app, "n": 2}, session=s)
        c.close()
    # A cursor opened on one connection and continued on another. (PyMongo puts each client's
    # own session on its commands, whatever lsid is written: the getMore goes out in another
    # session than the find. The replay sends it in the cursor's session; the cluster suite's
    # replay test writes one lsid on both connections by hand, with transactions.)
    one, two = client(port, "app-cursor"), client(port, "app-cursor")
    first = one[DB].command({"find": "side", "filter": {}, "batchSize": 3})
    cid = first["cursor"]["id"]
    assert cid != 0
    more = two[DB].command({"getMore": cid, "collection": "side", "batchSize": 3})
    assert len(more["cursor"]["nextBatch"]) == 3
    one.close()
    two.close()
    # A refused insert, and a batch docguard trimmed (an unordered one: the rest go on).
    c = client(port, "app-write")
    with pytest.raises(pymongo.errors.WriteError) as refused:
        c[DB].capped.insert_one({"_id": "big", "pad": "x" * 4000})
    assert refused.value.code == 121
    with pytest.raises(pymongo.errors.BulkWriteError):
        c[DB].capped.insert_many([{"_id": "s1"}, {"_id": "big2", "pad": "y" * 4000}, {"_id": "s2"}],
                                 ordered=False)
    # What the comparison reads: findAndModify, distinct, a sorted find, a $sample.
    items = c[DB].items
    assert items.find_one_and_update({"_id": 5}, {"$inc": {"n": 1}})["qty"] == 5
    assert len(items.distinct("tag")) == 12
    assert [d["_id"] for d in items.find({"cat": {"$ne": "zz"}}).sort("qty", 1)][:2] == [0, 1]
    try:
        list(items.aggregate([{"$sample": {"size": 2}}]))
    except pymongo.errors.OperationFailure:
        pass  # FerretDB 1.24 has no $sample: the shape is "not comparable" either way
    c.close()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    work = tmp_path_factory.mktemp("replay-safety")
    prod = harness.start_ferretdb(work / "prod", auth=True)
    staging = harness.start_ferretdb(work / "staging", auth=True)
    baseline = harness.start_ferretdb(work / "baseline", auth=True)
    prod_uri = f"mongodb://127.0.0.1:{prod.ports['listen']}"
    staging_uri = f"mongodb://127.0.0.1:{staging.ports['listen']}"
    baseline_uri = f"mongodb://127.0.0.1:{baseline.ports['listen']}"
    rec = work / "rec"
    try:
        seed(prod_uri, auth=True)
        dg = start_proxy(work / "dg-prod", prod_uri,
                         RULES + f"recording: {{enabled: true, directory: '{rec}'}}\n")
        try:
            workload(dg.ports["listen"])
            admin_call(dg, "POST", "/recording/stop")
        finally:
            dg.stop()
        yield {"work": work, "rec": rec, "staging_uri": staging_uri, "baseline_uri": baseline_uri}
    finally:
        prod.stop()
        staging.stop()
        baseline.stop()


def replay(recorded, name: str, speed: str, changed: bool = False, extra: tuple[str, ...] = ()):
    work = recorded["work"] / name
    seed(recorded["staging_uri"], auth=True, changed=changed)
    sent = work / "rec"
    dg = start_proxy(work / "dg", recorded["staging_uri"],
                     f"recording: {{enabled: true, directory: '{sent}'}}\n")
    target = (f"mongodb://{harness.AUTH_USER}:{harness.AUTH_PASSWORD}@127.0.0.1:"
              f"{dg.ports['listen']}/?authSource=admin")
    try:
        proc = subprocess.run([str(harness.docguard_bin()), "replay", "--recording",
                               str(recorded["rec"]), "--target", target, "--speed", speed,
                               "--show-values", "--report-dir", str(work / "report"), *extra],
                              capture_output=True, text=True, timeout=120)
        admin_call(dg, "POST", "/recording/stop")
    finally:
        dg.stop()
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads((work / "report" / "report.json").read_text()), sent


def lsid_key(body: dict) -> bytes | None:
    lsid = body.get("lsid")
    return bytes(lsid["id"]) if lsid else None


def txn_numbers(rec: Path) -> dict[bytes, list[int]]:
    """Per lsid, the txnNumbers its requests carried, in the recorded order."""
    out: dict[bytes, list[int]] = defaultdict(list)
    for p in sorted(read_packets(rec), key=lambda p: p.order):
        if p.event == 0 and p.opcode == 2013:
            b = body_of(p)
            if "txnNumber" in b and lsid_key(b):
                out[lsid_key(b)].append(int(b["txnNumber"]))
    return out


@pytest.mark.parametrize("speed", ["max", "4", "1"])
def test_replay_does_only_what_it_is_asked(recorded, speed):
    code, report, sent = replay(recorded, f"same-{speed}", speed)
    assert code == 0, json.dumps(report, indent=1)
    assert report["differing_shapes"] == 0
    counts = report["counts"]
    assert counts["failed"] == 0, report
    # No user created or changed: the commands were skipped and counted by name.
    assert report["commands_not_allowed"] == {"createUser": 1, "updateUser": 1}, report
    names = [next(iter(body_of(p))) for p in read_packets(sent) if p.event == 0]
    assert "createUser" not in names and "updateUser" not in names
    with pymongo.MongoClient(recorded["staging_uri"], username=harness.AUTH_USER,
                             password=harness.AUTH_PASSWORD) as c:
        assert c.admin.command("usersInfo", "appuser")["users"] == []
        # The refused insert was not sent; the trimmed batch went as docguard forwarded it.
        ids = sorted(d["_id"] for d in c[DB].capped.find({}))
        assert ids == ["s1", "s2"], ids
    assert report["not_replayed"].get("answered_by_docguard", 0) == 1, report["not_replayed"]
    assert counts["trimmed_batches"] == 1
    big = [p for p in read_packets(sent) if p.event == 0 and b"x" * 4000 in p.message]
    assert not big
    # One live lsid per recorded lsid that carried txnNumbers, never shared; monotone numbers.
    recorded_txns = txn_numbers(recorded["rec"])
    live_txns = txn_numbers(sent)
    # app-a, app-b, app-write's retryable writes (its refused insert not sent). Transactions:
    # the cluster suite's replay test, where the replica-set double answers them.
    assert len(recorded_txns) == 3, recorded_txns
    assert len(live_txns) == len(recorded_txns), live_txns
    shapes = sorted(tuple(n) for n in live_txns.values())
    assert shapes == [(1, 2), (1, 2), (2, 3)], shapes  # A's and B's apart
    for numbers in live_txns.values():
        assert numbers == sorted(numbers), live_txns
    assert not set(live_txns) & set(recorded_txns)  # fresh session ids
    # The getMore sent on the second connection was answered.
    replies = harness.getmore_replies(sent)
    assert replies and all(r["ok"] == 1 for r in replies), replies
    # $sample is not comparable, and said so.
    sample = [s for s in report["shapes"] if "$sample" in s["shape"]]
    assert sample and sample[0]["not_comparable"] == 1, report["shapes"]
    assert "$sample" in sample[0]["not_comparable_why"]


def test_each_changed_answer_names_its_field(recorded):
    code, report, _ = replay(recorded, "changed", "max", changed=True)
    assert code == 1
    differing = {s["shape"]: s["difference"] for s in report["shapes"] if s["differs"]}
    fam = [d for shape, d in differing.items() if shape.startswith("findAndModify")]
    distinct = [d for shape, d in differing.items() if shape.startswith("distinct")]
    sorted_find = [d for shape, d in differing.items() if "sort {qty: 1}" in shape]
    assert fam and "value.qty: 5 vs 500" in fam[0], differing
    assert distinct and '"t5" not in the replayed values' in distinct[0], differing
    assert sorted_find and "document 5" in sorted_find[0], differing


def test_what_differs_against_a_copy_of_production_too_is_noise(recorded):
    """--baseline: the changed answers are in the copy of production as well (here seeded with
    the same change), so they are noise, reported apart, and the exit code is 0."""
    seed(recorded["baseline_uri"], auth=True, changed=True)
    baseline = (f"mongodb://{harness.AUTH_USER}:{harness.AUTH_PASSWORD}@"
                f"{recorded['baseline_uri'].split('//', 1)[1]}/?authSource=admin")
    code, report, _ = replay(recorded, "noise", "max", changed=True,
                             extra=("--baseline", baseline))
    assert code == 0, json.dumps(report, indent=1)
    noise = [s for s in report["shapes"] if s["noise"]]
    assert len(noise) >= 3 and not any(s["differs"] for s in report["shapes"]), report["shapes"]
    assert all(s["baseline_difference"] for s in noise)


def test_an_unreachable_target_ends_in_seconds(recorded, tmp_path):
    closed = harness.free_port()
    started = time.monotonic()
    proc = subprocess.run([str(harness.docguard_bin()), "replay", "--recording",
                           str(recorded["rec"]), "--target", f"mongodb://127.0.0.1:{closed}",
                           "--report-dir", str(tmp_path)], capture_output=True, text=True,
                          timeout=60)
    took = time.monotonic() - started
    assert proc.returncode == 2, proc.stderr
    assert took < 10, took
    assert "--target" in proc.stderr
    # Refused authentication: the same, with the reason.
    staging_port = recorded["staging_uri"].rsplit(":", 1)[1]
    proc = subprocess.run([str(harness.docguard_bin()), "replay", "--recording",
                           str(recorded["rec"]), "--target",
                           f"mongodb://{harness.AUTH_USER}:wrong@127.0.0.1:{staging_port}/?authSource=admin",
                           "--report-dir", str(tmp_path)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "auth" in proc.stderr.lower(), proc.stderr
    print(f"closed port: exit 2 in {took:.1f} s")

"""A replay keeps every recorded transaction whole, in order, on a live session of its own, across
the connections the driver used. FerretDB 1.24 has no transactions: the replica-set double
answers them on both sides (double_transactions.py: the server's session bookkeeping, whose
TransactionTooOld and NoSuchTransaction a shared or reordered session would run into).

Recorded: a transaction whose statements went out on two connections, a session with one
committed and one aborted transaction, a cursor continued on the other connection in its
session, and retryable writes of two apps, through a recording
docguard in front of "prod" (the double before one FerretDB). Replayed at max, 4 and 1 through a
recording docguard in front of "staging" (a double before a second FerretDB). Skipped unless
DOCGUARD_CLUSTER_VIA=docguard: it tests docguard's replay."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections import defaultdict

import bson
import pymongo
import pytest

import harness
from rs_double import RunningDouble

pytestmark = pytest.mark.skipif(not harness.via_docguard(),
                                reason="docguard-only (DOCGUARD_CLUSTER_VIA=docguard)")

DB = "it_txn"
base = harness.base


def _lsid() -> dict:
    return {"id": bson.Binary(uuid.uuid4().bytes, 4)}


def _ok(c: "base.WireConnection", db: str, cmd: dict) -> dict:
    reply = c.command({**cmd, "$db": db})
    assert reply.get("ok") == 1, (cmd, reply)
    return reply


def _workload(port: int) -> None:
    # By hand: a driver would put a session of its own on each connection's commands.
    one, two = base.WireConnection(port, "txn-app"), base.WireConnection(port, "txn-app")
    spread = _lsid()  # one transaction, its statements on two connections
    txn = {"lsid": spread, "txnNumber": 1, "autocommit": False}
    _ok(one, DB, {"find": "accounts", "filter": {"_id": 1}, **txn, "startTransaction": True})
    _ok(one, DB, {"insert": "ledger", "documents": [{"_id": "a1", "amount": 5}], **txn})
    _ok(two, DB, {"insert": "ledger", "documents": [{"_id": "a2", "amount": -5}], **txn})
    _ok(one, "admin", {"commitTransaction": 1, **txn})
    both = _lsid()  # one committed, then one aborted transaction
    for number, end in ((1, "commitTransaction"), (2, "abortTransaction")):
        t = {"lsid": both, "txnNumber": number, "autocommit": False}
        _ok(two, DB, {"insert": "ledger", "documents": [{"_id": f"b{number}"}], **t,
                      "startTransaction": True})
        _ok(two, "admin", {end: 1, **t})
    # A cursor opened on one connection and continued on the other, in its session.
    reading = _lsid()
    first = _ok(one, DB, {"find": "accounts", "filter": {}, "batchSize": 1, "lsid": reading})
    more = _ok(two, DB, {"getMore": first["cursor"]["id"], "collection": "accounts",
                         "batchSize": 5, "lsid": reading})
    assert len(more["cursor"]["nextBatch"]) == 2
    one.close()
    two.close()
    for app in ("app-a", "app-b"):  # retryable writes, txnNumbers 1 and 2 in each app's session
        c = pymongo.MongoClient(f"mongodb://127.0.0.1:{port}", appName=app, maxPoolSize=1,
                                retryWrites=True, serverSelectionTimeoutMS=10000)
        with c.start_session() as s:
            c[DB].events.insert_one({"app": app, "n": 1}, session=s)
            c[DB].events.insert_one({"app": app, "n": 2}, session=s)
        c.close()


def _seed(uri: str) -> None:
    with pymongo.MongoClient(uri, directConnection=True) as c:
        c.drop_database(DB)
        c[DB].accounts.insert_many([{"_id": i, "balance": 100} for i in range(3)])


def _by_session(log: list[dict]) -> list[list[tuple[int, str, str]]]:
    sessions: dict[str, list] = defaultdict(list)
    for entry in log:
        sessions[entry["lsid"]].append((entry["txnNumber"], entry["command"], entry["outcome"]))
    return sorted(sessions.values())


EXPECTED = sorted([
    [(1, "find", "relayed"), (1, "insert", "relayed"), (1, "insert", "relayed"),
     (1, "commitTransaction", "committed")],
    [(1, "insert", "relayed"), (1, "commitTransaction", "committed"),
     (2, "insert", "relayed"), (2, "abortTransaction", "aborted")],
])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    work = tmp_path_factory.mktemp("replay-txn")
    prod_fdb = harness.start_ferretdb(work / "prod-fdb")
    prod = RunningDouble(f"127.0.0.1:{prod_fdb.ports['listen']}", 1)
    prod.enable_transactions()
    rec = work / "rec"
    try:
        _seed(f"mongodb://127.0.0.1:{prod_fdb.ports['listen']}")
        dg = base.start_proxy(work / "dg-prod", prod.uri(),
                              f"recording: {{enabled: true, directory: '{rec}'}}\n")
        try:
            _workload(dg.ports["listen"])
            base.admin_call(dg, "POST", "/recording/stop")
        finally:
            dg.stop()
        assert _by_session(prod.transaction_log()) == EXPECTED, prod.transaction_log()
        yield {"work": work, "rec": rec, "prod_log": prod.transaction_log()}
    finally:
        prod.close()
        prod_fdb.stop()


@pytest.mark.parametrize("speed", ["max", "4", "1"])
def test_each_transaction_replays_whole_on_a_session_of_its_own(recorded, speed):
    work = recorded["work"] / f"staging-{speed}"
    fdb = harness.start_ferretdb(work / "fdb")
    staging = RunningDouble(f"127.0.0.1:{fdb.ports['listen']}", 1)
    staging.enable_transactions()
    try:
        _seed(f"mongodb://127.0.0.1:{fdb.ports['listen']}")
        sent = work / "sent"
        dg = base.start_proxy(work / "dg", staging.uri(),
                              f"recording: {{enabled: true, directory: '{sent}'}}\n")
        try:
            proc = subprocess.run(
                [str(base.docguard_bin()), "replay", "--recording", str(recorded["rec"]),
                 "--target", f"mongodb://127.0.0.1:{dg.ports['listen']}", "--speed", speed,
                 "--report-dir", str(work / "report")],
                capture_output=True, text=True, timeout=120)
            base.admin_call(dg, "POST", "/recording/stop")
        finally:
            dg.stop()
        report = json.loads((work / "report" / "report.json").read_text())
        assert proc.returncode == 0, (proc.stderr, json.dumps(report, indent=1))
        assert report["differing_shapes"] == 0 and report["counts"]["failed"] == 0, report
        live = staging.transaction_log()
        # Whole and in order, each on its own live session: no TransactionTooOld, no
        # NoSuchTransaction, and no statement of one recorded session on another's.
        assert _by_session(live) == EXPECTED, live
        assert not {e["lsid"] for e in live} & {e["lsid"] for e in recorded["prod_log"]}
        # The retryable writes kept monotone txnNumbers on sessions of their own.
        numbers: dict[bytes, list[int]] = defaultdict(list)
        for p in sorted(base.read_packets(sent), key=lambda p: p.order):
            body = base.body_of(p) if p.event == 0 and p.opcode == 2013 else {}
            if "txnNumber" in body and "autocommit" not in body:
                numbers[bytes(body["lsid"]["id"])].append(int(body["txnNumber"]))
        assert sorted(numbers.values()) == [[1, 2], [1, 2]], numbers
        with pymongo.MongoClient(f"mongodb://127.0.0.1:{fdb.ports['listen']}") as c:
            ids = sorted(d["_id"] for d in c[DB].ledger.find({}))
        assert ids == ["a1", "a2", "b1", "b2"], ids  # the double applies writes as they come
        # The getMore on the second connection was answered.
        replies = base.getmore_replies(sent)
        assert len(replies) == 1 and replies[0]["ok"] == 1, replies
    finally:
        staging.close()
        fdb.stop()

"""Traffic recording through docguard: a SCRAM workload recorded in the MongoDB server's
traffic-recording layout, read back by a reader written here from the layout alone; secrets
absent from every file; a flood past a tiny queue fails the recording but no operation; start
and stop through the admin API behind its token, or without one only by the file's opt-in;
what a web page could send refused; settings out of bounds refused with 400; the files the
owner's only."""

from __future__ import annotations

import base64
import json
import os
import stat
import threading
import uuid

import pymongo
import pytest
from pymongo import monitoring

import harness
from harness import (Packet, admin_call, body_of, crc32c, metrics, read_packets,
                     sequences_of, start_proxy)

pytestmark = pytest.mark.proxy


class Started(harness.CommandsStarted, monitoring.CommandListener):
    pass


@pytest.fixture
def auth_upstream(tmp_path):
    fdb = harness.start_ferretdb(tmp_path / "fdb", auth=True)
    yield f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    fdb.stop()


def test_recording_holds_every_request_in_order_and_no_secret(tmp_path, auth_upstream):
    rec = tmp_path / "rec"
    dg = start_proxy(tmp_path, auth_upstream,
                     f"recording: {{enabled: true, directory: '{rec}', max_file_bytes: 1MiB}}\n")
    listener = Started()
    uri = f"mongodb://127.0.0.1:{dg.ports['listen']}"
    try:
        # The second client compresses its requests: they are recorded decompressed.
        for mechanism, compression in (("SCRAM-SHA-256", {}), ("SCRAM-SHA-1", {"compressors": "zlib"})):
            c = pymongo.MongoClient(uri, username=harness.AUTH_USER, password=harness.AUTH_PASSWORD,
                                    authSource="admin", authMechanism=mechanism, **compression,
                                    appName="rec-" + mechanism, retryWrites=True,
                                    event_listeners=[listener], serverSelectionTimeoutMS=10000)
            coll = c["it_rec_" + uuid.uuid4().hex[:8]].c
            # 2 KB a document: over 1 MiB a client, so the data files rotate.
            coll.insert_many([{"i": i, "pad": "x" * 2000} for i in range(300)])  # kind-1
            assert len(list(coll.find({}, batch_size=70))) == 300  # find + 4 getMores
            cursor = coll.find({}, batch_size=10)
            next(cursor)
            cursor.close()  # killCursors
            with c.start_session() as s:
                coll.update_one({"i": 1}, {"$set": {"r": 1}}, session=s)  # retryable: txnNumber
            coll.database.client.drop_database(coll.database.name)
            c.close()
        code, status = admin_call(dg, "POST", "/recording/stop")
        assert code == 200 and status["state"] == "stopped", status
        assert metrics(dg)[("docguard_compressed_messages_total",
                            frozenset({("compressor", "zlib")}))] > 0
    finally:
        dg.stop()

    packets = read_packets(rec)
    assert [p.order for p in packets] == sorted(p.order for p in packets)
    assert len({p.order for p in packets}) == len(packets)
    requests = [p for p in packets if p.event == 0]
    recorded = {(p.request_id, next(iter(body_of(p)))) for p in requests}
    missing = [e for e in listener.events if e not in recorded]
    assert not missing, missing
    conn_of = {p.request_id: p.connection for p in requests}
    by_conn: dict[int, list[Packet]] = {}
    for p in packets:
        by_conn.setdefault(p.connection, []).append(p)
    for conn, ps in by_conn.items():
        assert ps[0].event == 2 and ps[-1].event == 3, conn  # session start ... end
        offsets = [p.offset for p in ps]
        assert offsets == sorted(offsets), conn
        # Per-connection order: the requests in the order the driver sent them on that socket.
        monitored = {rid for rid, _ in listener.events}
        in_file = [p.request_id for p in ps if p.event == 0 and p.request_id in monitored]
        sent = [rid for rid, _ in listener.events if conn_of[rid] == conn]
        assert in_file == sent, conn
        seen = set()
        for p in ps:
            if p.event == 0:
                seen.add(p.request_id)
            if p.event == 1:
                assert p.response_to in seen, conn  # each reply after its request
    assert not [p for p in packets if p.opcode == 2012]  # OP_COMPRESSED written decompressed
    commands = [next(iter(body_of(p))) for p in requests]
    for name in ("saslStart", "saslContinue", "insert", "find", "getMore", "killCursors",
                 "update"):
        assert name in commands, (name, commands)
    assert commands.count("getMore") >= 8
    inserts = [p for p in requests if next(iter(body_of(p))) == "insert"]
    assert sum(sequences_of(p).get("documents", 0) for p in inserts) == 600
    assert any("txnNumber" in body_of(p) for p in requests if next(iter(body_of(p))) == "update")
    for p in requests:
        b = body_of(p)
        if next(iter(b)) in ("saslStart", "saslContinue"):
            assert b["payload"] == "[redacted by docguard]", b
        assert "$clusterTime" not in b
        if "speculativeAuthenticate" in b:
            assert b["speculativeAuthenticate"] == "[redacted by docguard]", b
    # The handshake authenticated speculatively, and the server's SCRAM answers are gone too.
    assert any("speculativeAuthenticate" in body_of(p) for p in requests
               if next(iter(body_of(p))) in ("hello", "isMaster", "ismaster"))
    sasl_ids = {p.request_id for p in requests if next(iter(body_of(p))) in ("saslStart",
                                                                             "saslContinue")}
    sasl_replies = [body_of(p) for p in packets if p.event == 1 and p.response_to in sasl_ids]
    assert sasl_replies and all(r["payload"] == "[redacted by docguard]" for r in sasl_replies)
    assert not any("$clusterTime" in body_of(p) for p in packets if p.event == 1)

    # No secret in any file: the password, SCRAM's messages raw or in base64.
    password = harness.AUTH_PASSWORD.encode()
    needles = [password, base64.b64encode(password), b"n,,n=", b"biwsbj0", b"c=biws,r=",
               base64.b64encode(b"c=biws,r=")[:8]]
    for path in rec.iterdir():
        data = path.read_bytes()
        for needle in needles:
            assert needle not in data, (path.name, needle)
    # Each finished file has its CRC-32C in checksum.txt.
    sums = dict(line.split("\t") for line in (rec / "checksum.txt").read_text().splitlines())
    bins = sorted(p.name for p in rec.glob("*.bin"))
    assert len(bins) >= 2  # rotated at 1 MiB
    for name in bins + [n[:-4] + ".docguard.jsonl" for n in bins]:
        assert int(sums[name], 16) == crc32c((rec / name).read_bytes()), name
    side = [json.loads(line) for n in bins for line in
            (rec / (n[:-4] + ".docguard.jsonl")).read_text().splitlines()]
    assert len(side) == len(packets)
    assert {s["app"] for s in side if "app" in s} >= {"rec-SCRAM-SHA-256", "rec-SCRAM-SHA-1"}
    assert any(s.get("command") == "find" and s.get("verdict") == "forwarded" for s in side)


def test_a_flood_past_the_queue_fails_the_recording_not_the_traffic(tmp_path):
    fdb = harness.start_ferretdb(tmp_path / "fdb")
    rec = tmp_path / "rec"
    dg = start_proxy(tmp_path, f"mongodb://127.0.0.1:{fdb.ports['listen']}",
                     f"recording: {{enabled: true, directory: '{rec}', queue_bytes: 4KiB}}\n")
    errors: list[BaseException] = []
    try:
        c = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}", maxPoolSize=8)
        coll = c["it_rec_flood_" + uuid.uuid4().hex[:6]].c

        def flood(t: int):
            try:
                for i in range(20):
                    r = coll.insert_many([{"t": t, "i": i, "k": k, "pad": "y" * 500}
                                          for k in range(20)])
                    assert len(r.inserted_ids) == 20
            except BaseException as e:  # noqa: BLE001 - any failure of live traffic counts
                errors.append(e)

        threads = [threading.Thread(target=flood, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[:3]
        assert coll.count_documents({}) == 4 * 20 * 20
        code, status = admin_call(dg, "GET", "/recording")
        assert code == 200 and status["state"] == "failed", status
        assert "queue" in status["reason"] and status["dropped"] >= 1, status
        m = metrics(dg)
        assert harness.metric_sum(m, "docguard_recording_failures_total", reason="queue_full") == 1
        assert harness.metric_sum(m, "docguard_recording_dropped_total") >= 1
        assert harness.metric_sum(m, "docguard_upstream_errors_total") == 0
        code, full = admin_call(dg, "GET", "/status")
        assert full["recording"]["state"] == "failed"
        c.drop_database(coll.database.name)
        c.close()
    finally:
        dg.stop()
        fdb.stop()
    read_packets(rec)  # what was written before the failure is whole


def test_recording_starts_and_stops_through_the_admin_api(tmp_path):
    fdb = harness.start_ferretdb(tmp_path / "fdb")
    rec = tmp_path / "api-rec"
    dg = start_proxy(tmp_path, f"mongodb://127.0.0.1:{fdb.ports['listen']}")
    try:
        assert admin_call(dg, "GET", "/recording")[1]["state"] == "stopped"
        for token in (None, "wrong"):
            code, _ = admin_call(dg, "POST", "/recording/start", {"directory": str(rec)}, token)
            assert code == 401
            assert admin_call(dg, "GET", "/recording", token=token)[0] == 401
        assert not rec.exists()
        code, status = admin_call(dg, "POST", "/recording/start",
                                  {"directory": str(rec), "apps": ["api-app"]})
        assert code == 200 and status["state"] == "recording", status
        assert admin_call(dg, "POST", "/recording/start", {"directory": str(rec)})[0] == 409
        assert admin_call(dg, "POST", "/recording/start", {"nope": 1})[0] == 400
        uri = f"mongodb://127.0.0.1:{dg.ports['listen']}"
        name = "it_rec_api_" + uuid.uuid4().hex[:6]
        for app in ("api-app", "other-app"):
            c = pymongo.MongoClient(uri, appName=app)
            c[name].c.insert_one({"app": app})
            c.close()
        assert admin_call(dg, "POST", "/recording/stop", token=None)[0] == 401
        code, status = admin_call(dg, "POST", "/recording/stop")
        assert code == 200 and status["state"] == "stopped", status
        assert status["packets"] > 0 and status["files"], status
        assert admin_call(dg, "POST", "/recording/stop")[0] == 409
        packets = read_packets(rec)
        inserts = [body_of(p) for p in packets if p.event == 0 and p.opcode == 2013
                   and next(iter(body_of(p))) == "insert"]
        assert len(inserts) == 1
        side = [json.loads(line) for f in rec.glob("*.docguard.jsonl")
                for line in f.read_text().splitlines()]
        assert {s.get("app") for s in side if s["event"] in ("request", "response")} == {"api-app"}
        pymongo.MongoClient(uri).drop_database(name)
    finally:
        dg.stop()
        fdb.stop()


def _start_body(rec, **members) -> dict:
    return {"directory": str(rec), **members}


def test_without_a_token_only_the_opt_in_records_and_no_web_page_can(tmp_path):
    fdb = harness.start_ferretdb(tmp_path / "fdb")
    upstream = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    rec = tmp_path / "open-rec"
    dg = start_proxy(tmp_path / "closed", upstream, token=None)
    try:
        code, body = admin_call(dg, "POST", "/recording/start", _start_body(rec), token=None)
        assert code == 403 and "admin.token" in body["error"], body
        assert "recording.api_without_token" in body["error"], body
        assert admin_call(dg, "GET", "/recording", token=None)[0] == 200  # reading stays open
        assert not rec.exists()
    finally:
        dg.stop()
    dg = start_proxy(tmp_path / "open", upstream, "recording: {api_without_token: true}\n",
                     token=None)
    try:
        port = dg.ports["admin"]
        # What a page of another site can send without the browser asking first: a text/plain
        # POST (with and without its Origin), a JSON one from a foreign Origin, and a page whose
        # name was rebound to 127.0.0.1.
        raw = json.dumps(_start_body(rec)).encode()
        plain = {"Content-Type": "text/plain;charset=UTF-8"}
        assert admin_call(dg, "POST", "/recording/start", token=None, raw_body=raw,
                          headers=plain)[0] == 415
        assert admin_call(dg, "POST", "/recording/start", token=None, raw_body=raw,
                          headers={**plain, "Origin": "http://evil.example"})[0] == 403
        assert admin_call(dg, "POST", "/recording/start", _start_body(rec), token=None,
                          headers={"Origin": "http://evil.example"})[0] == 403
        assert admin_call(dg, "POST", "/recording/start", _start_body(rec), token=None,
                          headers={"Origin": "null"})[0] == 403
        assert admin_call(dg, "POST", "/recording/start", _start_body(rec), token=None,
                          headers={"Host": f"evil.example:{port}",
                                   "Origin": f"http://evil.example:{port}"})[0] == 421
        assert admin_call(dg, "GET", "/status", token=None,
                          headers={"Host": f"evil.example:{port}"})[0] == 421
        assert admin_call(dg, "GET", "/recording", token=None)[1]["state"] == "stopped"
        assert not rec.exists()
        # The probes check Host too (a rebound page learns not even whether the upstream is up),
        # but answer any Origin; an IP literal (a pod's address, [::1]) is never a rebound name.
        assert admin_call(dg, "GET", "/healthz", token=None,
                          headers={"Host": "docguard.svc:9216"})[0] == 421
        assert admin_call(dg, "GET", "/healthz", token=None,
                          headers={"Origin": "http://evil.example"})[0] == 200
        assert harness.http_get(f"http://127.0.0.1:{port}/metrics")[0] == 200
        assert admin_call(dg, "GET", "/status", token=None,
                          headers={"Host": f"[::1]:{port}"})[0] == 200
        # Settings a recording cannot have: 400, never 409 (that one is for a state conflict).
        for members in ({"max_duration": 1e17}, {"max_file_bytes": 1},
                        {"max_total_bytes": 10}, {"queue_bytes": 1e17}):
            code, body = admin_call(dg, "POST", "/recording/start", _start_body(rec, **members),
                                    token=None)
            assert code == 400, (members, body)
        code, body = admin_call(dg, "POST", "/recording/start", {"directory": "rel/rec"},
                                token=None)
        assert code == 400 and "absolute" in body["error"], body
        assert not rec.exists()
        # The opt-in's own way: JSON from curl (no Origin), its own origin too.
        code, body = admin_call(dg, "POST", "/recording/start", _start_body(rec), token=None,
                                headers={"Origin": f"http://127.0.0.1:{port}"})
        assert code == 200 and body["state"] == "recording", body
        c = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}")
        c.admin.command("ping")
        c.close()
        code, body = admin_call(dg, "POST", "/recording/stop", token=None)
        assert code == 200 and body["state"] == "stopped" and body["packets"] > 0, body
        assert admin_call(dg, "POST", "/recording/stop", token=None)[0] == 409
    finally:
        dg.stop()
        fdb.stop()
    # The recording is its owner's alone: the directory 0700, every file in it 0600.
    assert stat.S_IMODE(rec.stat().st_mode) == 0o700
    names = sorted(p.name for p in rec.iterdir())
    assert "checksum.txt" in names and any(n.endswith(".bin") for n in names), names
    for path in rec.iterdir():
        assert stat.S_IMODE(path.lstat().st_mode) == 0o600, path


def test_a_planted_checksum_link_fails_the_recording_and_is_not_followed(tmp_path):
    fdb = harness.start_ferretdb(tmp_path / "fdb")
    rec = tmp_path / "planted"
    rec.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    os.symlink(victim, rec / "checksum.txt")
    dg = start_proxy(tmp_path, f"mongodb://127.0.0.1:{fdb.ports['listen']}")
    try:
        code, body = admin_call(dg, "POST", "/recording/start", _start_body(rec))
        assert code == 200, body
        c = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}")
        c.admin.command("ping")
        c.close()
        code, body = admin_call(dg, "POST", "/recording/stop")
        assert code == 200, body
        status = admin_call(dg, "GET", "/recording")[1]
        assert status["state"] == "failed" and "symbolic link" in status["reason"], status
    finally:
        dg.stop()
        fdb.stop()
    assert victim.read_text() == "keep\n"
    assert (rec / "checksum.txt").is_symlink()

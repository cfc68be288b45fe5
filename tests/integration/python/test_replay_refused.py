"""A replay never does what production did not do. Requests the server refuses for their form (a
legacy OP_QUERY command, a command hidden in a `$query` member that is not the first, a `$db`
holding a NUL, none, or an empty one) are recorded through docguard in front of FerretDB ("prod")
and replayed against a second FerretDB with SCRAM ("staging") that holds users, key-vault keys
and documents: staging is unchanged, and each request is counted in `not_replayed` by its
reason. A file written by hand that would create a user creates none."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
from pathlib import Path

import bson
import pymongo
import pytest

import harness
from harness import admin_call, read_packets, start_proxy

pytestmark = pytest.mark.proxy

DB = "it_refused"
DELETE_ALL = [{"q": {}, "limit": 0}]


def op_query(request_id: int, ns: str, query: dict) -> bytes:
    payload = struct.pack("<i", 0) + ns.encode() + b"\0" + struct.pack("<ii", 0, -1)
    payload += bson.encode(query)
    return struct.pack("<iiii", 16 + len(payload), request_id, 0, 2004) + payload


def op_msg(request_id: int, body: bytes, response_to: int = 0) -> bytes:
    section = b"\0\0\0\0\0" + body
    return struct.pack("<iiii", 16 + len(section), request_id, response_to, 2013) + section


def raw_body(command: str, collection: str, db: bytes | None, **fields) -> bytes:
    """A command document with `$db` written as raw bytes (a NUL inside is kept), or without."""
    doc = bson.encode({command: collection, **fields})
    if db is None:
        return doc
    element = b"\x02$db\0" + struct.pack("<i", len(db) + 1) + db + b"\0"
    inner = doc[4:-1] + element
    return struct.pack("<i", len(inner) + 5) + inner + b"\0"


def send_raw(port: int, message: bytes) -> None:
    """One message on a connection of its own; the answer is read (whatever it is) or the
    connection closed."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(message)
        try:
            head = sock.recv(16)
            if len(head) == 16:
                left = struct.unpack_from("<i", head)[0] - 16
                while left > 0:
                    chunk = sock.recv(left)
                    if not chunk:
                        break
                    left -= len(chunk)
        except (socket.timeout, ConnectionError):
            pass


REFUSED_REQUESTS = {
    # legacy OP_QUERY commands: the server refuses them (352) since 5.1
    "legacy_op_query_command": [
        op_query(1, f"{DB}.$cmd", {"delete": "items", "deletes": DELETE_ALL}),
        op_query(2, "admin.$cmd", {"ping": 1, "$query": {"delete": "system.users",
                                                          "deletes": DELETE_ALL}}),
        op_query(3, "admin.$cmd", {"ping": 1, "$query": {"insert": "tempusers",
                                                          "documents": [{"_id": "x"}]}}),
        op_query(4, "encryption.$cmd", {"ping": 1, "$query": {"delete": "__keyVault",
                                                               "deletes": DELETE_ALL}}),
    ],
    # a `$db` the server refuses as a database name, or none
    "invalid_request": [
        op_msg(5, raw_body("delete", "__keyVault", b"encryption\0x", deletes=DELETE_ALL)),
        op_msg(6, raw_body("delete", "system.users", b"admin\0", deletes=DELETE_ALL)),
        op_msg(7, raw_body("delete", "items", None, deletes=DELETE_ALL)),
        op_msg(8, raw_body("delete", "items", b"", deletes=DELETE_ALL)),
    ],
}


def staging_state(uri: str) -> dict:
    with pymongo.MongoClient(uri, username=harness.AUTH_USER, password=harness.AUTH_PASSWORD) as c:
        return {
            "users": sorted(u["user"] for u in c.admin.command("usersInfo")["users"]),
            "items": sorted(d["_id"] for d in c[DB].items.find({})),
            "keys": c.encryption["__keyVault"].count_documents({}),
            "admin": sorted(c.admin.list_collection_names()),
        }


def seed_staging(uri: str) -> None:
    with pymongo.MongoClient(uri, username=harness.AUTH_USER, password=harness.AUTH_PASSWORD) as c:
        c[DB].items.drop()
        c[DB].items.insert_many([{"_id": i, "v": i} for i in range(5)])
        c.encryption["__keyVault"].drop()
        c.encryption["__keyVault"].insert_many([{"_id": i, "keyAltNames": [f"k{i}"]}
                                                for i in range(2)])
        if not c.admin.command("usersInfo", "victim")["users"]:
            c.admin.command("createUser", "victim", pwd="victim-password-1", roles=[])


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    work = tmp_path_factory.mktemp("replay-refused")
    prod = harness.start_ferretdb(work / "prod")
    staging = harness.start_ferretdb(work / "staging", auth=True)
    prod_uri = f"mongodb://127.0.0.1:{prod.ports['listen']}"
    staging_uri = f"mongodb://127.0.0.1:{staging.ports['listen']}"
    try:
        seed_staging(staging_uri)
        yield {"work": work, "prod_uri": prod_uri, "staging_uri": staging_uri}
    finally:
        prod.stop()
        staging.stop()


def replay(clusters, recording: Path, name: str) -> tuple[subprocess.CompletedProcess, dict]:
    port = clusters["staging_uri"].rsplit(":", 1)[1]
    target = (f"mongodb://{harness.AUTH_USER}:{harness.AUTH_PASSWORD}@127.0.0.1:{port}/"
              "?authSource=admin")
    report_dir = clusters["work"] / name
    proc = subprocess.run([str(harness.docguard_bin()), "replay", "--recording", str(recording),
                           "--target", target, "--speed", "max", "--report-dir", str(report_dir)],
                          capture_output=True, text=True, timeout=120)
    report = json.loads((report_dir / "report.json").read_text()) if proc.returncode in (0, 1) \
        else {}
    return proc, report


def test_requests_production_refused_are_not_replayed(clusters):
    rec = clusters["work"] / "rec"
    dg = start_proxy(clusters["work"] / "dg", clusters["prod_uri"],
                     f"recording: {{enabled: true, directory: '{rec}'}}\n")
    try:
        port = dg.ports["listen"]
        for messages in REFUSED_REQUESTS.values():
            for message in messages:
                send_raw(port, message)
        with pymongo.MongoClient(f"mongodb://127.0.0.1:{port}") as c:  # one request to replay
            assert c[DB].items.count_documents({}) >= 0
        admin_call(dg, "POST", "/recording/stop")
    finally:
        dg.stop()
    recorded_ids = {p.request_id for p in read_packets(rec) if p.event == 0}
    assert set(range(1, 9)) <= recorded_ids, recorded_ids  # every one of them is in the files

    before = staging_state(clusters["staging_uri"])
    proc, report = replay(clusters, rec, "report")
    assert proc.returncode in (0, 1), proc.stderr
    assert staging_state(clusters["staging_uri"]) == before
    not_replayed = report["not_replayed"]
    for reason, messages in REFUSED_REQUESTS.items():
        assert not_replayed.get(reason) == len(messages), (reason, not_replayed)
    assert report["counts"]["sent"] >= 1, report["counts"]


def write_crafted(directory: Path, requests: list[tuple[bytes, dict | None]]) -> None:
    """A recording in docguard's layout, written by hand: each request, then its reply."""
    directory.mkdir(parents=True)
    order, out = 0, b""
    session = b"127.0.0.1:5000\0"
    for i, (request, reply) in enumerate(requests):
        messages = [(0, request)]
        if reply is not None:
            request_id = struct.unpack_from("<i", request, 4)[0]
            messages.append((1, op_msg(9000 + i, bson.encode(reply), response_to=request_id)))
        for event, message in messages:
            order += 1
            size = 4 + 1 + 8 + len(session) + 8 + 8 + len(message)
            out += struct.pack("<IBQ", size, event, 1) + session
            out += struct.pack("<QQ", order * 10, order) + message
    (directory / "1700000000000.bin").write_bytes(out)


def test_a_crafted_file_creates_no_user(clusters):
    user = {"_id": "admin.evil", "userId": bson.Binary(b"0" * 16, 4), "user": "evil",
            "db": "admin", "credentials": {}, "roles": [{"role": "root", "db": "admin"}]}
    ok = {"ok": 1.0}
    requests = [
        (op_msg(1, bson.encode({"insert": "system.users", "documents": [user], "$db": "admin"})),
         ok),
        (op_msg(2, bson.encode({"createUser": "evil", "pwd": "known-password", "roles": ["root"],
                                "$db": "admin"})), ok),
        (op_query(3, "admin.$cmd", {"ping": 1, "$query": {"createUser": "evil",
                                                          "pwd": "known-password",
                                                          "roles": []}}), ok),
        (op_msg(4, raw_body("insert", "system.users", b"admin\0", documents=[user])), ok),
        (op_msg(5, bson.encode({"insert": "tempusers", "documents": [user], "$db": "admin"})), ok),
        # production refused this one as unauthorized: a replay with other credentials must not
        # make it happen
        (op_msg(6, bson.encode({"insert": "items", "documents": [{"_id": 99}], "$db": DB})),
         {"ok": 0.0, "code": 13, "codeName": "Unauthorized", "errmsg": "not authorized"}),
        (op_msg(7, bson.encode({"find": "items", "filter": {}, "$db": DB})),
         {"ok": 1.0, "cursor": {"id": 0, "ns": f"{DB}.items", "firstBatch": []}}),
    ]
    crafted = clusters["work"] / "crafted"
    write_crafted(crafted, requests)
    before = staging_state(clusters["staging_uri"])
    proc, report = replay(clusters, crafted, "crafted-report")
    assert proc.returncode in (0, 1), proc.stderr
    after = staging_state(clusters["staging_uri"])
    assert after == before and "evil" not in after["users"]
    not_replayed = report["not_replayed"]
    assert not_replayed.get("secret_namespace") == 2, not_replayed
    assert not_replayed.get("legacy_op_query_command") == 1, not_replayed
    assert not_replayed.get("invalid_request") == 1, not_replayed
    assert not_replayed.get("refused_when_recorded") == 1, not_replayed
    assert report["commands_not_allowed"] == {"createUser": 1}, report
    assert report["counts"]["sent"] == 1, report["counts"]

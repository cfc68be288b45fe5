"""Replay and whatif stream a recording: their memory is bounded by what is in flight, not by the
recording's size. A synthetic recording (written here in the documented layout: eight
connections of finds, each answered with one large document) is replayed against a FerretDB and
judged by whatif, and the peak resident size of each is measured. CI writes 256 MiB;
DOCGUARD_SCALE_BYTES=2147483648 makes the 2 GiB one the closing numbers were measured on."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import bson
import pytest

import harness

pytestmark = pytest.mark.proxy

SIZE = int(os.environ.get("DOCGUARD_SCALE_BYTES", str(256 << 20)))
REPLY_BYTES = 4 << 20
CONNECTIONS = 8
LIMIT_MIB = 200


def op_msg(request_id: int, response_to: int, body: dict) -> bytes:
    section = b"\0" + bson.encode(body)
    return struct.pack("<iiiiI", 16 + 4 + len(section), request_id, response_to, 2013, 0) + section


def packet(event: int, connection: int, offset: int, order: int, message: bytes) -> bytes:
    session = b"127.0.0.1:5000\0"
    size = 4 + 1 + 8 + len(session) + 8 + 8 + len(message)
    return (struct.pack("<IBQ", size, event, connection) + session +
            struct.pack("<QQ", offset, order) + message)


def write_recording(directory: Path, total: int) -> int:
    """Round-robin over the connections: a find, then its reply of one large document. Returns
    the number of requests."""
    directory.mkdir(parents=True)
    pad = "x" * REPLY_BYTES
    order, offset, written, requests = 0, 0, 0, 0
    file_no = 0
    out = None
    file_bytes = 0
    while written < total:
        if out is None or file_bytes > (256 << 20):
            if out:
                out.close()
            out = open(directory / f"{1700000000000 + file_no}.bin", "wb")
            file_no += 1
            file_bytes = 0
        conn = 1 + requests % CONNECTIONS
        request_id = 1000 + requests
        find = op_msg(request_id, 0, {"find": "big", "filter": {"_id": requests},
                                      "$db": "it_scale"})
        reply = op_msg(5000 + requests, request_id,
                       {"cursor": {"firstBatch": [{"_id": requests, "pad": pad}], "id": 0,
                                   "ns": "it_scale.big"}, "ok": 1.0})
        for event, message in ((0, find), (1, reply)):
            order += 1
            offset += 50
            data = packet(event, conn, offset, order, message)
            out.write(data)
            file_bytes += len(data)
            written += len(data)
        requests += 1
    out.close()
    return requests


def peak_rss_mib(argv: list[str]) -> tuple[int, float]:
    """Runs argv in a process of its own and returns its exit code and peak RSS in MiB."""
    probe = ("import resource, subprocess, sys;"
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL);"
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                         timeout=1800)
    code, kib = out.stdout.split()
    return int(code), int(kib) / 1024


def sanitized() -> bool:
    with open(harness.docguard_bin(), "rb") as binary:
        data = binary.read()
    return b"__asan_init" in data or b"__tsan_init" in data


def measure(tmp_path: Path, size: int) -> tuple[int, float, float]:
    rec = tmp_path / f"rec-{size}"
    requests = write_recording(rec, size)
    fdb = harness.start_ferretdb(tmp_path / f"fdb-{size}")
    try:
        target = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
        code, replay_mib = peak_rss_mib([str(harness.docguard_bin()), "replay", "--recording",
                                         str(rec), "--target", target, "--speed", "max",
                                         "--report-dir", str(tmp_path / f"report-{size}")])
        # Staging holds no such documents: every find differs, and that is exit code 1.
        assert code == 1, code
    finally:
        fdb.stop()
    cfg = tmp_path / "whatif.yaml"
    cfg.write_text("introspection:\n  enabled: false\nrules: []\n")
    code, whatif_mib = peak_rss_mib([str(harness.docguard_bin()), "whatif", "--config", str(cfg),
                                     "--recording", str(rec), "--format", "json"])
    assert code == 0, code
    print(f"{size / (1 << 20):.0f} MiB recording, {requests} requests: replay peak RSS "
          f"{replay_mib:.0f} MiB, whatif peak RSS {whatif_mib:.0f} MiB")
    return requests, replay_mib, whatif_mib


def test_replay_and_whatif_stream_a_large_recording(tmp_path):
    _, small_replay, small_whatif = measure(tmp_path, SIZE // 4)
    _, replay_mib, whatif_mib = measure(tmp_path, SIZE)
    # Four times the recording, about the same memory: what is held is what is in flight.
    assert replay_mib - small_replay < 64 and whatif_mib - small_whatif < 64, (
        small_replay, replay_mib, small_whatif, whatif_mib)
    if not sanitized():  # a sanitizer's own memory is not docguard's
        assert replay_mib < LIMIT_MIB and whatif_mib < LIMIT_MIB, (replay_mib, whatif_mib)

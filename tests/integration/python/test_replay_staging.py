"""A replay that protects staging. A workload recorded through docguard in front of one FerretDB
("prod") is replayed: against prod itself (refused, by two spellings of its address, and as a
baseline), against a FerretDB that refuses every write (stopped early), in part (by app,
namespace, command and time: read back from a recording docguard in front of "staging"), as a dry
run against nothing, and with a crafted 31-year offset (refused at speed 1)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pymongo
import pytest

import harness
from harness import admin_call, body_of, read_packets, start_proxy

pytestmark = pytest.mark.proxy

DB = "it_stg"
WRITES = 24  # inserts of app-writer, one request each


def workload(port: int) -> None:
    uri = f"mongodb://127.0.0.1:{port}"
    with pymongo.MongoClient(uri, appName="app-writer", maxPoolSize=1) as c:
        for i in range(WRITES):
            c[DB].events.insert_one({"_id": i, "n": i})
        # A cursor: a find and its getMore on one connection.
        first = c[DB].command({"find": "events", "filter": {}, "batchSize": 5})
        assert first["cursor"]["id"] != 0
        c[DB].command({"getMore": first["cursor"]["id"], "collection": "events", "batchSize": 5})
    time.sleep(2.0)  # app-reader's requests come after this pause: --from / --to split there
    with pymongo.MongoClient(uri, appName="app-reader", maxPoolSize=1) as c:
        for _ in range(3):
            c[DB].other.count_documents({})
        assert c[DB].events.find_one({"_id": 3})["n"] == 3


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    work = tmp_path_factory.mktemp("replay-staging")
    prod = harness.start_ferretdb(work / "prod")
    prod_port = prod.ports["listen"]
    rec = work / "rec"
    try:
        dg = start_proxy(work / "dg-prod", f"mongodb://127.0.0.1:{prod_port}",
                         f"recording: {{enabled: true, directory: '{rec}'}}\n")
        try:
            workload(dg.ports["listen"])
            admin_call(dg, "POST", "/recording/stop")
        finally:
            dg.stop()
        yield {"work": work, "rec": rec, "prod_port": prod_port}
    finally:
        prod.stop()


def run_replay(recording: Path, target: str, report: Path, *extra: str, timeout: float = 120):
    return subprocess.run([str(harness.docguard_bin()), "replay", "--recording", str(recording),
                           "--target", target, "--report-dir", str(report), *extra],
                          capture_output=True, text=True, timeout=timeout)


def side_lines(rec: Path) -> list[dict]:
    out = []
    for path in sorted(rec.glob("*.docguard.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines() if line]
    return out


def prod_events(port: int) -> int:
    with pymongo.MongoClient(f"mongodb://127.0.0.1:{port}") as c:
        return c[DB].events.count_documents({})


def test_the_side_file_names_the_source(recorded):
    starts = [s for s in side_lines(recorded["rec"]) if s["event"] == "session_start"]
    assert starts, "no session_start line"
    port = recorded["prod_port"]
    assert all(s["upstream"] == f"127.0.0.1:{port}" for s in starts), starts
    assert all(s["upstream_resolved"] == f"127.0.0.1:{port}" for s in starts), starts


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_replay_against_its_own_source_is_refused(recorded, tmp_path, host):
    port = recorded["prod_port"]
    before = prod_events(port)
    proc = run_replay(recorded["rec"], f"mongodb://{host}:{port}", tmp_path, "--speed", "max")
    assert proc.returncode == 2, proc.stderr
    assert f"--target mongodb://{host}:{port}" in proc.stderr, proc.stderr
    assert f"recorded upstream 127.0.0.1:{port}" in proc.stderr, proc.stderr
    assert "nothing was sent" in proc.stderr
    assert not (tmp_path / "report.json").exists()
    assert prod_events(port) == before


def test_a_dry_run_against_its_own_source_says_the_replay_would_be_refused(recorded, tmp_path):
    port = recorded["prod_port"]
    proc = run_replay(recorded["rec"], f"mongodb://localhost:{port}", tmp_path, "--dry-run")
    assert proc.returncode == 2, proc.stderr
    assert f"recorded upstream 127.0.0.1:{port}" in proc.stderr, proc.stderr
    assert ": send " not in proc.stdout, proc.stdout
    assert not (tmp_path / "report.json").exists()


def test_a_baseline_that_is_the_source_is_refused(recorded, tmp_path):
    staging = harness.start_ferretdb(tmp_path / "staging")
    port = recorded["prod_port"]
    try:
        proc = run_replay(recorded["rec"], f"mongodb://127.0.0.1:{staging.ports['listen']}",
                          tmp_path / "report", "--speed", "max", "--baseline",
                          f"mongodb://localhost:{port}")
    finally:
        staging.stop()
    assert proc.returncode == 2, proc.stderr
    assert f"--baseline mongodb://localhost:{port}" in proc.stderr, proc.stderr


def test_a_target_that_refuses_every_write_stops_the_replay(recorded, tmp_path):
    """The staging FerretDB cannot open the database's file (a directory stands in its place),
    so every insert is answered ok: 0 (InternalError) where the recording has ok: 1."""
    port = harness.free_port()
    staging = harness.start_ferretdb(tmp_path, port=port)
    (tmp_path / f"ferretdb-{port}" / f"{DB}.sqlite").mkdir()
    try:
        proc = run_replay(recorded["rec"], f"mongodb://127.0.0.1:{port}", tmp_path / "report",
                          "--speed", "max", "--abort-window", "10")
    finally:
        staging.stop()
    assert proc.returncode == 3, proc.stderr
    assert "stopped early after" in proc.stderr, proc.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    aborted = report["aborted"]
    assert "--abort-error-rate" in aborted["reason"], aborted
    assert 10 <= aborted["after_requests"] < WRITES, aborted
    assert report["counts"]["sent"] < WRITES, report["counts"]
    assert report["commands"]["insert"]["ok"] == 0, report["commands"]
    assert "Stopped early after" in (tmp_path / "report" / "report.html").read_text()


def test_writes_that_all_fail_with_write_errors_stop_the_replay(recorded, tmp_path):
    """The same inserts replayed twice into one staging: the second time each fails with E11000
    in writeErrors, answered ok: 1, where the recording has none: errors all the same."""
    staging = harness.start_ferretdb(tmp_path / "staging")
    target = f"mongodb://127.0.0.1:{staging.ports['listen']}"
    try:
        first = run_replay(recorded["rec"], target, tmp_path / "first", "--speed", "max",
                           "--command", "insert", "--abort-window", "10")
        second = run_replay(recorded["rec"], target, tmp_path / "second", "--speed", "max",
                            "--command", "insert", "--abort-window", "10")
    finally:
        staging.stop()
    assert first.returncode in (0, 1), first.stderr
    assert "aborted" not in json.loads((tmp_path / "first" / "report.json").read_text())
    assert second.returncode == 3, second.stderr
    assert "stopped early after" in second.stderr, second.stderr
    aborted = json.loads((tmp_path / "second" / "report.json").read_text())["aborted"]
    assert "--abort-error-rate" in aborted["reason"], aborted
    assert 10 <= aborted["after_requests"] < WRITES, aborted


def replay_through_staging(recorded, tmp_path, *selection: str):
    """Replays into a recording docguard in front of a fresh staging FerretDB; returns the
    report and what that docguard recorded (what the replay sent)."""
    staging = harness.start_ferretdb(tmp_path / "staging")
    sent = tmp_path / "sent"
    dg = start_proxy(tmp_path / "dg", f"mongodb://127.0.0.1:{staging.ports['listen']}",
                     f"recording: {{enabled: true, directory: '{sent}'}}\n")
    try:
        proc = run_replay(recorded["rec"], f"mongodb://127.0.0.1:{dg.ports['listen']}",
                          tmp_path / "report", "--speed", "max", *selection)
        admin_call(dg, "POST", "/recording/stop")
    finally:
        dg.stop()
        staging.stop()
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    commands = [(next(iter(body_of(p))), body_of(p)) for p in read_packets(sent)
                if p.event == 0 and next(iter(body_of(p))) in harness.REPLAYED]
    return report, commands


def test_selection_by_app(recorded, tmp_path):
    report, commands = replay_through_staging(recorded, tmp_path, "--app", "app-reader")
    names = [name for name, _ in commands]
    assert names.count("aggregate") == 3 and names.count("find") == 1, names
    assert "insert" not in names and "getMore" not in names, names
    assert report["not_replayed"]["not_selected"] >= WRITES + 2, report["not_replayed"]


def test_selection_by_namespace_and_command(recorded, tmp_path):
    report, commands = replay_through_staging(recorded, tmp_path, "--namespace", f"{DB}.events",
                                              "--command", "find")
    names = [name for name, _ in commands]
    # app-writer's find and app-reader's find_one; the getMore follows its find.
    assert names.count("find") == 2 and names.count("getMore") == 1, names
    assert set(names) == {"find", "getMore"}, names
    assert all(body.get("find", "events") == "events" for _, body in commands)


def test_selection_by_time(recorded, tmp_path):
    # app-writer's requests come before the 2 s pause, app-reader's after it: split in the middle
    # (seconds since the recording's start, the offsets' origin).
    app_of = {s["order"]: s.get("app") for s in side_lines(recorded["rec"])}
    offsets = {app: [p.offset for p in read_packets(recorded["rec"])
                     if p.event == 0 and app_of.get(p.order) == app]
               for app in ("app-writer", "app-reader")}
    split = (max(offsets["app-writer"]) + min(offsets["app-reader"])) / 2 / 1e6
    report, commands = replay_through_staging(recorded, tmp_path, "--from", f"{split:.3f}")
    names = [name for name, _ in commands]
    assert "insert" not in names and names.count("aggregate") == 3, names
    report, commands = replay_through_staging(recorded, tmp_path / "to", "--to", f"{split:.3f}")
    names = [name for name, _ in commands]
    assert names.count("insert") == WRITES and "aggregate" not in names, names


def test_selection_by_shape_and_by_rfc3339_time(recorded, tmp_path):
    shapes = {s["shape"] for s in side_lines(recorded["rec"])
              if s["event"] == "request" and s.get("command") == "aggregate"}
    assert len(shapes) == 1, shapes  # app-reader's count_documents
    report, commands = replay_through_staging(recorded, tmp_path, "--shape", shapes.pop())
    names = [name for name, _ in commands]
    assert names == ["aggregate"] * 3, names
    # An RFC 3339 bound counts from the recording's start, its first data file's name (ms).
    start_ms = int(sorted(recorded["rec"].glob("*.bin"))[0].stem)
    app_of = {s["order"]: s.get("app") for s in side_lines(recorded["rec"])}
    reader_first = min(p.offset for p in read_packets(recorded["rec"])
                       if p.event == 0 and app_of.get(p.order) == "app-reader")
    at = start_ms / 1000 + reader_first / 1e6 - 0.5
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"
    report, commands = replay_through_staging(recorded, tmp_path / "rfc3339", "--from", text)
    names = [name for name, _ in commands]
    assert "insert" not in names and names.count("aggregate") == 3, (text, names)


def test_a_dry_run_connects_to_nothing(recorded, tmp_path):
    started = time.monotonic()
    proc = run_replay(recorded["rec"], "mongodb://no-such-host.invalid:1", tmp_path, "--dry-run",
                      "--speed", "1")
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 10
    lines = proc.stdout.splitlines()
    sends = [line for line in lines if ": send " in line]
    assert len([line for line in sends if "send insert on it_stg" in line]) == WRITES, lines
    assert any(": handshake" in line and "skip ismaster" in line.lower() or "skip hello" in line
               for line in lines), lines
    getmore = [line for line in sends if "send getMore" in line]
    assert len(getmore) == 1 and "(live id of request at order " in getmore[0], getmore
    assert any("-> session 1" in line for line in sends), sends
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["dry_run"] is True
    assert report["counts"]["sent"] == len(sends)
    assert "dry run: nothing was sent" in proc.stderr
    # The summary names why the rest was not replayed.
    assert "not replayed (" in proc.stderr and " handshakes" in proc.stderr, proc.stderr


def test_an_empty_window_is_refused_and_an_empty_selection_warned(recorded, tmp_path):
    proc = run_replay(recorded["rec"], "mongodb://no-such-host.invalid:1", tmp_path / "a",
                      "--dry-run", "--from", "10", "--to", "5")
    assert proc.returncode == 2, proc.stderr
    assert "the window ends before it begins" in proc.stderr, proc.stderr
    proc = run_replay(recorded["rec"], "mongodb://no-such-host.invalid:1", tmp_path / "b",
                      "--dry-run", "--app", "no-such-app")
    assert proc.returncode == 0, proc.stderr
    assert "warning: the selection matched no request" in proc.stderr, proc.stderr
    assert "not_selected" in proc.stderr, proc.stderr


def test_a_31_year_offset_is_refused_at_speed_1(recorded, tmp_path):
    """The last packet's offset set 31 years on (its file's checksum recomputed, so the recording
    reads as whole): at speed 1 the replay would wait that long, and is refused before anything
    is sent; at max it does not wait."""
    crafted = tmp_path / "rec"
    shutil.copytree(recorded["rec"], crafted)
    last = sorted(crafted.glob("*.bin"))[-1]
    data = bytearray(last.read_bytes())
    at, starts = 0, []
    while at < len(data):
        starts.append(at)
        at += struct.unpack_from("<I", data, at)[0]
    start = starts[-1]
    offset_at = data.index(b"\0", start + 13) + 1
    offset = struct.unpack_from("<Q", data, offset_at)[0]
    struct.pack_into("<Q", data, offset_at, offset + 31 * 365 * 86400 * 10**6)
    last.write_bytes(bytes(data))
    sums = crafted / "checksum.txt"
    if sums.exists():
        lines = [line for line in sums.read_text().splitlines()
                 if not line.startswith(last.name + "\t")]
        lines.append(f"{last.name}\t{harness.crc32c(bytes(data)):08x}")
        sums.write_text("\n".join(lines) + "\n")
    port = harness.free_port()  # nothing listens: a replay that connected would fail otherwise
    started = time.monotonic()
    proc = run_replay(crafted, f"mongodb://127.0.0.1:{port}", tmp_path / "report", "--speed", "1",
                      timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert time.monotonic() - started < 10
    assert "--max-duration" in proc.stderr and "days" in proc.stderr, proc.stderr
    assert "nothing was sent" in proc.stderr

"""A recording directory someone else could write to: `docguard whatif` and `docguard replay`
read only regular files (a FIFO named like a data file, a side file or checksum.txt fails them at
once with exit code 2 and the file's name, where it blocked them forever), and their reports are
renamed into place (a link planted under report.json or whatif's --output is replaced, the file
it points to untouched)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pymongo
import pytest

import harness
from harness import admin_call, start_proxy

pytestmark = pytest.mark.proxy


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A small recording of a few reads and writes, and the FerretDB it was made against."""
    work = tmp_path_factory.mktemp("files-safety")
    fdb = harness.start_ferretdb(work / "fdb")
    uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    rec = work / "rec"
    dg = start_proxy(work / "dg", uri, f"recording: {{enabled: true, directory: '{rec}'}}\n")
    try:
        c = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}", appName="safety")
        coll = c["it_safety_" + uuid.uuid4().hex[:6]].c
        coll.insert_many([{"i": i} for i in range(5)])
        assert len(list(coll.find({"i": {"$gte": 2}}))) == 3
        c.close()
        code, status = admin_call(dg, "POST", "/recording/stop")
        assert code == 200 and status["state"] == "stopped", status
    finally:
        dg.stop()
    try:
        yield {"work": work, "rec": rec, "uri": uri}
    finally:
        fdb.stop()


def permissive_config(work: Path) -> Path:
    cfg = work / "permissive.yaml"
    cfg.write_text("introspection:\n  enabled: false\nrules: []\n")
    return cfg


def with_fifo(recorded, name_of) -> Path:
    """A copy of the recording with a FIFO planted under the name `name_of(first .bin)`."""
    copy = recorded["work"] / ("fifo-" + uuid.uuid4().hex[:6])
    shutil.copytree(recorded["rec"], copy)
    first = sorted(p.name for p in copy.glob("*.bin"))[0]
    planted = copy / name_of(first)
    if planted.exists():
        planted.unlink()
    os.mkfifo(planted)
    return copy


PLANTED = {
    "data file": lambda first: "99999999999999.bin",
    "side file": lambda first: first[:-4] + ".docguard.jsonl",
    "checksum.txt": lambda first: "checksum.txt",
}


@pytest.mark.parametrize("where", sorted(PLANTED))
def test_a_fifo_fails_whatif_and_replay_at_once(recorded, where):
    copy = with_fifo(recorded, PLANTED[where])
    cfg = permissive_config(recorded["work"])
    for args in (["whatif", "--config", str(cfg), "--recording", str(copy)],
                 ["replay", "--recording", str(copy), "--target", recorded["uri"],
                  "--report-dir", str(copy.parent / ("report-" + copy.name))]):
        started = time.monotonic()
        # The timeout is the test's guard: before, this waited for a writer that never came.
        proc = subprocess.run([str(harness.docguard_bin()), *args], capture_output=True,
                              text=True, timeout=30)
        took = time.monotonic() - started
        assert proc.returncode == 2, (args[0], where, proc.returncode, proc.stderr)
        assert "not a regular file" in proc.stderr, (args[0], where, proc.stderr)
        assert took < 10, (args[0], where, took)


def test_reports_replace_a_planted_link_instead_of_writing_through_it(recorded):
    work = recorded["work"] / "reports"
    work.mkdir()
    victim = work / "victim.txt"
    victim.write_text("keep\n")
    report_dir = work / "replay-report"
    report_dir.mkdir()
    os.symlink(victim, report_dir / "report.json")
    os.symlink(victim, report_dir / "report.html")
    # A dry run writes the same reports; it connects to nothing, so any target other than the
    # recording's own source (which is refused) will do.
    proc = subprocess.run([str(harness.docguard_bin()), "replay", "--recording",
                           str(recorded["rec"]), "--target", "mongodb://staging.invalid:27017",
                           "--dry-run",
                           "--report-dir", str(report_dir)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    for name in ("report.json", "report.html"):
        assert not (report_dir / name).is_symlink(), name
        assert (report_dir / name).stat().st_mode & 0o777 == 0o600, name
    assert json.loads((report_dir / "report.json").read_text())["counts"]["sent"] > 0
    output = work / "whatif.json"
    os.symlink(victim, output)
    proc = subprocess.run([str(harness.docguard_bin()), "whatif", "--config",
                           str(permissive_config(work)), "--recording", str(recorded["rec"]),
                           "--format", "json", "--output", str(output)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not output.is_symlink()
    assert "refused" in json.loads(output.read_text())
    assert victim.read_text() == "keep\n"
    # Nothing left beside the reports (the new files were renamed into place).
    assert sorted(p.name for p in work.iterdir()) == ["permissive.yaml", "replay-report",
                                                      "victim.txt", "whatif.json"]
    assert sorted(p.name for p in report_dir.iterdir()) == ["report.html", "report.json"]

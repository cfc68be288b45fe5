"""docguard_cluster_probe (TopologyMonitor) against the replica-set double (tests/cluster/rs_double.py).

Checks what the proxy will rely on: a stepdown is reported with the new primary and a higher
primary_generation; a killed primary leaves nothing writable until a new election; `--mongos`
mode gives several writable candidates, and a killed mongos drops out; request_check() (a line
"check" on the probe's stdin) finds a stepdown at once despite a 10 s heartbeat. Prints the delays from
each change to the probe's JSON line.

Run:  DOCGUARD_TOOLS=/work/main/.tools /work/main/.tools/venv/bin/python -m pytest -q -s \
        tests/cluster_monitor/test_probe_rs_double.py
Environment: DOCGUARD_CLUSTER_PROBE (default build/bin/docguard_cluster_probe), RS_DOUBLE (path of
rs_double.py when not at tests/cluster/rs_double.py), FERRETDB_BIN / DOCGUARD_TOOLS.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration" / "python"))
import harness  # noqa: E402

_double = Path(os.environ.get("RS_DOUBLE", ROOT / "tests" / "cluster" / "rs_double.py"))
if not _double.exists():
    pytest.skip(f"no replica-set double at {_double} (set RS_DOUBLE)", allow_module_level=True)
sys.path.insert(0, str(_double.parent))
import rs_double  # noqa: E402

PROBE = Path(os.environ.get("DOCGUARD_CLUSTER_PROBE", ROOT / "build" / "bin" / "docguard_cluster_probe"))


class Probe:
    """The probe as a subprocess; its JSON lines collected with their arrival time."""

    def __init__(self, uri: str):
        self.p = subprocess.Popen([str(PROBE), uri], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.last: dict | None = None

    def _read(self):
        for line in self.p.stdout:
            self.lines.put((time.monotonic(), json.loads(line)))

    def wait(self, pred, timeout: float = 10.0) -> tuple[float, dict]:
        """(arrival time, topology) of the first new line whose topology satisfies pred."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no topology matched within {timeout}s; last: {self.last}")
            try:
                t, doc = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if "topology" in doc:
                self.last = doc["topology"]
                if pred(self.last):
                    return t, self.last

    def check(self) -> None:
        """TopologyMonitor::request_check(), as the proxy calls it after NotWritablePrimary."""
        self.p.stdin.write("check\n")
        self.p.stdin.flush()

    def stop(self) -> dict:
        self.p.terminate()
        self.p.wait(timeout=10)
        counters = {}
        while not self.lines.empty():
            _, doc = self.lines.get()
            counters = doc.get("counters", counters)
        return counters


@pytest.fixture(scope="module")
def ferretdb():
    if not PROBE.exists():
        pytest.skip(f"build docguard_cluster_probe first ({PROBE})")
    work = Path(tempfile.mkdtemp(prefix="docguard-cluster-probe-"))
    fdb = harness.start_ferretdb(work)
    yield f"127.0.0.1:{fdb.ports['listen']}"
    fdb.stop()
    shutil.rmtree(work, ignore_errors=True)


def test_replica_set_stepdown_and_killed_primary(ferretdb):
    d = rs_double.RunningDouble(ferretdb, ports=3)
    probe = Probe(d.uri(heartbeatFrequencyMS=500))
    try:
        a = d.addresses
        _, t = probe.wait(lambda t: t["primary"] == a[0])
        assert t["type"] == "ReplicaSetWithPrimary" and t["candidates"] == [a[0]]
        assert t["persona"]["setName"] == "rs0" and not t["persona"]["isdbgrid"]
        gen = t["primary_generation"]

        t0 = time.monotonic()
        d.step_down(1)
        arrived, t = probe.wait(lambda t: t["primary"] == a[1])
        print(f"\nstepdown -> new primary reported after {arrived - t0:.2f} s")
        assert t["primary_generation"] > gen and t["writable"] == [a[1]]
        gen = t["primary_generation"]

        t0 = time.monotonic()
        d.kill(1)
        arrived, t = probe.wait(lambda t: not t["writable"])
        print(f"killed primary -> no writable server after {arrived - t0:.2f} s ({t['type']})")
        assert t["type"] == "ReplicaSetNoPrimary" and t["primary_generation"] == gen + 1
        t0 = time.monotonic()
        d.elect(2)
        arrived, t = probe.wait(lambda t: t["primary"] == a[2])
        print(f"new election -> new primary reported after {arrived - t0:.2f} s")
        assert t["primary_generation"] == gen + 2
        d.revive(1)
        probe.wait(lambda t: any(s["address"] == a[1] and s["type"] == "RSSecondary"
                                 for s in t["servers"]))
        # Monitoring only: hellos (which the double does not count) and nothing else.
        assert all(not m["forwarded"] for m in d.status()["members"]), d.status()["members"]
    finally:
        counters = probe.stop()
        d.close()
    assert counters["primary_changes"] == 2  # a0 -> a1 -> a2 (losing a1 alone is no change)


def test_mongos_mode_gives_several_candidates(ferretdb):
    d = rs_double.RunningDouble(ferretdb, ports=3, mongos=True)
    # A wide latency window: on a loaded machine (TSan) loopback RTTs can differ by over 15 ms.
    probe = Probe(d.uri(heartbeatFrequencyMS=500, localThresholdMS=1000))
    try:
        a = sorted(d.addresses)
        _, t = probe.wait(lambda t: len(t["writable"]) == 3)
        assert t["type"] == "Sharded" and t["persona"]["isdbgrid"]
        assert t["candidates"] == a
        t0 = time.monotonic()
        d.kill(a[1])
        arrived, t = probe.wait(lambda t: len(t["writable"]) == 2)
        print(f"\nkilled mongos dropped from candidates after {arrived - t0:.2f} s")
        assert t["candidates"] == [a[0], a[2]]
    finally:
        probe.stop()
        d.close()


def test_request_check_beats_the_default_heartbeat(ferretdb):
    """With heartbeatFrequencyMS at its 10 s default and no streaming hello (the double, like a
    server before 4.4), a stepdown is seen at the next heartbeat; request_check() (the proxy calls
    it on NotWritablePrimary or a closed socket) makes libmongoc look at once."""
    d = rs_double.RunningDouble(ferretdb, ports=3)
    probe = Probe(d.uri())
    try:
        a = d.addresses
        probe.wait(lambda t: t["primary"] == a[0])
        t0 = time.monotonic()
        d.step_down(1)
        probe.check()
        arrived, t = probe.wait(lambda t: t["primary"] == a[1], timeout=3)
        print(f"\nstepdown + request_check -> new primary after {arrived - t0:.2f} s")
        t0 = time.monotonic()
        d.kill(1)
        probe.check()
        arrived, t = probe.wait(lambda t: not t["writable"], timeout=3)
        print(f"killed primary + request_check -> no writable after {arrived - t0:.2f} s")
    finally:
        probe.stop()
        d.close()

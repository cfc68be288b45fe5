"""Fixtures for the cluster suite: FerretDB, the replica-set double, the client target.

Environment:
  DOCGUARD_CLUSTER_VIA=double (default) | docguard   clients talk to the double directly, or to
                      docguard (DOCGUARD_BIN) started with the double's URI as --upstream
  DOCGUARD_CLUSTER_DNS_IP   set by run.sh inside its mount namespace: the private DNS address
  DOCGUARD_CLUSTER_KEEP=1   keep the work dir (FerretDB, dnsmasq and docguard logs)
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402  tests/cluster/harness.py

TIMINGS: list[tuple[str, float]] = []  # (what, seconds) failover times measured by the tests


def pytest_terminal_summary(terminalreporter):
    if TIMINGS:
        terminalreporter.section("failover times")
        for what, value in TIMINGS:
            terminalreporter.write_line(f"{what}: {value:g}" if what.endswith(")") else
                                        f"{what}: {value:.2f} s")


@pytest.fixture(scope="session")
def workdir():
    d = Path(tempfile.mkdtemp(prefix="docguard-cluster-"))
    yield d
    if not os.environ.get("DOCGUARD_CLUSTER_KEEP"):
        shutil.rmtree(d, ignore_errors=True)


def _ferret(workdir, auth):
    try:
        return harness.start_ferretdb(workdir / ("ferret-auth" if auth else "ferret"), auth=auth)
    except harness.StartError as e:
        pytest.exit(str(e), returncode=3)


@pytest.fixture(scope="session")
def ferret(workdir):
    p = _ferret(workdir, False)
    yield p
    p.stop()


@pytest.fixture(scope="session")
def ferret_auth(workdir):
    p = _ferret(workdir, True)
    yield p
    p.stop()


@pytest.fixture
def double(ferret):
    """A 3-member replica set rs0 in front of the session's FerretDB; member 0 is primary."""
    d = harness.start_double(ferret)
    yield d
    d.close()


@pytest.fixture
def double_process(ferret, workdir):
    """The same replica set, as a child process driven over its control port (load tests)."""
    try:
        d = harness.DoubleProcess(ferret, log_path=workdir / "rs_double.log")
    except harness.StartError as e:
        pytest.fail(str(e))
    yield d
    d.close()


@pytest.fixture
def targets(workdir):
    """Factory: targets(cluster_uri) -> harness.Target (the double itself, or docguard before it)."""
    made: list[harness.Target] = []

    def make(uri: str) -> harness.Target:
        try:
            t = harness.make_target(uri, workdir / "docguard")
        except harness.StartError as e:
            pytest.fail(str(e))
        made.append(t)
        return t

    yield make
    for t in made:
        t.stop()


@pytest.fixture
def rs(double, targets):
    return targets(double.uri())


@pytest.fixture
def timings():
    def record(what: str, secs: float) -> None:
        TIMINGS.append((what, secs))
    return record

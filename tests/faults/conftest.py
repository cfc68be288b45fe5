"""Fixtures for the fault-injection suite (tests/faults).

Reuses tests/integration/python/harness.py to start FerretDB and docguard on free 127.0.0.1 ports.
The test process raises its own RLIMIT_NOFILE at import so that docguard and FerretDB, which inherit
it, can hold the 10,000-connection test's sockets (docguard needs two descriptors per client
connection: the client's and its own upstream connection).
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "integration" / "python"))
sys.path.insert(0, str(HERE))

import faultlib  # noqa: E402
import harness  # noqa: E402

WANT_NOFILE = int(os.environ.get("DOCGUARD_FAULTS_NOFILE", "65536"))


def _raise_nofile() -> tuple[int, int]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for new in ((max(soft, WANT_NOFILE), max(hard, WANT_NOFILE)), (hard, hard)):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, new)
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)


NOFILE = _raise_nofile()


@pytest.fixture(scope="session")
def workdir():
    d = Path(os.environ.get("DOCGUARD_FAULTS_WORKDIR") or tempfile.mkdtemp(prefix="docguard-faults-"))
    d.mkdir(parents=True, exist_ok=True)
    yield d
    if not os.environ.get("DOCGUARD_FAULTS_KEEP"):
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def ferret(workdir):
    """One FerretDB for the session (tests that restart an upstream start their own)."""
    try:
        p = harness.start_ferretdb(workdir / "ferret")
    except harness.StartError as e:
        pytest.exit(str(e), returncode=3)
    yield p
    p.stop()


@pytest.fixture(scope="session")
def ferret_uri(ferret):
    return f"mongodb://127.0.0.1:{ferret.ports['listen']}"


@pytest.fixture
def stub():
    s = faultlib.StubUpstream()
    yield s
    s.stop()


@pytest.fixture
def docguards(workdir, request):
    """Factory: start(upstream_uri, config_text="", **kw) -> faultlib.Docguard.

    At teardown every docguard started must still be alive; it is then stopped with SIGTERM and
    must exit 0.
    """
    started: list[faultlib.Docguard] = []

    def start(upstream_uri: str, config_text: str = "", **kw) -> faultlib.Docguard:
        try:
            dg = faultlib.start_docguard(upstream_uri, workdir / request.node.name[:60], config_text, **kw)
        except harness.StartError as e:
            pytest.fail(str(e))
        started.append(dg)
        # the harness's readiness probes (a PyMongo ping) close asynchronously: start every test
        # from zero active connections so gauges can be compared against a stable baseline
        faultlib.wait_until(lambda: dg.metric("docguard_connections_active") == 0, 10,
                            what="the readiness probes' connections to close")
        return dg

    yield start
    problems = []
    for dg in started:
        if not dg.alive():
            problems.append(f"docguard {dg.pid} died during the test (rc {dg.proc.popen.returncode}):\n"
                            + "\n".join(dg.log_lines()[-20:]))
            continue
        rc = dg.proc.stop(timeout=15)
        if rc != 0:
            problems.append(f"docguard {dg.pid} exited {rc} on SIGTERM")
    if problems:
        pytest.fail("\n".join(problems))

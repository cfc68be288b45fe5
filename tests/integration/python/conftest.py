"""pytest fixtures: FerretDB + docguard for the PyMongo integration tests.

Modes (environment):
  * DOCGUARD_URI set (run.sh does this): use that running docguard; DOCGUARD_ADMIN (host:port of
    the admin listener), DOCGUARD_LOG (its stderr log) and FERRETDB_URI describe the rest.
  * otherwise start FerretDB on a free port in a temp dir, then docguard in front of it
    (DOCGUARD_BIN, default build/bin/docguard), with a config file and stderr captured to a file.
  * DOCGUARD_DIRECT=1: no docguard, the tests talk to FerretDB directly (proves the tests against
    the real server); tests that need docguard itself (metrics, logs, persona) are skipped.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pymongo
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402


@dataclass
class Env:
    uri: str                 # what clients connect to (docguard, or FerretDB in direct mode)
    host: str
    port: int
    proxied: bool            # True when uri is docguard
    admin: str | None        # docguard admin host:port
    log_path: Path | None    # docguard stderr log
    ferret_uri: str
    workdir: Path

    def metrics(self) -> dict:
        assert self.admin, "no docguard admin listener in this mode"
        return harness.fetch_metrics(self.admin)

    def metric(self, name: str, **labels: str) -> float:
        return harness.metric_sum(self.metrics(), name, **labels)

    def log_lines(self, start: int = 0) -> list[str]:
        return harness.read_log_lines(self.log_path, start) if self.log_path else []

    def client(self, **kw) -> pymongo.MongoClient:
        kw.setdefault("serverSelectionTimeoutMS", 10000)
        return pymongo.MongoClient(self.uri, **kw)


def pytest_configure(config):
    config.addinivalue_line("markers", "proxy: needs docguard itself (skipped with DOCGUARD_DIRECT=1)")


@pytest.fixture(scope="session")
def env(tmp_path_factory):
    workdir = Path(os.environ.get("DOCGUARD_TEST_WORKDIR") or tmp_path_factory.mktemp("docguard-it"))
    procs: list[harness.Proc] = []
    try:
        if os.environ.get("DOCGUARD_URI"):
            uri = os.environ["DOCGUARD_URI"]
            hostport = uri.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0]
            host, port = hostport.rsplit(":", 1)
            direct = os.environ.get("DOCGUARD_DIRECT") == "1"
            log = os.environ.get("DOCGUARD_LOG")
            yield Env(uri=uri, host=host, port=int(port), proxied=not direct,
                      admin=os.environ.get("DOCGUARD_ADMIN"), log_path=Path(log) if log else None,
                      ferret_uri=os.environ.get("FERRETDB_URI", uri), workdir=workdir)
            return
        fdb = harness.start_ferretdb(workdir)
        procs.append(fdb)
        ferret_uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
        if os.environ.get("DOCGUARD_DIRECT") == "1":
            yield Env(uri=ferret_uri, host="127.0.0.1", port=fdb.ports["listen"], proxied=False,
                      admin=None, log_path=None, ferret_uri=ferret_uri, workdir=workdir)
            return
        dg = harness.start_docguard(ferret_uri, workdir)
        procs.append(dg)
        yield Env(uri=f"mongodb://127.0.0.1:{dg.ports['listen']}", host="127.0.0.1",
                  port=dg.ports["listen"], proxied=True, admin=f"127.0.0.1:{dg.ports['admin']}",
                  log_path=dg.log_path, ferret_uri=ferret_uri, workdir=workdir)
        assert dg.alive(), f"docguard died during the tests; log tail:\n{harness._tail(dg.log_path)}"
    except harness.StartError as e:
        pytest.exit(str(e), returncode=3)
    finally:
        for p in reversed(procs):
            p.stop()


@pytest.fixture(autouse=True)
def _skip_proxy_only(request, env):
    if request.node.get_closest_marker("proxy") and not env.proxied:
        pytest.skip("needs docguard (DOCGUARD_DIRECT=1)")


@pytest.fixture(scope="session")
def client(env):
    c = env.client()
    yield c
    c.close()


@pytest.fixture
def db(client):
    """A fresh database per test, dropped afterwards."""
    name = "it_" + uuid.uuid4().hex[:10]
    yield client[name]
    try:
        client.drop_database(name)
    except pymongo.errors.PyMongoError:
        pass


@pytest.fixture(scope="session")
def tmp_workdir():
    d = Path(tempfile.mkdtemp(prefix="docguard-extra-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@dataclass
class AuthEnv:
    uri: str        # docguard in front of a FerretDB with SCRAM users (or that FerretDB, direct)
    user: str
    password: str
    proxied: bool


@pytest.fixture(scope="session")
def auth_env(env):
    """SCRAM: run.sh's harness exports DOCGUARD_AUTH_URI; otherwise start an auth FerretDB (and
    docguard in front of it unless DOCGUARD_DIRECT=1) for this session."""
    if os.environ.get("DOCGUARD_AUTH_URI"):
        yield AuthEnv(os.environ["DOCGUARD_AUTH_URI"], os.environ["DOCGUARD_AUTH_USER"],
                      os.environ["DOCGUARD_AUTH_PASSWORD"], env.proxied)
        return
    if os.environ.get("DOCGUARD_URI"):
        pytest.skip("DOCGUARD_URI given without DOCGUARD_AUTH_URI (an older harness)")
    procs: list[harness.Proc] = []
    try:
        fdb = harness.start_ferretdb(env.workdir / "auth", auth=True)
        procs.append(fdb)
        uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
        if env.proxied:
            dg = harness.start_docguard(uri, env.workdir / "auth", config=None)
            procs.append(dg)
            uri = f"mongodb://127.0.0.1:{dg.ports['listen']}"
        yield AuthEnv(uri, harness.AUTH_USER, harness.AUTH_PASSWORD, env.proxied)
    except harness.StartError as e:
        pytest.fail(str(e))
    finally:
        for p in reversed(procs):
            p.stop()

"""docguard judges a connection's commands only once the server would: against a FerretDB with
authentication, an unauthenticated client gets the server's own 13 Unauthorized for a write that
breaks a rule and for a find the guardrail refuses, and leaves nothing in /metrics, /status or
the workload ledger; authenticated, the same requests get 121 and 291. Against an upstream
without authentication every command is judged as it arrives. Refusals name no config line, glob
or rule id unless errors.reveal_rule_source says so. upstream_auth: required / none override
what docguard finds out itself."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pymongo
import pytest
from pymongo.errors import OperationFailure, WriteError

import harness

pytestmark = pytest.mark.proxy

RULES = """\
mode: warn
rules:
  - match: "authz.items"
    action: block
    max_array_length: 3
  - id: authz-indexes
    match: "authz.orders"
    action: block
    require_index: true
advisor:
  live_sample_every: 1
"""

BAD_DOC = {"tags": [1, 2, 3, 4]}


def _start(workdir: Path, upstream: str, extra: str = "") -> harness.Proc:
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "docguard.yaml"
    config.write_text(RULES + extra)
    return harness.start_docguard(upstream, workdir, config=config)


def _load(direct: pymongo.MongoClient) -> None:
    direct.authz.orders.insert_many([{"_id": i, "status": "open", "total": i} for i in range(5)])
    direct.authz.orders.create_index("status")


def _client(proc: harness.Proc, **kw) -> pymongo.MongoClient:
    return pymongo.MongoClient(f"mongodb://127.0.0.1:{proc.ports['listen']}",
                               serverSelectionTimeoutMS=10000, **kw)


def _authenticated(proc: harness.Proc) -> pymongo.MongoClient:
    return _client(proc, username=harness.AUTH_USER, password=harness.AUTH_PASSWORD,
                   authSource="admin", appname="authz-app")


def _observed(proc: harness.Proc) -> str:
    """What docguard shows of the traffic: /metrics, /status and the workload ledger."""
    _, metrics = harness.http_get(f"http://127.0.0.1:{proc.ports['admin']}/metrics")
    status = harness.admin_json(proc, "/status")
    report = harness.admin_json(proc, "/report.json")
    return metrics + json.dumps(status) + json.dumps(report.get("workload", []))


def _inspected(proc: harness.Proc) -> float:
    """How many requests reached the rules (docguard_inspection_seconds' count)."""
    return harness.metric_sum(harness.fetch_metrics(f"127.0.0.1:{proc.ports['admin']}"),
                              "docguard_inspection_seconds_count")


def _log(proc: harness.Proc) -> str:
    return proc.log_path.read_text()


@pytest.fixture(scope="module")
def auth_fdb(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("upstream-auth")
    fdb = harness.start_ferretdb(workdir, auth=True)
    uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    direct = pymongo.MongoClient(uri, username=harness.AUTH_USER, password=harness.AUTH_PASSWORD,
                                 authSource="admin", directConnection=True)
    _load(direct)
    try:
        yield workdir, uri
    finally:
        direct.close()
        fdb.stop()


def test_unauthenticated_requests_get_the_servers_13_and_leave_no_trace(auth_fdb):
    workdir, uri = auth_fdb
    dg = _start(workdir / "auto", uri)
    try:
        assert "the upstream requires authentication" in _log(dg)
        before = _observed(dg)
        inspected = _inspected(dg)
        anon = _client(dg, appname="anon-app")
        with pytest.raises(OperationFailure) as e:
            anon.authz.items.insert_one(dict(BAD_DOC))
        assert e.value.code == 13, e.value.details
        with pytest.raises(OperationFailure) as e:
            anon.authz.orders.find_one({"total": 3})
        assert e.value.code == 13, e.value.details
        for i in range(30):  # made-up namespaces: the server refuses, docguard keeps nothing
            with pytest.raises(OperationFailure):
                anon[f"made_up_{i}"].c.find_one({"x": 1})
        with pytest.raises(OperationFailure):
            list(anon.authz.orders.list_indexes())  # nothing learned from a refused listIndexes
        anon.close()
        after = _observed(dg)
        assert _inspected(dg) == inspected  # not one request of it reached the rules
        for name in ("made_up_", "anon-app"):
            assert name not in after, name
        # The rules name authz.items and authz.orders in /status; the traffic adds nothing.
        assert after.count("authz") == before.count("authz"), (before, after)

        # Authenticated, the same requests are judged.
        c = _authenticated(dg)
        list(c.authz.orders.list_indexes())  # docguard learns the indexes from the reply
        with pytest.raises(WriteError) as w:
            c.authz.items.insert_one(dict(BAD_DOC))
        assert w.value.code == 121, w.value.details
        info = w.value.details["errInfo"]
        assert info["rule"] == "max_array_length" and info["bound"] == 3, info
        assert "match" not in info and "ruleLine" not in info, info
        assert "authz.items" not in w.value.details["errmsg"], w.value.details
        with pytest.raises(OperationFailure) as e:
            c.authz.orders.find_one({"total": 3})
        assert e.value.code == 291, e.value.details
        info = e.value.details["errInfo"]
        assert info["rule"] == "require_index" and info["index"] == {"total": 1}, info
        assert "match" not in info and "ruleLine" not in info, info
        assert "authz-indexes" not in e.value.details["errmsg"], e.value.details
        assert c.authz.orders.find_one({"status": "open"}) is not None  # indexed: served
        c.close()
        assert _observed(dg).count("authz") > before.count("authz")
        assert _inspected(dg) > inspected
        # The operator still sees the rule's source.
        assert "authz-indexes" in _log(dg) or "authz-indexes" in json.dumps(
            harness.admin_json(dg, "/status"))
    finally:
        dg.stop()


def test_reveal_rule_source_names_the_glob_line_and_id(auth_fdb):
    workdir, uri = auth_fdb
    dg = _start(workdir / "reveal", uri, "errors:\n  reveal_rule_source: true\n")
    try:
        c = _authenticated(dg)
        list(c.authz.orders.list_indexes())
        with pytest.raises(WriteError) as w:
            c.authz.items.insert_one(dict(BAD_DOC))
        info = w.value.details["errInfo"]
        assert info["match"] == "authz.items" and info["ruleLine"] == 3, info
        assert 'match "authz.items"' in w.value.details["errmsg"], w.value.details
        with pytest.raises(OperationFailure) as e:
            c.authz.orders.find_one({"total": 3})
        info = e.value.details["errInfo"]
        assert e.value.code == 291
        assert info["rule"] == "authz-indexes" and info["match"] == "authz.orders", info
        assert info["ruleLine"] == 6, info
        c.close()
    finally:
        dg.stop()


def test_upstream_auth_none_judges_unauthenticated_requests(auth_fdb):
    workdir, uri = auth_fdb
    dg = _start(workdir / "none", uri, "upstream_auth: none\n")
    try:
        anon = _client(dg)
        with pytest.raises(WriteError) as w:
            anon.authz.items.insert_one(dict(BAD_DOC))
        assert w.value.code == 121, w.value.details
        anon.close()
    finally:
        dg.stop()


def test_an_upstream_without_authentication_is_judged_as_before(tmp_path):
    fdb = harness.start_ferretdb(tmp_path)
    uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    direct = pymongo.MongoClient(uri, directConnection=True)
    _load(direct)
    dg = _start(tmp_path / "auto", uri)
    required = _start(tmp_path / "required", uri, "upstream_auth: required\n")
    try:
        assert "the upstream answers without authentication" in _log(dg)
        c = _client(dg)
        list(c.authz.orders.list_indexes())
        with pytest.raises(WriteError) as w:
            c.authz.items.insert_one(dict(BAD_DOC))
        assert w.value.code == 121, w.value.details
        with pytest.raises(OperationFailure) as e:
            c.authz.orders.find_one({"total": 3})
        assert e.value.code == 291, e.value.details
        c.close()
        assert "authz-app" not in _observed(dg)  # no app name: judged all the same
        # upstream_auth: required, though the server answers everyone: nobody ever authenticates
        # here, so nothing is judged and the server takes the write.
        quiet = _observed(required)
        r = _client(required)
        r.authz.items.insert_one(dict(BAD_DOC))
        r.close()
        assert _observed(required).count("authz") == quiet.count("authz")
    finally:
        required.stop()
        dg.stop()
        direct.close()
        fdb.stop()


def test_until_the_upstream_answers_it_counts_as_requiring_authentication(tmp_path):
    """upstream_auth: auto with the upstream down at startup: no answer, so only authenticated
    connections would be judged; once the upstream is up the probe asks again and every command
    is judged."""
    port = harness.free_port()
    uri = f"mongodb://127.0.0.1:{port}"
    dg = _start_down(tmp_path / "dg", uri)
    fdb = None
    try:
        assert "cannot tell whether the upstream requires authentication" in _log(dg)
        fdb = harness.start_ferretdb(tmp_path, port=port)
        deadline = time.monotonic() + 30
        while "the upstream answers without authentication" not in _log(dg):
            assert time.monotonic() < deadline, _log(dg)
            time.sleep(0.2)
        c = _client(dg)
        with pytest.raises(WriteError) as w:
            c.authz.items.insert_one(dict(BAD_DOC))
        assert w.value.code == 121, w.value.details
        c.close()
    finally:
        dg.stop()
        if fdb is not None:
            fdb.stop()


def _start_down(workdir: Path, upstream: str) -> harness.Proc:
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "docguard.yaml"
    config.write_text(RULES)
    return harness.start_docguard(upstream, workdir, config=config, wait_upstream=False)

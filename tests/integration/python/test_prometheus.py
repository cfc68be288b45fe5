"""A real Prometheus scrapes docguard while a workload runs; every dashboard and alert query must
return data.

This module starts its own FerretDB + docguard (with a rules config written here) and Prometheus
(/usr/bin/prometheus, Debian package `prometheus`) on free 127.0.0.1 ports, scraping docguard's
admin listener every second and loading deploy/prometheus/alerts.yml. A background thread keeps a
workload going (inserts, replaces, $push growth: capped, and one array that only grows, so its
forecast is exported; reads, $lookup aggregates, writes that break warn and block rules, also from
a client app named "checkout", writes a candidate rule would block, malformed frames), so every
counter keeps moving and rate() always has two samples. Then:

  * every PromQL expression of deploy/grafana/dashboards/docguard.json (template variables
    substituted: all values, and one concrete db with a multi-value collection) must return data;
  * every alert expression of deploy/prometheus/alerts.yml must return data, i.e. would fire for
    this workload; the outage alerts are checked last, after stopping FerretDB and then docguard;
  * promtool check metrics (docguard's /metrics), check rules and test rules pass.

Metrics the dashboard/alerts use that docguard does not export yet are listed in PENDING_METRICS:
an expression naming one of them xfails while docguard's /metrics lacks it, and is checked for
real as soon as the metric exists.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path

import pymongo
import pytest
import yaml  # noqa: F401  (PyYAML: install-deps.sh installs it; used by _alert_rules)
from pymongo.errors import OperationFailure, PyMongoError

import harness

pytestmark = pytest.mark.proxy

REPO = harness.REPO
DASHBOARD = REPO / "deploy" / "grafana" / "dashboards" / "docguard.json"
ALERTS = REPO / "deploy" / "prometheus" / "alerts.yml"
ALERTS_TEST = REPO / "deploy" / "prometheus" / "alerts.test.yml"
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"

# Metrics the dashboard and alerts use that docguard does not export yet (requested from the lead).
# Metrics the dashboard/alerts may use before docguard exports them (none now: all exported).
PENDING_METRICS: set[str] = set()

DB = "pmtest"
TIMEOUT = float(os.environ.get("DOCGUARD_PROM_TIMEOUT", "60"))  # per wait; typical waits are ~2-5 s

# Grafana built-ins and template variables -> concrete values (scrape interval is 1 s)
BUILTINS = {"$__rate_interval": "30s", "$__range": "5m", "$__interval": "2s",
            "${__rate_interval}": "30s", "${__range}": "5m", "${__interval}": "2s"}
VARIABLE_SETS = {
    "all": {"db": ".*", "collection": ".*"},
    "one-db": {"db": DB, "collection": "(products|orders|events)"},
}

RULES_CONFIG = f"""
mode: warn
rules:
  - match: "{DB}.products"
    action: block
    array_length:
      reviews: 50
    max_array_length: 500
  - match: "{DB}.orders"          # the query guardrail, warn: find({{i}}) has no index; until
    require_index: true           # introspection first reads orders, counted as unknown
  - match: "{DB}.orders"
    max_lookup_ratio: 0.3
    lookup_window: 60s
    lookup_min_reads: 5
  - match: "{DB}.events"
    action: warn
    max_document_bytes: 2KiB
    json_schema:                 # the events lack `kind` (warned); `$inc` of n is not judged
      required: [kind]
      properties:
        n: {{ bsonType: int }}
candidate_rules:                 # dry run: the 45-review inserts would be blocked
  - id: fewer-reviews
    match: "{DB}.products"
    action: block
    array_length:
      reviews: 40
  - id: products-sku             # dry run: every product written lacks `sku`
    match: "{DB}.products"
    action: block
    json_schema: {{ required: [sku] }}
tracking:
  read_sample_rate: 1.0
"""

# Alerts that need an outage; checked at the end, in this order of phases.
UPSTREAM_OUTAGE_ALERTS = {"DocguardUpstreamDown", "DocguardUpstreamConnectErrors"}
DOCGUARD_OUTAGE_ALERTS = {"DocguardDown"}


# ------------------------------------------------------------------ expressions from the files

def _dashboard_exprs() -> list[tuple[str, str]]:
    """(id, expr) for every target of every panel (rows' nested panels included)."""
    dash = json.loads(DASHBOARD.read_text())
    out = []

    def walk(panels):
        for p in panels:
            walk(p.get("panels", []))
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((f"{p['title']}[{t.get('refId', '?')}]", t["expr"]))

    walk(dash.get("panels", []))
    return out


def _alert_rules() -> list[tuple[str, str]]:
    doc = yaml.safe_load(ALERTS.read_text())
    return [(r["alert"], r["expr"]) for g in doc["groups"] for r in g["rules"] if "alert" in r]


def substitute(expr: str, variables: dict[str, str]) -> str:
    for k, v in BUILTINS.items():
        expr = expr.replace(k, v)
    for name, value in variables.items():
        expr = re.sub(r"\$\{" + name + r"(:[a-z]+)?\}|\$" + name + r"\b", value, expr)
    assert "$" not in expr.replace("$__", ""), f"unsubstituted variable in {expr}"
    return expr


def metric_names(expr: str) -> set[str]:
    return set(re.findall(r"\b(docguard_[a-z_]+?)(?:_bucket|_count|_sum)?\b", expr)) | \
        set(re.findall(r"\b(docguard_[a-z_]+)\b", expr))


# ------------------------------------------------------------------ workload

def _bad_frame(port: int) -> None:
    """A header whose messageLength (5) is below the 16-byte header: protocol error bad_length."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(struct.pack("<iiii", 5, 1, 0, 2013))
            s.settimeout(2)
            try:
                s.recv(64)
            except OSError:
                pass
    except OSError:
        pass


class Workload(threading.Thread):
    """Keeps every metric family moving until stopped; tolerates errors (outage phases)."""

    def __init__(self, uri: str, port: int):
        super().__init__(daemon=True, name="prom-workload")
        self.uri, self.port = uri, port
        self.stop_event = threading.Event()
        self.rounds = 0
        self.blocked = 0
        self.errors: list[str] = []

    def one_round(self, client: pymongo.MongoClient, checkout: pymongo.MongoClient,
                  i: int) -> None:
        db = client[DB]
        # writes: reviews near the bound (45 of 50), a replace, a capped $push
        db.products.insert_one({"_id": f"r{i}", "name": "x" * 40, "tags": ["a", "b", "c"],
                                "reviews": [{"stars": k % 5} for k in range(45)]})
        db.products.replace_one({"_id": f"r{i}"}, {"name": "y", "tags": ["a"],
                                                   "reviews": [{"stars": 1}] * 40})
        db.products.update_one({"_id": f"r{i}"}, {"$push": {"reviews": {
            "$each": [{"stars": 5}, {"stars": 4}], "$slice": -45}}})
        # an array that only grows (no $slice): forecast to reach max_array_length within minutes
        if i == 0:
            db.products.insert_one({"_id": "feed", "items": ["start"]})
        db.products.update_one({"_id": "feed"}, {"$push": {"items": "e" * 200}})
        # a write past the block bound: refused by docguard (code 121)
        try:
            db.products.insert_one({"_id": f"big{i}", "reviews": list(range(60))})
        except PyMongoError:
            self.blocked += 1
        # the same from the "checkout" app (the app-scoped alert's example)
        try:
            checkout[DB].products.insert_one({"_id": f"co{i}", "reviews": list(range(60))})
        except PyMongoError:
            self.blocked += 1
        # a warn violation: forwarded, counted
        db.events.insert_one({"i": i, "payload": "z" * 3000})
        db.events.update_one({"i": i}, {"$inc": {"n": 1}})  # not judged by the json_schema rule
        # reads, some with $lookup (FerretDB refuses $lookup; docguard counts it first)
        db.orders.insert_one({"i": i, "product": f"r{i}"})
        list(db.orders.find({"i": i}))
        list(db.products.find({"_id": f"r{i}"}))
        for _ in range(2):
            try:
                list(db.orders.aggregate([{"$lookup": {"from": "products", "localField": "product",
                                                       "foreignField": "_id", "as": "p"}}]))
            except OperationFailure:
                pass
        # malformed frame on a raw socket
        _bad_frame(self.port)

    def _client(self, appname: str) -> pymongo.MongoClient:
        return pymongo.MongoClient(self.uri, serverSelectionTimeoutMS=2000, connectTimeoutMS=2000,
                                   socketTimeoutMS=5000, appname=appname)

    def run(self) -> None:
        client = checkout = None
        i = 0
        while not self.stop_event.is_set():
            try:
                if client is None:
                    client = self._client("prom-workload")
                    checkout = self._client("checkout")
                self.one_round(client, checkout, i)
                self.rounds += 1
            except PyMongoError as e:  # outage phases: keep trying with fresh connections
                self.errors.append(repr(e)[:200])
                for c in (client, checkout):
                    try:
                        c.close()
                    except Exception:
                        pass
                client = checkout = None
            i += 1
            self.stop_event.wait(0.25)
        for c in (client, checkout):
            if c is not None:
                c.close()

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=15)


# ------------------------------------------------------------------ Prometheus

class Prom:
    def __init__(self, base: str, popen: subprocess.Popen, log: Path):
        self.base, self.popen, self.log = base, popen, log

    def query(self, expr: str) -> dict:
        url = f"{self.base}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        status, body = harness.http_get(url, timeout=10)
        doc = json.loads(body)
        assert status == 200 and doc.get("status") == "success", \
            f"query failed ({status}): {expr}\n{body[:500]}"
        return doc["data"]

    def wait_data(self, expr: str, timeout: float = TIMEOUT) -> list:
        """Polls until the instant query returns at least one series/sample with a finite value."""
        deadline = time.monotonic() + timeout
        last: list = []
        while True:
            data = self.query(expr)
            result = data["result"]
            if data["resultType"] == "scalar":
                result = [{"value": result}]
            finite = [r for r in result if _finite(r)]
            if finite:
                return finite
            last = result
            if time.monotonic() > deadline:
                pytest.fail(f"no data after {timeout:.0f}s for:\n  {expr}\nlast result: {last}\n"
                            f"prometheus log tail:\n{harness._tail(self.log, 10)}")
            time.sleep(0.5)


def _finite(r: dict) -> bool:
    values = [r["value"]] if "value" in r else r.get("values", [])
    return any(v[1] not in ("NaN", "+Inf", "-Inf") for v in values)


@pytest.fixture(scope="module")
def stack(env, tmp_path_factory):
    if not os.access(PROMETHEUS, os.X_OK):
        pytest.fail(f"{PROMETHEUS} not found: apt-get install prometheus (scripts/install-deps.sh)")
    work = tmp_path_factory.mktemp("prom")
    procs: list[harness.Proc] = []
    workload = None
    try:
        fdb = harness.start_ferretdb(work)
        procs.append(fdb)
        cfg = work / "rules.yaml"
        cfg.write_text(RULES_CONFIG)
        dg = harness.start_docguard(f"mongodb://127.0.0.1:{fdb.ports['listen']}", work, config=cfg,
                                    threads=1)
        procs.append(dg)
        admin = f"127.0.0.1:{dg.ports['admin']}"

        pport = harness.free_port()
        (work / "prometheus.yml").write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: ['{ALERTS}']\n"
            "scrape_configs:\n"
            "  - job_name: docguard\n"
            f"    static_configs: [{{targets: ['{admin}']}}]\n")
        prom = harness._spawn("prometheus", [
            PROMETHEUS, f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={work / 'tsdb'}", f"--web.listen-address=127.0.0.1:{pport}",
            "--storage.tsdb.retention.time=1h", "--log.level=warn"], work / "prometheus.log")
        procs.append(prom)
        p = Prom(f"http://127.0.0.1:{pport}", prom.popen, prom.log_path)
        deadline = time.monotonic() + TIMEOUT
        while True:
            assert prom.alive(), f"prometheus exited:\n{harness._tail(prom.log_path)}"
            try:
                if harness.http_get(f"{p.base}/-/ready", timeout=1)[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"prometheus not ready:\n{harness._tail(prom.log_path)}"
            time.sleep(0.2)
        p.wait_data('up{job="docguard"} == 1')  # first successful scrape

        workload = Workload(f"mongodb://127.0.0.1:{dg.ports['listen']}", dg.ports["listen"])
        workload.start()
        yield {"prom": p, "fdb": fdb, "dg": dg, "admin": admin, "workload": workload,
               "config": cfg, "work": work}
    except harness.StartError as e:
        pytest.fail(str(e))
    finally:
        if workload is not None:
            workload.stop()
        for proc in reversed(procs):
            proc.stop()


def _exported(admin: str) -> set[str]:
    status, body = harness.http_get(f"http://{admin}/metrics")
    assert status == 200
    return {ln.split()[2] for ln in body.splitlines() if ln.startswith("# TYPE ")}


def _check_expr(stack, expr: str) -> None:
    missing = (metric_names(expr) & PENDING_METRICS) - _exported(stack["admin"])
    if missing:
        pytest.xfail(f"needs metric(s) docguard does not export yet: {sorted(missing)}")
    stack["prom"].wait_data(expr)


# ------------------------------------------------------------------ tests

def test_promtool_check_metrics(stack):
    # let the workload create every labelled family first
    stack["prom"].wait_data("docguard_violations_total")
    status, body = harness.http_get(f"http://{stack['admin']}/metrics")
    assert status == 200
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=body, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, f"promtool check metrics:\n{r.stdout}{r.stderr}"


def test_promtool_check_and_test_rules():
    r = subprocess.run([PROMTOOL, "check", "rules", str(ALERTS)], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([PROMTOOL, "test", "rules", str(ALERTS_TEST)], capture_output=True,
                       text=True, timeout=60, cwd=ALERTS_TEST.parent)
    assert r.returncode == 0, r.stdout + r.stderr


def test_alert_rules_loaded(stack):
    data = json.loads(harness.http_get(f"{stack['prom'].base}/api/v1/rules")[1])["data"]
    loaded = {r["name"] for g in data["groups"] for r in g["rules"]}
    assert {name for name, _ in _alert_rules()} <= loaded
    health = {r["name"]: r.get("health") for g in data["groups"] for r in g["rules"]}
    assert all(h in ("ok", "unknown") for h in health.values()), health


@pytest.mark.parametrize("variables", list(VARIABLE_SETS), ids=list(VARIABLE_SETS))
def test_dashboard_variable_queries(stack, variables):
    """label_values(metric{selector}, label) queries of the db/collection variables."""
    dash = json.loads(DASHBOARD.read_text())
    for v in dash["templating"]["list"]:
        if v.get("type") != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q.strip())
        assert m, f"variable {v['name']}: unsupported query {q}"
        selector = substitute(m.group(1), VARIABLE_SETS[variables])
        result = stack["prom"].wait_data(f"count by ({m.group(2)}) ({selector})")
        values = {r["metric"][m.group(2)] for r in result}
        assert (DB in values) if v["name"] == "db" else ({"products", "orders"} <= values), values


@pytest.mark.parametrize("variables", list(VARIABLE_SETS), ids=list(VARIABLE_SETS))
@pytest.mark.parametrize("name,expr", _dashboard_exprs(), ids=[i for i, _ in _dashboard_exprs()])
def test_dashboard_query_returns_data(stack, name, expr, variables):
    _check_expr(stack, substitute(expr, VARIABLE_SETS[variables]))


@pytest.mark.parametrize(
    "name,expr",
    [(n, e) for n, e in _alert_rules() if n not in UPSTREAM_OUTAGE_ALERTS | DOCGUARD_OUTAGE_ALERTS],
    ids=[n for n, _ in _alert_rules() if n not in UPSTREAM_OUTAGE_ALERTS | DOCGUARD_OUTAGE_ALERTS])
def test_alert_fires_for_workload(stack, name, expr):
    if name == "DocguardConfigReloadFailed":
        # SIGHUP with an invalid file: the reload fails, the old rules stay
        good = stack["config"].read_text()
        stack["config"].write_text(good + "\nno_such_key: 1\n")
        try:
            stack["dg"].popen.send_signal(signal.SIGHUP)
            _check_expr(stack, expr)
        finally:
            stack["config"].write_text(good)
        return
    _check_expr(stack, expr)


def test_alerts_fire_when_upstream_then_docguard_go_down(stack):
    """Outages, last: stop FerretDB (upstream alerts), then docguard (DocguardDown)."""
    rules = dict(_alert_rules())
    assert stack["workload"].rounds > 0 and stack["workload"].blocked > 0, stack["workload"].errors
    exported = _exported(stack["admin"])
    skipped = []
    stack["fdb"].stop()
    for name in sorted(UPSTREAM_OUTAGE_ALERTS):
        missing = (metric_names(rules[name]) & PENDING_METRICS) - exported
        if missing:
            skipped.append(f"{name} (needs {sorted(missing)})")
            continue
        stack["prom"].wait_data(rules[name])
    stack["dg"].stop()
    for name in sorted(DOCGUARD_OUTAGE_ALERTS):
        stack["prom"].wait_data(rules[name])
    if skipped:
        pytest.xfail(f"not checked, metrics not exported yet: {skipped}; the other outage alerts fired")

"""Helpers for the design-rules integration tests (test_rules.py).

A `RulesProxy` is a docguard instance of its own, started from harness.start_docguard in front of
the suite's FerretDB with a rules config file written here, so the rules under test do not depend
on (or change) the config of the docguard the other suites share. Every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pymongo

import harness

# One collection name per rule, so every namespace has exactly one rule and counts are exact.
# `{action}` is the default action (`mode`); the lookup rules say their action themselves where a
# read must be blocked (a global `mode: block` only warns about reads).
RULES_TEMPLATE = """\
# written by tests/integration/python/rules_harness.py
mode: {action}
tracking:
  read_sample_rate: 0            # deterministic: the tracker learns from writes only
  max_tracked_documents: 1000
rules:
  - match: "*.size"
    max_document_bytes: 2KiB
  - match: "*.arr"
    max_array_length: 3
  - match: "*.paths"
    array_length: {{ reviews: 2, "variants.tags": 2 }}
  - match: "*.push"
    require_push_slice: true
  - match: "*.nest"
    max_nesting_depth: 4
  - match: "*.tracked"
    array_length: {{ items: 5 }}
  - match: "*.joins"
    action: {lookup_action}
    max_lookup_ratio: 0.5
    lookup_window: 60s
    lookup_min_reads: 4
  - match: "*.combo"             # two rules on one limit: warn past 2, block past 4
    action: warn
    max_array_length: 2
  - match: "*.combo"
    action: block
    max_array_length: 4
  - match: "*.joins_default"     # inherits `mode`: never blocks reads
    max_lookup_ratio: 0.5
    lookup_window: 60s
    lookup_min_reads: 4
"""


def rules_config(action: str, lookup_action: str | None = None) -> str:
    return RULES_TEMPLATE.format(action=action, lookup_action=lookup_action or action)


_VIOLATION_MSG = "docguard design rule violated"


def parse_violation(obj: dict) -> dict[str, str] | None:
    """A JSON log line {"msg": "docguard design rule violated", "rule": ..., ...} -> its fields as
    strings ({'rule': 'x', 'action': 'y', 'measured': '4', ...}); empty names read "-" as in text
    logs."""
    if obj.get("msg") != _VIOLATION_MSG:
        return None
    out = {}
    for k, v in obj.items():
        if k in ("ts", "level", "msg"):
            continue
        out[k] = "-" if v == "" else str(v)
    return out


class RulesProxy:
    """docguard with a rules config of its own, in front of an existing upstream."""

    def __init__(self, upstream_uri: str, workdir: Path, config_text: str, name: str):
        self.workdir = workdir
        self.upstream_uri = upstream_uri
        self.config_path = workdir / f"rules-{name}.yaml"
        self.config_path.write_text(config_text)
        self.proc = harness.start_docguard(upstream_uri, workdir, config=self.config_path)
        self.port = self.proc.ports["listen"]
        self.uri = f"mongodb://127.0.0.1:{self.port}"
        self.admin = f"127.0.0.1:{self.proc.ports['admin']}"
        self.log_path = self.proc.log_path
        self._clients: list[pymongo.MongoClient] = []

    # -- lifecycle
    def stop(self) -> int | None:
        for c in self._clients:
            c.close()
        return self.proc.stop()

    def alive(self) -> bool:
        return self.proc.alive()

    def client(self, **kw) -> pymongo.MongoClient:
        kw.setdefault("serverSelectionTimeoutMS", 10000)
        c = pymongo.MongoClient(self.uri, **kw)
        self._clients.append(c)
        return c

    # -- metrics
    def metrics(self) -> dict:
        return harness.fetch_metrics(self.admin)

    def metric(self, name: str, **labels: str) -> float:
        return harness.metric_sum(self.metrics(), name, **labels)

    def violations_metric(self, db: str, coll: str, rule: str, action: str) -> float:
        return self.metric("docguard_violations_total", db=db, collection=coll, rule=rule,
                           action=action)

    def wait_metric(self, expected: float, name: str, timeout: float = 5.0, **labels) -> float:
        """Polls (bounded) until the metric reaches `expected`; returns the last value seen."""
        deadline = time.monotonic() + timeout
        value = self.metric(name, **labels)
        while value < expected and time.monotonic() < deadline:
            time.sleep(0.05)
            value = self.metric(name, **labels)
        return value

    # -- logs
    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_mark(self) -> int:
        return len(harness.read_log_lines(self.log_path))

    def json_lines(self, since: int = 0) -> list[dict]:
        return harness.parse_json_lines(harness.read_log_lines(self.log_path, since))

    def violations(self, since: int = 0, ns: str | None = None) -> list[dict]:
        """Parsed violation log lines (plus 'level'), optionally for one namespace."""
        out = []
        for obj in self.json_lines(since):
            v = parse_violation(obj)
            if v is None or (ns is not None and v.get("ns") != ns):
                continue
            v["level"] = obj.get("level", "")
            out.append(v)
        return out

    def wait_violations(self, since: int, count: int, ns: str | None = None,
                        timeout: float = 5.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        got = self.violations(since, ns)
        while len(got) < count and time.monotonic() < deadline:
            time.sleep(0.05)
            got = self.violations(since, ns)
        return got

    def wait_log(self, predicate, since: int = 0, timeout: float = 10.0) -> dict | None:
        """First JSON log object after line `since` for which predicate(obj) is true."""
        deadline = time.monotonic() + timeout
        while True:
            for obj in self.json_lines(since):
                if predicate(obj):
                    return obj
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    # -- reload
    def reload(self, config_text: str, timeout: float = 10.0) -> dict | None:
        """Writes a new config file, sends SIGHUP and waits for the reload's log line (success or
        failure); returns it (None if none appeared within timeout)."""
        since = self.log_mark()
        tmp = self.config_path.with_suffix(".tmp")
        tmp.write_text(config_text)
        os.replace(tmp, self.config_path)
        self.proc.popen.send_signal(signal.SIGHUP)
        return self.wait_log(lambda o: "reloaded rules" in str(o.get("msg", "")) or
                             "reload of" in str(o.get("msg", "")), since, timeout)


def check_config(path: Path, timeout: float = 20.0) -> subprocess.CompletedProcess:
    """`docguard --check-config --config PATH`."""
    return subprocess.run([str(harness.docguard_bin()), "--check-config", "--config", str(path)],
                          capture_output=True, text=True, timeout=timeout)

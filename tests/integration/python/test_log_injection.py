"""Client text in docguard's log: an appName, a collection name or a field name holding a newline
or a terminal escape must not write a forged log line, in the text and the JSON log format."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

import pymongo
import pytest

import harness

pytestmark = pytest.mark.proxy

FORGED = "2026-12-01T00:00:00.000 critical FORGED"
APP_NAME = "evil\n" + FORGED
COLLECTION = "c\n" + FORGED + "\x1b[31mred\r\tend"
FIELD = "f\n" + FORGED

CONFIG = """\
mode: warn
rules:
  - match: "*"
    max_document_bytes: 64
    max_array_length: 2
"""

# docguard's own line starts (proxy/app/log_format.cc).
TEXT_LINE_START = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} [a-z]+ ")


def _log_hostile_requests(env, tmp_path, log_format: str) -> tuple[bytes, str]:
    """docguard with warn rules, then writes from a hostile client; its whole log and the db."""
    cfg = tmp_path / f"log-injection-{log_format}.yaml"
    cfg.write_text(CONFIG)
    dg = harness.start_docguard(env.ferret_uri, tmp_path, config=cfg, log_format=log_format)
    dbname = "it_log_" + uuid.uuid4().hex[:8]
    try:
        client = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}",
                                     appname=APP_NAME, serverSelectionTimeoutMS=10000)
        try:
            coll = client[dbname][COLLECTION]
            try:
                # Too large and an array too long: violations naming the app, the namespace and
                # the field. The upstream may refuse such names; docguard has logged them by then.
                coll.insert_one({"pad": "x" * 100, FIELD: [1, 2, 3]})
            except pymongo.errors.PyMongoError:
                pass
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if b"docguard design rule violated" in dg.log_path.read_bytes():
                    break
                time.sleep(0.1)
        finally:
            try:
                client.drop_database(dbname)
            except pymongo.errors.PyMongoError:
                pass
            client.close()
    finally:
        dg.stop()
    return dg.log_path.read_bytes(), dbname


def test_text_log_escapes_client_text(env, tmp_path):
    raw, dbname = _log_hostile_requests(env, tmp_path, "text")
    assert b"\x1b" not in raw and b"\r" not in raw, raw
    log = raw.decode("utf-8")  # strict: the log is valid UTF-8
    lines = [ln for ln in log.split("\n") if ln]
    assert any("docguard design rule violated" in ln for ln in lines), log
    for ln in lines:
        assert not ln.startswith(FORGED), f"forged log line: {ln!r}"
        assert TEXT_LINE_START.match(ln), f"a line docguard did not start: {ln!r}"
    violations = [ln for ln in lines if "docguard design rule violated" in ln]
    escaped_app = 'app="evil\\n' + FORGED + '"'
    escaped_ns = f"{dbname}.c\\n{FORGED}\\u001b[31mred\\r\\tend"
    assert any(escaped_app in ln for ln in violations), violations
    # The namespace holds spaces, so it is quoted too.
    assert any(f'ns="{escaped_ns}"' in ln for ln in violations), violations
    assert any(f'field="f\\n{FORGED}"' in ln for ln in violations), violations


def test_json_log_stays_valid_with_client_text(env, tmp_path):
    raw, dbname = _log_hostile_requests(env, tmp_path, "json")
    assert b"\x1b" not in raw and b"\r" not in raw, raw
    log = raw.decode("utf-8")
    lines = [ln for ln in log.split("\n") if ln]
    objects = []
    for ln in lines:
        assert not ln.startswith(FORGED), f"forged log line: {ln!r}"
        objects.append(json.loads(ln))  # every line is one JSON object
    violations = [o for o in objects if o.get("msg") == "docguard design rule violated"]
    assert violations, log
    # JSON escapes read back as exactly what the client sent.
    assert {o["app"] for o in violations} == {APP_NAME}, violations
    assert {o["ns"] for o in violations} == {f"{dbname}.{COLLECTION}"}, violations
    assert FIELD in {o["field"] for o in violations}, violations
    assert "\\n" + FORGED in log  # the newline is escaped in the file



def test_a_killed_docguard_leaves_no_libmongoc_file(env, tmp_path):
    """libmongoc, initialized before main, keeps its counters in /dev/shm/mongoc-<pid> and removes
    it only on a clean exit. Killed docguards left such files behind; a later process given the
    same pid could not create its own, and libmongoc printed a warning of its own format in the
    middle of a JSON log. docguard removes the name as it starts."""
    shm = Path("/dev/shm")
    if not shm.is_dir():
        pytest.skip("no /dev/shm on this machine")
    dg = harness.start_docguard(env.ferret_uri, tmp_path)
    name = shm / f"mongoc-{dg.popen.pid}"
    try:
        assert not name.exists()
    finally:
        dg.popen.kill()
        dg.popen.wait(10)
    assert not name.exists()

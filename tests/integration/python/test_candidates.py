"""Candidate rules and rule hit counters, through docguard with PyMongo.

A candidate block rule the active rules do not have never refuses a write: every insert succeeds
and is stored, and its would-block count (docguard_candidate_violations_total, /status
`candidate_rules`, /report.json `candidate_verdicts`) is the number of writes that break it,
while docguard_violations_total and the violation log know nothing of it. A SIGHUP that keeps a
rule's id keeps its hit counters (even with changed bounds), a rule removed from the file leaves
/status, and moving a candidate under `rules:` makes it block.
"""

from __future__ import annotations

import json
import uuid

import pymongo
import pytest
from pymongo.errors import WriteError

import harness
import rules_harness
from rules_harness import RulesProxy

pytestmark = pytest.mark.proxy

CONFIG = """\
mode: warn
tracking:
  read_sample_rate: 0
rules:
  - id: kept-tags
    match: "*.kept"
    max_array_length: 3
  - match: "*.keyed"             # no id: known by its key "match=*.keyed"
    max_array_length: 3
  - id: dropped
    match: "*.dropped"
    max_array_length: 3
candidate_rules:
  - id: strict-tags
    match: "*.cand"
    action: block
    max_array_length: 3
"""

# After the reload: kept-tags keeps its id with a changed bound, the keyed rule its key,
# `dropped` is gone and the candidate is promoted.
RELOADED = """\
mode: warn
tracking:
  read_sample_rate: 0
rules:
  - id: kept-tags
    match: "*.kept"
    max_array_length: 4
  - match: "*.keyed"
    max_array_length: 3
  - id: strict-tags
    match: "*.cand"
    action: block
    max_array_length: 3
"""

LONG = list(range(5))   # breaks every max_array_length: 3 (and 4) above
SHORT = list(range(2))


@pytest.fixture(scope="module")
def dg(env):
    if not env.proxied:
        pytest.skip("needs docguard (DOCGUARD_DIRECT=1)")
    try:
        p = RulesProxy(env.ferret_uri, env.workdir, CONFIG, f"candidates-{uuid.uuid4().hex[:6]}")
    except rules_harness.harness.StartError as e:
        pytest.fail(f"could not start docguard with candidate rules: {e}")
    yield p
    assert p.alive(), "docguard (candidates) died during the tests"
    p.stop()


@pytest.fixture(scope="module")
def upstream(env):
    c = pymongo.MongoClient(env.ferret_uri, directConnection=True, serverSelectionTimeoutMS=10000)
    yield c
    c.close()


def _status(dg: RulesProxy) -> dict:
    code, body = harness.http_get(f"http://{dg.admin}/status")
    assert code == 200, body
    return json.loads(body)


def _rule(status: dict, section: str, name: str) -> dict | None:
    for r in status[section]:
        if r["id"] == name or (r["id"] is None and r["key"] == name):
            return r
    return None


def test_candidate_block_rule_never_refuses_a_write(dg, upstream):
    db = "it_cand_" + uuid.uuid4().hex[:8]
    since = dg.log_mark()
    try:
        c = dg.client(appname="cand-app")
        breaking = 0
        for i in range(7):
            doc = {"_id": i, "tags": LONG if i % 2 == 0 else SHORT}
            breaking += i % 2 == 0
            c[db].cand.insert_one(doc)  # never raises: candidates do not block
        c[db].cand.insert_many([{"_id": 100 + i, "tags": LONG} for i in range(3)], ordered=True)
        breaking += 3
        assert upstream[db].cand.count_documents({}) == 10

        got = dg.wait_metric(breaking, "docguard_candidate_violations_total", db=db,
                             collection="cand", rule="max_array_length", action="block",
                             app="cand-app")
        assert got == breaking
        assert dg.metric("docguard_candidate_violations_total", db=db, action="warn") == 0
        assert dg.metric("docguard_violations_total", db=db) == 0

        entry = _rule(_status(dg), "candidate_rules", "strict-tags")
        assert entry is not None, _status(dg)["candidate_rules"]
        assert entry["hits"] == {"warn": 0, "block": breaking}, entry
        assert entry["line"] == 14 and entry["key"] == "match=*.cand", entry
        assert entry["last_hit"] and entry["last_hit"].endswith("Z"), entry
        # The collection's own violation counts know nothing of candidates.
        for coll in _status(dg)["collections"]:
            if coll["namespace"] == f"{db}.cand":
                assert coll["violations"] == {}, coll

        code, body = harness.http_get(f"http://{dg.admin}/report.json")
        assert code == 200
        verdicts = {v["rule"]: v for v in json.loads(body)["candidate_verdicts"]}
        apps = {a["app"]: a for a in verdicts["strict-tags"]["apps"]}
        assert apps["cand-app"]["would_block"] == breaking, verdicts
        assert apps["cand-app"]["would_warn"] == 0, verdicts
        code, html = harness.http_get(f"http://{dg.admin}/report")
        assert code == 200 and "Candidate rules" in html and "strict-tags" in html

        # Logged apart, rate-limited per rule: never as a design rule violation.
        line = dg.wait_log(lambda o: o.get("msg") == "candidate rule would block", since)
        assert line is not None, dg.log_text()[-2000:]
        assert line["candidate"] == "strict-tags" and line["app"] == "cand-app", line
        assert not [v for v in dg.violations(since) if v.get("ns") == f"{db}.cand"]
        would = [o for o in dg.json_lines(since) if o.get("msg") == "candidate rule would block"]
        assert len(would) == 1, would
    finally:
        upstream.drop_database(db)


def test_sighup_keeps_counts_of_unchanged_ids_and_promotes_the_candidate(dg, upstream):
    db = "it_cand_" + uuid.uuid4().hex[:8]
    try:
        c = dg.client(appname="reload-app")
        before = _status(dg)
        base = {name: (_rule(before, "rules", name) or {"hits": {"warn": 0}})["hits"]["warn"]
                for name in ("kept-tags", "match=*.keyed", "dropped")}
        for i in range(2):
            c[db].kept.insert_one({"_id": i, "tags": LONG})
            c[db].keyed.insert_one({"_id": i, "tags": LONG})
        c[db].dropped.insert_one({"_id": 1, "tags": LONG})
        dg.wait_metric(5, "docguard_violations_total", db=db)
        status = _status(dg)
        assert _rule(status, "rules", "kept-tags")["hits"]["warn"] == base["kept-tags"] + 2
        assert _rule(status, "rules", "match=*.keyed")["hits"]["warn"] == base["match=*.keyed"] + 2
        assert _rule(status, "rules", "dropped")["hits"]["warn"] == base["dropped"] + 1

        line = dg.reload(RELOADED)
        assert line is not None and "reloaded rules" in line["msg"], line
        status = _status(dg)
        kept = _rule(status, "rules", "kept-tags")
        assert kept["hits"]["warn"] == base["kept-tags"] + 2, kept  # same id, new bound
        assert kept["line"] == 5, kept
        assert _rule(status, "rules", "match=*.keyed")["hits"]["warn"] == base["match=*.keyed"] + 2
        assert _rule(status, "rules", "dropped") is None, status["rules"]
        assert status["candidate_rules"] == [], status["candidate_rules"]
        # The promoted rule is a rule now (counts of its own: the candidate's were dry-run hits).
        promoted = _rule(status, "rules", "strict-tags")
        assert promoted["hits"] == {"warn": 0, "block": 0}, promoted

        c[db].kept.insert_one({"_id": 10, "tags": LONG})
        with pytest.raises(WriteError) as e:
            c[db].cand.insert_one({"_id": 1, "tags": LONG})
        assert e.value.code == 121, e.value.details
        assert upstream[db].cand.find_one({"_id": 1}) is None
        dg.wait_metric(1, "docguard_violations_total", db=db, collection="cand", action="block")
        status = _status(dg)
        assert _rule(status, "rules", "kept-tags")["hits"]["warn"] == base["kept-tags"] + 3
        assert _rule(status, "rules", "strict-tags")["hits"]["block"] == 1
    finally:
        upstream.drop_database(db)

"""docguard whatif against real traffic: a PyMongo workload through a block-mode docguard with
design rules, a $jsonSchema rule and a query guardrail, recorded; `docguard whatif` with the same
configuration over that recording reports as refused exactly the requests the live docguard
refused (the side file's `answered_by_docguard` lines with a rule). The same workload recorded
through a warn-mode docguard and judged with the block configuration gives the same refusals per
rule and shape. Exit code 1 when something would be refused, 0 with a permissive configuration."""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from pathlib import Path

import pymongo
import pytest
from pymongo.errors import PyMongoError

import harness

pytestmark = pytest.mark.proxy

DB = "wi_shop"
APP = "whatif-app"

RULES = """\
tracking:
  read_sample_rate: 0
introspection:
  enabled: false
rules:
  - match: "wi_shop.items"
    max_document_bytes: 400
  - match: "wi_shop.items"
    max_array_length: 3
  - id: items-indexes
    match: "wi_shop.items"
    require_index: true
  - id: products-schema
    match: "wi_shop.products"
    json_schema:
      bsonType: object
      required: [name, price]
      properties:
        price: { bsonType: number, minimum: 0 }
"""

PERMISSIVE = """\
introspection:
  enabled: false
rules: []
"""


def config(path: Path, mode: str, recording: Path | None = None) -> Path:
    text = f"mode: {mode}\n" + RULES
    if recording is not None:
        text += f"recording: {{enabled: true, directory: '{recording}'}}\n"
    path.write_text(text)
    return path


def workload(uri: str) -> None:
    """Writes some of which the rules refuse and queries some of which no index serves, each a
    single statement so a refusal is a whole request. Errors are expected and ignored: in warn
    mode nothing fails, in block mode the refused ones do."""
    c = pymongo.MongoClient(uri, appName=APP, retryWrites=False, serverSelectionTimeoutMS=10000)
    try:
        c.drop_database(DB)
        db = c[DB]
        items = db["items"]
        items.insert_one({"_id": 0, "status": "open", "tags": [1]})
        items.create_index("status")
        assert len(list(items.list_indexes())) == 2  # the guardrail learns the complete list
        for i in range(1, 6):
            try:
                items.insert_one({"_id": i, "status": "open", "tags": [1, 2]})
            except PyMongoError:
                pass
        for i in range(10, 13):  # too large
            try:
                items.insert_one({"_id": i, "status": "done", "pad": "x" * 600})
            except PyMongoError:
                pass
        for i in range(20, 22):  # too long an array
            try:
                items.insert_one({"_id": i, "status": "done", "tags": [1, 2, 3, 4, 5]})
            except PyMongoError:
                pass
        for _ in range(3):  # indexed: served
            list(items.find({"status": "open"}))
            list(items.find({"_id": 1}))
        items.update_one({"_id": 0}, {"$push": {"tags": 2}})  # a length seen at its insert
        items.update_one({"status": "done"}, {"$push": {"tags": 9}})  # which document? not judged
        for colour in ("red", "blue"):  # no index: refused
            try:
                list(items.find({"colour": colour}))
            except PyMongoError:
                pass
        products = db["products"]
        products.insert_one({"name": "ok", "price": 3})
        for bad in ({"name": "no price"}, {"name": "negative", "price": -1}):
            try:
                products.insert_one(bad)
            except PyMongoError:
                pass
    finally:
        c.close()


def record(tmp_path: Path, upstream: str, mode: str) -> Path:
    rec = tmp_path / f"rec-{mode}"
    work = tmp_path / f"dg-{mode}"
    work.mkdir()
    cfg = config(work / "docguard.yaml", mode, rec)
    dg = harness.start_docguard(upstream, work, config=cfg)
    try:
        workload(f"mongodb://127.0.0.1:{dg.ports['listen']}")
    finally:
        dg.stop()  # closes the recording's files with their checksums
    return rec


def whatif(cfg: Path, rec: Path) -> tuple[int, dict]:
    r = subprocess.run([str(harness.docguard_bin()), "whatif", "--config", str(cfg), "--recording",
                        str(rec), "--format", "json"], capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), (r.returncode, r.stderr)
    return r.returncode, json.loads(r.stdout)


def side_lines(rec: Path) -> list[dict]:
    lines = []
    for path in sorted(rec.glob("*.docguard.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines() if line]
    return lines


def refusals_by_rule_and_shape(report: dict) -> Counter:
    return Counter({(g["rule"], g["shape"]): g["count"] for g in report["groups"]
                    if g["outcome"] == "refused"})


@pytest.fixture
def upstream(tmp_path):
    fdb = harness.start_ferretdb(tmp_path / "fdb")
    yield f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    fdb.stop()


def test_whatif_refuses_what_the_live_block_mode_refused(tmp_path, upstream):
    block_cfg = config(tmp_path / "block.yaml", "block")
    rec = record(tmp_path, upstream, "block")

    lines = side_lines(rec)
    live_refused = {(l["connection"], l["order"]) for l in lines
                    if l.get("event") == "request" and l.get("verdict") == "answered_by_docguard"
                    and "rule" in l}
    # Every rule kind of the workload refused something live.
    live_rules = Counter(l["rule"] for l in lines if (l["connection"], l["order"]) in live_refused)
    assert set(live_rules) == {"max_document_bytes", "max_array_length", "require_index",
                               "json_schema"}, live_rules
    assert live_rules["max_document_bytes"] == 3 and live_rules["require_index"] == 2, live_rules
    # A request refused live is marked refused in the side file, and nothing else is.
    assert {(l["connection"], l["order"]) for l in lines if l.get("refused")} == live_refused
    assert all(l.get("user", "") == "" and l.get("app") == APP for l in lines
               if (l["connection"], l["order"]) in live_refused)

    code, report = whatif(block_cfg, rec)
    assert code == 1
    judged = {(r["connection"], r["order"]) for r in report["refused"]}
    assert judged == live_refused, (sorted(judged - live_refused), sorted(live_refused - judged))
    # The push by status could not be judged against a tracked length, and the report says so.
    assert report["length_unknown"] == 1 and report["not_judged"] >= 1, report
    # Examples are redacted: the padding is a type, not the value.
    text = json.dumps(report)
    assert "xxxxxxxxxx" not in text and "<string>" in text

    # A permissive configuration refuses nothing over the same traffic.
    permissive = tmp_path / "permissive.yaml"
    permissive.write_text(PERMISSIVE)
    code, report = whatif(permissive, rec)
    assert code == 0 and report["refused"] == [], report["refused"]

    # Text and HTML are written too; a missing recording is an I/O error.
    out = tmp_path / "report.html"
    r = subprocess.run([str(harness.docguard_bin()), "whatif", "--config", str(block_cfg),
                        "--recording", str(rec), "--format", "html", "--output", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    assert out.read_text().startswith("<!DOCTYPE html>") and "<script" not in out.read_text()
    r = subprocess.run([str(harness.docguard_bin()), "whatif", "--config", str(block_cfg),
                        "--recording", str(tmp_path / "nowhere")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)


def test_a_warn_mode_recording_judged_in_block_mode_refuses_the_same(tmp_path, upstream):
    block_cfg = config(tmp_path / "block.yaml", "block")
    block_rec = record(tmp_path, upstream, "block")
    warn_rec = record(tmp_path, upstream, "warn")

    # Live in warn mode nothing was refused, but the rules were broken.
    warn_lines = side_lines(warn_rec)
    assert not any(l.get("verdict") == "answered_by_docguard" for l in warn_lines)
    assert any("rule" in l and not l.get("refused") for l in warn_lines)

    _, from_block = whatif(block_cfg, block_rec)
    code, from_warn = whatif(block_cfg, warn_rec)
    assert code == 1
    assert refusals_by_rule_and_shape(from_warn) == refusals_by_rule_and_shape(from_block), (
        refusals_by_rule_and_shape(from_warn), refusals_by_rule_and_shape(from_block))


def test_indexes_from_a_live_cluster_decide_what_the_recording_could_not(tmp_path, upstream):
    """A recording that never listed its indexes: the guardrail offline knows none and refuses
    nothing; with --facts-from the cluster's URI it reads them (as introspection would) and
    refuses exactly the query no index serves."""
    direct = pymongo.MongoClient(upstream, serverSelectionTimeoutMS=10000)
    try:
        direct.drop_database(DB)
        direct[DB]["items"].insert_many([{"_id": i, "status": "open"} for i in range(5)])
        direct[DB]["items"].create_index("status")  # not through docguard: not recorded
    finally:
        direct.close()
    rec = tmp_path / "rec"
    work = tmp_path / "dg"
    work.mkdir()
    cfg = config(work / "docguard.yaml", "warn", rec)
    dg = harness.start_docguard(upstream, work, config=cfg)
    try:
        c = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}", appName=APP)
        list(c[DB]["items"].find({"status": "open"}))
        list(c[DB]["items"].find({"colour": "red"}))
        c.close()
    finally:
        dg.stop()

    # The side file names each request's shape, values left out.
    finds = [l for l in side_lines(rec) if l.get("command") == "find"]
    assert [l["shape"].split(" {")[0] for l in finds] == [f"find {DB}.items"] * 2, finds
    assert not any("open" in l["shape"] or "red" in l["shape"] for l in finds), finds

    block_cfg = config(tmp_path / "block.yaml", "block")
    _, unknown = whatif(block_cfg, rec)
    assert not any("colour" in g["shape"] for g in unknown["groups"]), unknown["groups"]

    r = subprocess.run([str(harness.docguard_bin()), "whatif", "--config", str(block_cfg),
                        "--recording", str(rec), "--format", "json", "--facts-from", upstream],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, (r.returncode, r.stderr)
    refused = [g for g in json.loads(r.stdout)["groups"] if g["outcome"] == "refused"]
    assert [g["count"] for g in refused] == [1] and "colour" in refused[0]["shape"], refused


LOOKUP_RULES = """\
mode: block
introspection:
  enabled: false
rules:
  - match: "wi_shop.orders"
    action: block
    max_lookup_ratio: 0.3
    lookup_window: 2s
    lookup_min_reads: 4
"""


def test_a_lookup_window_judges_offline_as_it_did_live(tmp_path, upstream):
    """whatif runs on the recording's clock: reads far apart in time fall in different windows,
    as they did live, instead of one burst on whatif's own clock."""
    rec = tmp_path / "rec-lookup"
    work = tmp_path / "dg-lookup"
    work.mkdir()
    cfg = work / "docguard.yaml"
    cfg.write_text(LOOKUP_RULES + f"recording: {{enabled: true, directory: '{rec}'}}\n")
    dg = harness.start_docguard(upstream, work, config=cfg)
    join = [{"$lookup": {"from": "customers", "localField": "c", "foreignField": "_id",
                         "as": "customer"}}]
    try:
        c = pymongo.MongoClient(f"mongodb://127.0.0.1:{dg.ports['listen']}", appName=APP)
        orders = c[DB]["orders"]
        for _ in range(12):  # plain reads: the window's ratio of joins stays low
            list(orders.find({"_id": 1}))
        for _ in range(2):
            try:
                list(orders.aggregate(join))
            except PyMongoError:
                pass
        time.sleep(3.0)  # past the window: the next reads are judged on their own
        for i in range(8):
            try:
                if i % 4 == 3:
                    list(orders.find({"_id": 1}))
                else:
                    list(orders.aggregate(join))
            except PyMongoError:
                pass
        c.close()
    finally:
        dg.stop()
    live_refused = {(l["connection"], l["order"]) for l in side_lines(rec) if l.get("refused")}
    assert live_refused, "the joins after the pause were refused live"
    code, report = whatif(cfg, rec)
    assert code == 1
    judged = {(r["connection"], r["order"]) for r in report["refused"]}
    assert judged == live_refused, (sorted(judged - live_refused), sorted(live_refused - judged))
    assert "not_judged" in report and "guardrail_unknown" in report
    text = subprocess.run([str(harness.docguard_bin()), "whatif", "--config", str(cfg),
                           "--recording", str(rec)], capture_output=True, text=True,
                          timeout=60).stdout
    assert "not judged" in text.splitlines()[0], text

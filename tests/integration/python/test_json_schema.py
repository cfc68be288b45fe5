"""$jsonSchema validators judged by docguard on the wire, with PyMongo against FerretDB (which has
no validators: every refusal here is docguard's).

A candidate validator blocks nothing and counts would-fail writes per app exactly; `warn` logs and
passes; `block` refuses with code 121 and the errInfo the server writes (compared key for key, in
order, with tests/fixtures/json_schema/), in inserts, replacements, replacement upserts, `$set` of
a wrong type and `$unset` of a required field, with ordered/unordered batch semantics (good
documents stored, bad ones absent) and bulk_write; a rule scoped to one app judges only it; an
update that needs the stored document passes and is counted as unjudged; a schema using an
unsupported keyword is refused by --check-config naming it; SIGHUP swaps the validator under
load with no write lost.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import OrderedDict
from pathlib import Path

import pymongo
import pytest
from bson import SON, Int64
from pymongo.errors import BulkWriteError, OperationFailure, WriteError

import bson
import subprocess

import harness
import rules_harness
from rules_harness import RulesProxy

pytestmark = pytest.mark.proxy

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "json_schema"

CONFIG = """\
mode: warn
tracking:
  read_sample_rate: 0
rules:
  - id: products-schema
    match: "*.products"
    action: block
    json_schema:
      bsonType: object
      required: [name, price]
      properties:
        name: { bsonType: string, description: "name is a string" }
        price: { bsonType: number, minimum: 0 }
        tags: { bsonType: array, maxItems: 3, items: { bsonType: string } }
  - id: students-schema
    match: "*.students"
    action: block
    json_schema_file: students.json
  - id: events-warn
    match: "*.events"
    action: warn
    json_schema:
      required: [kind]
  - id: strict-schema
    match: "*.strict"
    action: block
    json_schema:
      bsonType: object
      additionalProperties: false
      properties:
        _id: {}
        name: { bsonType: string }
  - id: orders-web-only
    match: "*.orders"
    action: block
    apps: [web]
    json_schema:
      required: [total]
candidate_rules:
  - id: users-email
    match: "*.users"
    action: block
    json_schema:
      required: [email]
      properties:
        email: { bsonType: string, pattern: "^[^@]+@[^@]+$" }
"""


def _fixture() -> dict:
    return json.loads((FIXTURES / "students_gpa_errinfo.json").read_text(),
                      object_pairs_hook=OrderedDict)


@pytest.fixture(scope="module")
def dg(env, tmp_path_factory):
    if not env.proxied:
        pytest.skip("needs docguard (DOCGUARD_DIRECT=1)")
    workdir = env.workdir
    (workdir / "students.json").write_text(json.dumps({"validator": _fixture()["validator"]}))
    try:
        p = RulesProxy(env.ferret_uri, workdir, CONFIG, f"schema-{uuid.uuid4().hex[:6]}")
    except rules_harness.harness.StartError as e:
        pytest.fail(f"could not start docguard with json_schema rules: {e}")
    yield p
    assert p.alive(), "docguard (json_schema) died during the tests"
    p.stop()


@pytest.fixture(scope="module")
def upstream(env):
    c = pymongo.MongoClient(env.ferret_uri, directConnection=True, serverSelectionTimeoutMS=10000)
    yield c
    c.close()


@pytest.fixture()
def db(upstream):
    name = "it_schema_" + uuid.uuid4().hex[:8]
    yield name
    upstream.drop_database(name)


def _ordered(value):
    """A decoded document as nested lists of (key, value): equality then checks order too."""
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def test_block_answers_with_the_servers_errinfo(dg, db, upstream):
    fixture = _fixture()
    c = dg.client(appname="school", document_class=SON)
    doc = dict(fixture["document"])
    doc["year"] = 2019
    with pytest.raises(WriteError) as e:
        c[db].students.insert_one(doc)
    assert e.value.code == 121, e.value.details
    assert e.value.details["codeName"] == "DocumentValidationFailure"
    assert e.value.details["errmsg"] == "Document failed validation"
    assert _ordered(e.value.details["errInfo"]) == _ordered(fixture["errInfo"])
    # What application error handlers read.
    prop = e.value.details["errInfo"]["details"]["schemaRulesNotSatisfied"][0][
        "propertiesNotSatisfied"][0]
    assert prop["propertyName"] == "gpa" and prop["description"].startswith("'gpa'")
    assert prop["details"][0]["consideredType"] == "int"
    assert upstream[db].students.count_documents({}) == 0
    doc["gpa"] = 3.0
    c[db].students.insert_one(doc)
    assert upstream[db].students.count_documents({}) == 1


def test_replace_upsert_set_and_unset(dg, db, upstream):
    c = dg.client(appname="shop")
    coll = c[db].products
    coll.insert_one({"_id": 1, "name": "pen", "price": 2})
    with pytest.raises(WriteError) as e:
        coll.replace_one({"_id": 1}, {"name": "pen"})
    assert e.value.code == 121
    assert e.value.details["errInfo"]["failingDocumentId"] == 1
    rules = e.value.details["errInfo"]["details"]["schemaRulesNotSatisfied"]
    assert rules == [{"operatorName": "required", "specifiedAs": {"required": ["name", "price"]},
                      "missingProperties": ["price"]}]
    with pytest.raises(WriteError) as e:
        coll.replace_one({"_id": 2}, {"name": 5, "price": 1}, upsert=True)
    assert e.value.code == 121
    assert upstream[db].products.find_one({"_id": 2}) is None

    with pytest.raises(WriteError) as e:
        coll.update_one({"_id": 1}, {"$set": {"price": "cheap"}})
    assert e.value.code == 121
    detail = e.value.details["errInfo"]["details"]["schemaRulesNotSatisfied"][0]
    assert detail["propertiesNotSatisfied"][0]["propertyName"] == "price"
    assert detail["propertiesNotSatisfied"][0]["details"][0]["reason"] == "type did not match"

    with pytest.raises(WriteError) as e:
        coll.update_one({"_id": 1}, {"$unset": {"price": ""}})
    assert e.value.code == 121
    assert e.value.details["errInfo"]["details"]["schemaRulesNotSatisfied"][0][
        "missingProperties"] == ["price"]
    assert upstream[db].products.find_one({"_id": 1}) == {"_id": 1, "name": "pen", "price": 2}

    coll.update_one({"_id": 1}, {"$set": {"price": 3}})
    assert upstream[db].products.find_one({"_id": 1})["price"] == 3
    assert dg.wait_metric(4, "docguard_violations_total", db=db, collection="products",
                          rule="json_schema", action="block", app="shop") == 4


def test_insert_many_ordered_and_unordered(dg, db, upstream):
    c = dg.client(appname="shop")
    good = lambda i: {"_id": i, "name": f"p{i}", "price": i}  # noqa: E731
    bad = lambda i: {"_id": i, "name": f"p{i}"}  # noqa: E731

    with pytest.raises(BulkWriteError) as e:
        c[db].products.insert_many([good(1), good(2), bad(3), good(4)], ordered=True)
    res = e.value.details
    assert res["nInserted"] == 2
    assert [(w["index"], w["code"]) for w in res["writeErrors"]] == [(2, 121)]
    assert res["writeErrors"][0]["errInfo"]["failingDocumentId"] == 3
    assert sorted(d["_id"] for d in upstream[db].products.find()) == [1, 2]

    with pytest.raises(BulkWriteError) as e:
        c[db].products.insert_many([good(10), bad(11), good(12), bad(13)], ordered=False)
    res = e.value.details
    assert res["nInserted"] == 2
    assert [(w["index"], w["code"]) for w in res["writeErrors"]] == [(1, 121), (3, 121)]
    assert sorted(d["_id"] for d in upstream[db].products.find()) == [1, 2, 10, 12]


def test_bulk_write(dg, db, upstream):
    c = dg.client(appname="shop")
    with pytest.raises(BulkWriteError) as e:
        c[db].products.bulk_write([
            pymongo.InsertOne({"_id": 1, "name": "a", "price": 1}),
            pymongo.UpdateOne({"_id": 1}, {"$set": {"name": 7}}),
            pymongo.InsertOne({"_id": 2, "name": "b", "price": 2}),
            pymongo.ReplaceOne({"_id": 2}, {"name": "b"}),
        ], ordered=False)
    res = e.value.details
    assert [(w["index"], w["code"]) for w in res["writeErrors"]] == [(1, 121), (3, 121)]
    assert res["nInserted"] == 2
    assert upstream[db].products.find_one({"_id": 1})["name"] == "a"
    assert upstream[db].products.find_one({"_id": 2})["price"] == 2


def test_find_one_and_update_is_a_command_error(dg, db, upstream):
    c = dg.client(appname="shop")
    c[db].products.insert_one({"_id": 1, "name": "a", "price": 1})
    with pytest.raises(OperationFailure) as e:
        c[db].products.find_one_and_update({"_id": 1}, {"$set": {"price": -1}})
    assert e.value.code == 121
    assert e.value.details["errInfo"]["details"]["operatorName"] == "$jsonSchema"
    assert upstream[db].products.find_one({"_id": 1})["price"] == 1


def test_unjudged_push_passes_and_is_counted(dg, db, upstream):
    c = dg.client(appname="shop")
    c[db].products.insert_one({"_id": 1, "name": "a", "price": 1, "tags": ["x"]})
    before = dg.metric("docguard_schema_unjudged_total", db=db, collection="products")
    c[db].products.update_one({"_id": 1}, {"$push": {"tags": "y"}})
    assert upstream[db].products.find_one({"_id": 1})["tags"] == ["x", "y"]
    assert dg.wait_metric(before + 1, "docguard_schema_unjudged_total", db=db,
                          collection="products") == before + 1


def test_a_pull_on_a_forbidden_field_is_the_no_op_the_server_lets_through(dg, db, upstream):
    """$pull, $pop and $pullAll create no field, and $rename from a missing one moves nothing:
    on a field additionalProperties forbids, no valid document holds it, the server modifies
    nothing and validates nothing. Setting it is still refused."""
    c = dg.client(appname="shop")
    strict = c[db].strict
    strict.insert_one({"_id": 1, "name": "a"})
    assert strict.update_one({"_id": 1}, {"$pull": {"tags": "x"}}).matched_count == 1
    strict.update_one({"_id": 1}, {"$pop": {"tags": 1}})
    strict.update_one({"_id": 1}, {"$pullAll": {"tags": ["x"]}})
    strict.update_one({"_id": 1}, {"$rename": {"tags": "name"}})
    assert upstream[db].strict.find_one({"_id": 1}) == {"_id": 1, "name": "a"}
    with pytest.raises(pymongo.errors.WriteError) as refused:
        strict.update_one({"_id": 1}, {"$set": {"tags": ["x"]}})
    assert refused.value.code == 121


def test_an_upsert_whose_insert_would_fail_is_forwarded_and_counted(dg, db, upstream):
    """An upsert that inserts is validated as an insert of its query's equalities and its $set:
    {_id: 50} with $set price lacks the required name. Whether it inserts depends on what is
    stored, so docguard forwards it and counts it as unjudged."""
    c = dg.client(appname="shop")
    before = dg.metric("docguard_schema_unjudged_total", db=db, collection="products")
    c[db].products.update_one({"_id": 50}, {"$set": {"price": 3}}, upsert=True)
    assert upstream[db].products.find_one({"_id": 50}) == {"_id": 50, "price": 3}  # FerretDB
    assert dg.wait_metric(before + 1, "docguard_schema_unjudged_total", db=db,
                          collection="products") == before + 1
    # With the name in the query the image is valid: nothing more is counted.
    c[db].products.update_one({"_id": 51, "name": "n"}, {"$set": {"price": 3}}, upsert=True)
    assert dg.metric("docguard_schema_unjudged_total", db=db,
                     collection="products") == before + 1


def test_writes_to_another_collection_are_counted_on_their_target(dg, db, upstream):
    """An aggregate ending in $out writes documents docguard does not see into products: counted
    as unjudged there, never refused. (FerretDB 1.24 has no $out and answers with its own error,
    which is forwarded; a server would validate the written documents itself.)"""
    c = dg.client(appname="shop")
    before = dg.metric("docguard_schema_unjudged_total", db=db, collection="products")
    try:
        list(c[db].staging.aggregate([{"$match": {}}, {"$out": "products"}]))
    except pymongo.errors.OperationFailure as e:
        assert e.code != 121, e.details
    assert dg.wait_metric(before + 1, "docguard_schema_unjudged_total", db=db,
                          collection="products") == before + 1


def test_warn_logs_and_passes(dg, db, upstream):
    since = dg.log_mark()
    c = dg.client(appname="tracker")
    c[db].events.insert_one({"_id": 1, "what": "no kind"})
    assert upstream[db].events.count_documents({}) == 1
    got = dg.wait_violations(since, 1, ns=f"{db}.events")
    assert got and got[0]["rule"] == "json_schema" and got[0]["action"] == "warn", got
    assert dg.wait_metric(1, "docguard_violations_total", db=db, collection="events",
                          rule="json_schema", action="warn", app="tracker") == 1


def test_scoped_to_one_app(dg, db, upstream):
    with pytest.raises(WriteError):
        dg.client(appname="web")[db].orders.insert_one({"_id": 1})
    dg.client(appname="batch")[db].orders.insert_one({"_id": 2})
    assert [d["_id"] for d in upstream[db].orders.find()] == [2]


def test_candidate_counts_would_fail_writes_per_app(dg, db, upstream):
    web, mobile = dg.client(appname="web"), dg.client(appname="mobile")
    for i in range(5):
        web[db].users.insert_one({"_id": i, "email": "a@b" if i % 2 else "nope"})
    for i in range(3):
        mobile[db].users.insert_one({"_id": 100 + i})
    assert upstream[db].users.count_documents({}) == 8
    assert dg.wait_metric(3, "docguard_candidate_violations_total", db=db, collection="users",
                          rule="json_schema", action="block", app="web") == 3
    assert dg.wait_metric(3, "docguard_candidate_violations_total", db=db, collection="users",
                          rule="json_schema", action="block", app="mobile") == 3
    assert dg.metric("docguard_violations_total", db=db) == 0
    code, body = harness.http_get(f"http://{dg.admin}/report.json")
    assert code == 200
    entries = [v for v in json.loads(body)["validators"]
               if v["db"] == db and v["rule"] == "users-email"]
    assert len(entries) == 1, json.loads(body)["validators"]
    assert entries[0]["candidate"] is True
    assert entries[0]["writes_failing_by_app"] == {"web": 3, "mobile": 3}, entries[0]
    code, html = harness.http_get(f"http://{dg.admin}/report")
    assert code == 200 and "Validators" in html and "users-email" in html
    code, body = harness.http_get(f"http://{dg.admin}/status")
    assert any(v["rule"] == "users-email" for v in json.loads(body)["validators"])


def test_check_config_refuses_an_unsupported_keyword(dg, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("rules:\n  - match: \"shop.users\"\n    json_schema:\n      properties:\n"
                    "        email: { bsonType: string, format: email }\n")
    r = rules_harness.check_config(path)
    assert r.returncode != 0, r
    out = r.stdout + r.stderr
    assert "format" in out and f"{path}:5:" in out, out


SWAP_RULE = """\
  - id: swap
    match: "*.swap"
    action: block
    json_schema: { required: [name] }
"""


def test_sighup_swaps_the_validator_under_load(dg, db, upstream):
    stop = threading.Event()
    outcomes = {"ok": 0, "refused": 0, "other": 0}
    lock = threading.Lock()

    def writer(n: int):
        c = dg.client(appname="load")
        i = 0
        while not stop.is_set():
            i += 1
            try:
                c[db].swap.insert_one({"_id": f"{n}-{i}", "v": i})
                key = "ok"
            except WriteError as e:
                key = "refused" if e.code == 121 else "other"
            except Exception:  # noqa: BLE001
                key = "other"
            with lock:
                outcomes[key] += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 10
        while outcomes["ok"] < 30 and time.monotonic() < deadline:
            time.sleep(0.02)
        swapped = CONFIG.replace("candidate_rules:\n", SWAP_RULE + "candidate_rules:\n", 1)
        line = dg.reload(swapped)
        assert line is not None and "reloaded rules" in line["msg"], line
        deadline = time.monotonic() + 10
        while outcomes["refused"] < 30 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=20)
        dg.reload(CONFIG)
    assert outcomes["other"] == 0, outcomes
    assert outcomes["refused"] > 0 and outcomes["ok"] > 0, outcomes
    # Nothing lost: every acknowledged insert is stored, no refused one is.
    assert upstream[db].swap.count_documents({}) == outcomes["ok"]


def test_scan_census_counts_the_failing_stored_documents(tmp_path):
    """On a hand-built dump with 7 of 1,000 documents failing, `docguard scan --config` says 7."""
    dump = tmp_path / "dump" / "censusdb"
    dump.mkdir(parents=True)
    with open(dump / "items.bson", "wb") as f:
        for i in range(1000):
            d = {"_id": i, "sku": f"s{i}", "price": i}
            if i in (10, 20, 30, 40, 50):
                d["price"] = -1
            if i in (60, 70):
                del d["sku"]
            f.write(bson.encode(d))
    cfg = tmp_path / "census.yaml"
    cfg.write_text("rules:\n  - match: \"censusdb.items\"\n    action: block\n    json_schema:\n"
                   "      required: [sku, price]\n      properties:\n"
                   "        price: { bsonType: number, minimum: 0 }\n")
    r = subprocess.run([str(harness.docguard_bin()), "scan", str(tmp_path / "dump"), "--config",
                        str(cfg), "--format", "json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    found = [f for f in json.loads(r.stdout)["findings"] if f["kind"] == "rule:json_schema"]
    assert len(found) == 1, found
    assert found[0]["evidence"].startswith(
        "7 documents fail the $jsonSchema; failing most: price (5), sku (2)"), found[0]
    assert found[0]["severity"] == "block"


def test_validator_apply_shows_the_census_then_says_what_the_server_did(env, upstream, db):
    """`docguard validator URI NS --apply`: the census of the validator it wrote, then collMod;
    FerretDB has no validators, so it refuses, and docguard says its own rule is the way."""
    coll = upstream[db].things
    coll.insert_many([{"_id": i, "name": f"n{i}", "qty": i} for i in range(20)])
    uri = env.ferret_uri + ("&" if "?" in env.ferret_uri else "/?") + "directConnection=true"
    r = subprocess.run([str(harness.docguard_bin()), "validator", uri, f"{db}.things", "--apply"],
                       capture_output=True, text=True, timeout=60)
    assert "\"collMod\": \"things\"" in r.stdout, r
    assert "census: 0 of 20 documents read from" in r.stdout, r.stdout
    if r.returncode == 0:
        assert f"applied: collMod {db}.things" in r.stdout, r
    else:
        assert r.returncode == 3, r
        assert f"the server refused collMod on {db}.things" in r.stderr, r.stderr
        assert "docguard's own enforcement stays the way" in r.stderr, r.stderr

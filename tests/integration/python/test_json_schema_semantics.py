"""$jsonSchema rules on the server's semantics through docguard (block mode) in front of FerretDB
(which has no validators: every refusal is docguard's): multipleOf as the server's Decimal128
remainder (19.99 and 0.3 pass, 19.995 is refused); the document the server validates (an
insert without _id gets one, a replacement keeps the stored _id, so a validator from `docguard
validator`, which requires _id, passes a replace_one); bypassDocumentValidation lets a write
through, counted per app; a validator file's validationLevel moderate lets an update pass and
still refuses an invalid insert.
"""

from __future__ import annotations

import json
import time
import uuid

import pymongo
import pytest
from pymongo.errors import WriteError

import harness
import rules_harness
from harness import rss_mib
from rules_harness import RulesProxy

pytestmark = pytest.mark.proxy

CONFIG = """\
mode: warn
tracking:
  read_sample_rate: 0
rules:
  - id: prices
    match: "*.prices"
    action: block
    json_schema:
      properties:
        price: { bsonType: double, multipleOf: 0.01 }
        r: { multipleOf: 0.1 }
  - id: generated
    match: "*.generated"
    action: block
    json_schema_file: generated.json
  - id: strict
    match: "*.strict"
    action: block
    json_schema:
      required: [name]
  - id: large
    match: "*.large"
    action: block
    json_schema:
      properties:
        blob: { anyOf: [ { maxLength: 10 }, { maxLength: 20 } ] }
        tags: { uniqueItems: true }
"""

# What `docguard validator` prints: _id required, moderate, error.
GENERATED = {
    "collMod": "generated",
    "validator": {"$jsonSchema": {
        "bsonType": "object", "required": ["_id", "name"], "additionalProperties": False,
        "properties": {"_id": {"bsonType": "objectId"}, "name": {"bsonType": "string"}}}},
    "validationLevel": "moderate",
    "validationAction": "error",
}


@pytest.fixture(scope="module")
def dg(env):
    if not env.proxied:
        pytest.skip("needs docguard (DOCGUARD_DIRECT=1)")
    (env.workdir / "generated.json").write_text(json.dumps(GENERATED))
    try:
        p = RulesProxy(env.ferret_uri, env.workdir, CONFIG, f"semantics-{uuid.uuid4().hex[:6]}")
    except rules_harness.harness.StartError as e:
        pytest.fail(f"could not start docguard with json_schema rules: {e}")
    yield p
    assert p.alive(), "docguard died during the tests"
    p.stop()


@pytest.fixture(scope="module")
def upstream(env):
    c = pymongo.MongoClient(env.ferret_uri, directConnection=True, serverSelectionTimeoutMS=10000)
    yield c
    c.close()


@pytest.fixture()
def db(upstream):
    name = "it_semantics_" + uuid.uuid4().hex[:8]
    yield name
    upstream.drop_database(name)


def test_multiple_of_as_the_servers_decimal_remainder(dg, db, upstream):
    coll = dg.client(appname="shop")[db].prices
    coll.insert_one({"_id": 1, "price": 19.99})
    coll.insert_one({"_id": 2, "r": 0.3})
    with pytest.raises(WriteError) as e:
        coll.insert_one({"_id": 3, "price": 19.995})
    assert e.value.code == 121
    detail = e.value.details["errInfo"]["details"]["schemaRulesNotSatisfied"][0]
    assert detail["propertiesNotSatisfied"][0]["details"][0]["operatorName"] == "multipleOf"
    assert sorted(d["_id"] for d in upstream[db].prices.find()) == [1, 2]


def test_the_post_image_id(dg, db, upstream):
    coll = dg.client(appname="shop")[db].generated
    inserted = coll.insert_one({"name": "a"}).inserted_id  # the driver adds the ObjectId
    assert coll.replace_one({"_id": inserted}, {"name": "b"}).modified_count == 1
    assert coll.replace_one({"name": "b"}, {"name": "c"}).modified_count == 1
    with pytest.raises(WriteError) as e:
        coll.insert_one({"name": 5})
    assert e.value.code == 121
    assert e.value.details["errInfo"]["failingDocumentId"] is not None
    assert upstream[db].generated.find_one({"_id": inserted})["name"] == "c"


def test_bypass_document_validation(dg, db, upstream):
    coll = dg.client(appname="loader")[db].strict
    coll.insert_one({"_id": 1, "x": 1}, bypass_document_validation=True)
    with pytest.raises(WriteError) as e:
        coll.insert_one({"_id": 2, "x": 1})
    assert e.value.code == 121
    assert [d["_id"] for d in upstream[db].strict.find()] == [1]
    assert dg.wait_metric(1, "docguard_schema_bypassed_total", db=db, collection="strict",
                          app="loader") == 1


def test_moderate_lets_updates_pass_and_refuses_invalid_inserts(dg, db, upstream):
    coll = dg.client(appname="shop")[db].generated
    inserted = coll.insert_one({"name": "a"}).inserted_id
    assert coll.update_one({"_id": inserted}, {"$set": {"name": 5}}).modified_count == 1
    assert upstream[db].generated.find_one({"_id": inserted})["name"] == 5
    with pytest.raises(WriteError):
        coll.insert_one({"name": 7})
    assert dg.wait_metric(1, "docguard_schema_unjudged_total", db=db,
                          collection="generated") >= 1


def test_a_large_failing_value_gets_a_bounded_refusal_and_no_memory_stays(dg, db, upstream):
    """A 6 MB string under anyOf fails both branches: the server's errInfo would name the value
    in each; docguard's refusal stays under 16 MB (the driver raises code 121, not a protocol
    error) and its memory comes back. 20,000 distinct integers under uniqueItems pass (the time is
    printed, not asserted)."""
    coll = dg.client(appname="shop")[db].large
    pid = dg.proc.popen.pid
    start = rss_mib(pid)
    big = "x" * (6 * 1024 * 1024)
    for i in range(3):
        with pytest.raises(WriteError) as e:
            coll.insert_one({"_id": i, "blob": big})
        assert e.value.code == 121
        assert len(json.dumps(e.value.details.get("errInfo", {}), default=str)) < 16 * 1024 * 1024
    began = time.monotonic()
    coll.insert_one({"_id": 10, "tags": list(range(20000))})
    print(f"20,000 uniqueItems judged and inserted in {1000 * (time.monotonic() - began):.0f} ms")
    bound = 64 + harness.sanitizer_quarantine_mib()
    deadline = time.monotonic() + 15
    while rss_mib(pid) - start >= bound and time.monotonic() < deadline:
        time.sleep(0.5)
    assert rss_mib(pid) - start < bound, f"RSS grew from {start:.0f} to {rss_mib(pid):.0f} MiB"
    assert [d["_id"] for d in upstream[db].large.find()] == [10]


def test_what_docguard_validator_prints_loads_as_a_rule_and_judges_as_the_server(env, upstream,
                                                                                 db):
    """Round trip: `docguard validator URI NS` profiles stored documents and prints a collMod;
    that output, loaded as is by a `json_schema_file` rule in block mode, passes every document
    the data already has (re-inserted through docguard, without their _id), refuses an insert of
    the wrong type (code 121, as the server with that validator would), passes a replacement
    without _id (the stored _id is kept), and under the printed validationLevel moderate lets a
    failing update pass, counted as unjudged."""
    if not env.proxied:
        pytest.skip("needs docguard (DOCGUARD_DIRECT=1)")
    import subprocess

    seeded = [{"name": f"n{i}", "qty": i, "tags": ["a", "b"][: i % 3]} for i in range(30)]
    upstream[db].items.insert_many([dict(d) for d in seeded])
    uri = env.ferret_uri + ("&" if "?" in env.ferret_uri else "/?") + "directConnection=true"
    r = subprocess.run([str(harness.docguard_bin()), "validator", uri, f"{db}.items"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r
    printed = json.loads(r.stdout)
    assert printed["validationLevel"] == "moderate" and printed["validationAction"] == "error"
    workdir = env.workdir / f"roundtrip-{uuid.uuid4().hex[:6]}"
    workdir.mkdir()
    (workdir / "printed.json").write_text(r.stdout)
    config = ("mode: warn\ntracking:\n  read_sample_rate: 0\nrules:\n  - id: printed\n"
              f"    match: \"{db}.*\"\n    action: block\n    json_schema_file: printed.json\n")
    p = RulesProxy(env.ferret_uri, workdir, config, f"roundtrip-{uuid.uuid4().hex[:6]}")
    try:
        copies = p.client(appname="roundtrip")[db].copies
        copies.insert_many([dict(d) for d in seeded])  # every stored shape passes
        with pytest.raises(WriteError) as refused:
            copies.insert_one({"name": "x", "qty": "seven", "tags": []})
        assert refused.value.code == 121
        assert refused.value.details["errInfo"]["failingDocumentId"] is not None
        stored = upstream[db].copies.find_one({"name": "n1"})
        copies.replace_one({"_id": stored["_id"]}, {"name": "n1b", "qty": 1, "tags": []})
        before = p.metric("docguard_schema_unjudged_total", db=db, collection="copies")
        copies.update_one({"_id": stored["_id"]}, {"$set": {"qty": "one"}})
        assert p.wait_metric(before + 1, "docguard_schema_unjudged_total", db=db,
                             collection="copies") == before + 1
        assert upstream[db].copies.find_one({"_id": stored["_id"]})["qty"] == "one"
        assert upstream[db].copies.count_documents({}) == 30
    finally:
        assert p.alive(), "docguard died during the round trip"
        p.stop()

"""Design rules through docguard with PyMongo against FerretDB.

These tests start docguard instances of their own (rules_harness.RulesProxy) in front of the
suite's FerretDB: one in warn mode, one in block mode (module scope), and fresh ones for the
reload tests. Every rule has its own collection name (see rules_harness.RULES_TEMPLATE) and every
test its own database, so counters, log rate limiting and $lookup windows start from zero.

What the upstream holds is always read back from FerretDB directly, never through docguard.
"""

from __future__ import annotations

import copy
import time
import uuid

import bson
import pymongo
import pytest
from bson.son import SON
from pymongo import DeleteOne, InsertOne, ReplaceOne, UpdateOne
from pymongo.errors import BulkWriteError, OperationFailure, WriteError
from pymongo.write_concern import WriteConcern

import rules_harness
from rules_harness import RulesProxy, rules_config

pytestmark = pytest.mark.proxy

LOOKUP = {"$lookup": {"from": "other", "localField": "k", "foreignField": "k", "as": "j"}}
KiB2 = 2048


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def upstream(env):
    if not env.proxied:
        pytest.skip("needs docguard (DOCGUARD_DIRECT=1)")
    c = pymongo.MongoClient(env.ferret_uri, directConnection=True, serverSelectionTimeoutMS=10000)
    yield c
    c.close()


def _start(env, upstream, action, lookup_action=None, name=None):
    try:
        return RulesProxy(env.ferret_uri, env.workdir, rules_config(action, lookup_action),
                          name or f"{action}-{uuid.uuid4().hex[:6]}")
    except rules_harness.harness.StartError as e:
        pytest.fail(f"could not start docguard with a rules config: {e}")


@pytest.fixture(scope="module")
def warn_dg(env, upstream):
    p = _start(env, upstream, "warn")
    yield p
    assert p.alive(), "docguard (warn) died during the tests"
    p.stop()


@pytest.fixture(scope="module")
def block_dg(env, upstream):
    p = _start(env, upstream, "block")
    yield p
    assert p.alive(), "docguard (block) died during the tests"
    p.stop()


@pytest.fixture(scope="module")
def wclient(warn_dg):
    return warn_dg.client()


@pytest.fixture(scope="module")
def bclient(block_dg):
    return block_dg.client()


@pytest.fixture
def dbname(upstream):
    """A fresh database name per test; dropped on the upstream afterwards."""
    names = ["rules_" + uuid.uuid4().hex[:10]]
    yield names[0]
    for n in (names[0], names[0] + "_direct"):
        try:
            upstream.drop_database(n)
        except pymongo.errors.PyMongoError:
            pass


# ---------------------------------------------------------------- helpers

def secret() -> str:
    """A distinctive value that must never reach docguard's log."""
    return "SECRETVAL-" + uuid.uuid4().hex


def held(upstream, dbname, coll, sort="_id"):
    """What FerretDB holds, read directly."""
    return list(upstream[dbname][coll].find({}, sort=[(sort, 1)]))


def held_ids(upstream, dbname, coll):
    return sorted(str(d["_id"]) for d in upstream[dbname][coll].find({}, {"_id": 1}))


def strip_reply(r: dict) -> dict:
    return {k: v for k, v in r.items()
            if not k.startswith("$") and k not in ("operationTime", "electionId", "opTime")}


def assert_same_reply(proxied_db, direct_db, cmd: SON):
    """The same command through docguard and directly against FerretDB gets the same reply."""
    got = proxied_db.command(copy.deepcopy(cmd))
    want = direct_db.command(copy.deepcopy(cmd))
    assert strip_reply(got) == strip_reply(want)
    return got


def assert_err_info(info: dict, *, rule, match, field, measured, bound, failing_id="absent"):
    assert info["rule"] == rule, info
    # The rule's glob and config line are the operator's configuration: not told to clients
    # unless errors.reveal_rule_source says so. `match` names the rule that decided, for reading.
    assert "match" not in info and "ruleLine" not in info, (match, info)
    assert info["fieldPath"] == field, info
    assert info["measured"] == pytest.approx(measured), info
    assert info["bound"] == pytest.approx(bound), info
    if failing_id == "absent":
        pass  # not asserted
    else:
        assert info.get("failingDocumentId") == failing_id, info


def assert_write_error(we: dict, *, index, rule, **kw):
    assert we["index"] == index, we
    assert we["code"] == 121, we
    assert we.get("codeName") == "DocumentValidationFailure", we
    assert we["errmsg"].startswith(f"docguard: design rule {rule}"), we
    assert_err_info(we["errInfo"], rule=rule, **kw)


def assert_one_warn_line(proxy: RulesProxy, since: int, ns: str, *, rule, field, measured, bound,
                         command, statement=None, suppressed_later=False):
    """Exactly one violation line for ns (rate limited per rule and namespace)."""
    lines = [v for v in proxy.wait_violations(since, 1, ns=ns) if v["rule"] == rule]
    assert len(lines) == 1, proxy.violations(since, ns)
    v = lines[0]
    assert v["level"] == "warning", v
    assert v["rule"] == rule and v["action"] == "warn", v
    assert v["ns"] == ns, v
    assert v["field"] == field, v
    assert float(v["measured"]) == pytest.approx(measured), v
    assert float(v["bound"]) == pytest.approx(bound), v
    assert v["command"] == command, v
    if statement is not None:
        assert v["statement"] == str(statement), v
    return v


def assert_no_values_logged(proxy: RulesProxy, *values: str):
    text = proxy.log_text()
    for value in values:
        assert value not in text, f"document value {value!r} leaked into docguard's log"


def wait_until(fn, timeout=5.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


# ================================================================ warn mode

def test_warn_max_document_bytes(warn_dg, wclient, upstream, dbname):
    s = secret()
    ns = f"{dbname}.size"
    big = {"_id": 2, "payload": s + "x" * 3000}
    docs = [{"_id": 1, "v": s}, big, {"_id": 3, "v": 3}]
    mark = warn_dg.log_mark()
    reply = assert_same_reply(wclient[dbname], upstream[dbname + "_direct"],
                              SON([("insert", "size"), ("documents", docs)]))
    assert reply["n"] == 3 and "writeErrors" not in reply
    assert held(upstream, dbname, "size") == docs
    assert_one_warn_line(warn_dg, mark, ns, rule="max_document_bytes", field="-",
                         measured=len(bson.encode(big)), bound=KiB2, command="insert", statement=1)
    assert warn_dg.violations_metric(dbname, "size", "max_document_bytes", "warn") == 1
    assert warn_dg.violations_metric(dbname, "size", "max_document_bytes", "block") == 0
    assert_no_values_logged(warn_dg, s)


def test_warn_max_array_length(warn_dg, wclient, upstream, dbname):
    s = secret()
    ns = f"{dbname}.arr"
    c = wclient[dbname].arr
    mark = warn_dg.log_mark()
    r = c.insert_many([{"_id": 1, "a": {"b": [s, 2, 3, 4]}}, {"_id": 2, "a": [1, 2, 3]}])
    assert r.inserted_ids == [1, 2]
    u = c.update_one({"_id": 2}, {"$set": {"a": [s, 2, 3, 4, 5]}})
    assert (u.matched_count, u.modified_count) == (1, 1)
    assert held(upstream, dbname, "arr") == [{"_id": 1, "a": {"b": [s, 2, 3, 4]}},
                                             {"_id": 2, "a": [s, 2, 3, 4, 5]}]
    # two violations, one log line (the second is rate limited), both counted
    assert_one_warn_line(warn_dg, mark, ns, rule="max_array_length", field="a.b", measured=4,
                         bound=3, command="insert", statement=0)
    assert warn_dg.violations_metric(dbname, "arr", "max_array_length", "warn") == 2
    assert_no_values_logged(warn_dg, s)


def test_warn_array_length_per_path(warn_dg, wclient, upstream, dbname):
    s = secret()
    ns = f"{dbname}.paths"
    c = wclient[dbname].paths
    mark = warn_dg.log_mark()
    doc = {"_id": 1, "variants": [{"tags": [s]}, {"tags": [s, "b", "c"]}], "reviews": [s]}
    assert c.insert_one(doc).inserted_id == 1
    # reviews: 2 -> $each of 3 elements passes it on its own
    u = c.update_one({"_id": 1}, {"$push": {"reviews": {"$each": [s, "y", "z"]}}})
    assert u.modified_count == 1
    assert held(upstream, dbname, "paths") == [
        {"_id": 1, "variants": [{"tags": [s]}, {"tags": [s, "b", "c"]}],
         "reviews": [s, s, "y", "z"]}]
    assert_one_warn_line(warn_dg, mark, ns, rule="array_length", field="variants.tags",
                         measured=3, bound=2, command="insert", statement=0)
    assert warn_dg.violations_metric(dbname, "paths", "array_length", "warn") == 2
    assert_no_values_logged(warn_dg, s)


def test_warn_require_push_slice(warn_dg, wclient, upstream, dbname):
    s = secret()
    ns = f"{dbname}.push"
    c = wclient[dbname].push
    c.insert_one({"_id": 1, "tags": []})
    mark = warn_dg.log_mark()
    d = wclient[dbname]
    # replies untouched: same update commands directly against FerretDB on a copy
    upstream[dbname + "_direct"].push.insert_one({"_id": 1, "tags": []})
    for upd in ({"$push": {"tags": s}},                                      # violation, 1
                {"$addToSet": {"tags": {"$each": ["x", s + "y"]}}},           # violation, 2
                {"$push": {"tags": {"$each": ["a", "b", "c"], "$slice": -3}}}):  # capped: fine
        r = assert_same_reply(d, upstream[dbname + "_direct"],
                              SON([("update", "push"),
                                   ("updates", [{"q": {"_id": 1}, "u": upd}])]))
        assert (r["n"], r["nModified"]) == (1, 1)
    # (FerretDB 1.24 ignores $slice in $push: compare with what it does directly)
    assert held(upstream, dbname, "push") == held(upstream, dbname + "_direct", "push")
    assert held(upstream, dbname, "push")[0]["tags"][-3:] == ["a", "b", "c"]
    v = assert_one_warn_line(warn_dg, mark, ns, rule="require_push_slice", field="tags",
                             measured=1, bound=0, command="update", statement=0)
    assert v["match"] == "*.push"
    assert warn_dg.violations_metric(dbname, "push", "require_push_slice", "warn") == 2
    assert_no_values_logged(warn_dg, s)


def test_warn_max_nesting_depth(warn_dg, wclient, upstream, dbname):
    s = secret()
    ns = f"{dbname}.nest"
    c = wclient[dbname].nest
    mark = warn_dg.log_mark()
    ok = {"_id": 1, "a": {"b": {"c": s}}}                 # depth 3 (top level is 1)
    deep = {"_id": 2, "a": {"b": {"c": {"d": {"e": s}}}}}  # depth 5
    r = c.insert_many([ok, deep])
    assert r.inserted_ids == [1, 2]
    assert held(upstream, dbname, "nest") == [ok, deep]
    assert_one_warn_line(warn_dg, mark, ns, rule="max_nesting_depth", field="-", measured=5,
                         bound=4, command="insert", statement=1)
    assert warn_dg.violations_metric(dbname, "nest", "max_nesting_depth", "warn") == 1
    assert_no_values_logged(warn_dg, s)


def _lookup_reads(client, upstream, dbname, coll):
    """2 plain reads then 3 reads with $lookup: the ratio passes 0.5 (after >= 4 reads) only on
    the last one (3/5). Returns the errors of the three $lookup aggregates."""
    c = client[dbname][coll]
    assert c.find_one({"k": 1}) is None
    assert c.count_documents({}) == 0
    errors = []
    for _ in range(3):
        try:
            list(c.aggregate([{"$match": {}}, LOOKUP]))
            errors.append(None)
        except OperationFailure as e:
            errors.append(e)
    return errors


def _ferret_lookup_error(upstream, dbname, coll):
    try:
        list(upstream[dbname + "_direct"][coll].aggregate([{"$match": {}}, LOOKUP]))
        return None
    except OperationFailure as e:
        return e


def test_warn_max_lookup_ratio(warn_dg, wclient, upstream, dbname):
    ns = f"{dbname}.joins"
    mark = warn_dg.log_mark()
    direct = _ferret_lookup_error(upstream, dbname, "joins")
    errors = _lookup_reads(wclient, upstream, dbname, "joins")
    # warn: every read is forwarded, so each gets exactly what FerretDB answers itself
    for e in errors:
        if direct is None:
            assert e is None
        else:
            assert e is not None and e.code == direct.code and e.code != 121, e
    assert_one_warn_line(warn_dg, mark, ns, rule="max_lookup_ratio", field="-", measured=0.6,
                         bound=0.5, command="aggregate")
    assert warn_dg.violations_metric(dbname, "joins", "max_lookup_ratio", "warn") == 1
    assert warn_dg.metric("docguard_lookup_total", db=dbname, collection="joins") == 3


@pytest.mark.parametrize("proxy", ["warn", "block"])
def test_tracked_array_length_warns(request, proxy, upstream, dbname):
    """The per-document tracker: a $push taking a known document past its bound is warned about,
    in block mode too (the tracker can be stale, so it never blocks)."""
    dg: RulesProxy = request.getfixturevalue(f"{proxy}_dg")
    client = request.getfixturevalue(f"{proxy[0]}client")
    s = secret()
    ns = f"{dbname}.tracked"
    c = client[dbname].tracked
    mark = dg.log_mark()
    c.insert_one({"_id": 1, "items": [s, 2, 3]})
    assert c.update_one({"_id": 1}, {"$push": {"items": {"$each": [4, 5]}}}).modified_count == 1
    assert dg.violations(mark, ns) == []          # 5 elements: at the bound, not past it
    assert c.update_one({"_id": 1}, {"$push": {"items": 6}}).modified_count == 1
    assert held(upstream, dbname, "tracked") == [{"_id": 1, "items": [s, 2, 3, 4, 5, 6]}]
    assert_one_warn_line(dg, mark, ns, rule="tracked_array_length", field="items", measured=6,
                         bound=5, command="update", statement=0)
    assert dg.violations_metric(dbname, "tracked", "tracked_array_length", "warn") == 1
    assert dg.violations_metric(dbname, "tracked", "tracked_array_length", "block") == 0
    assert_no_values_logged(dg, s)


# ================================================================ block mode: inserts

def _arr_docs():
    return [{"_id": 0, "a": [1]}, {"_id": 1, "a": []}, {"_id": 2, "a": [1, 2, 3, 4]},
            {"_id": 3, "a": [1, 2, 3]}, {"_id": 4, "x": {"a": [1, 2, 3, 4, 5]}}]


def test_block_insert_many_ordered(block_dg, bclient, upstream, dbname):
    with pytest.raises(BulkWriteError) as ei:
        bclient[dbname].arr.insert_many(_arr_docs(), ordered=True)
    d = ei.value.details
    assert len(d["writeErrors"]) == 1, d
    assert_write_error(d["writeErrors"][0], index=2, rule="max_array_length", match="*.arr",
                       field="a", measured=4, bound=3, failing_id=2)
    assert d["nInserted"] == 2
    assert held_ids(upstream, dbname, "arr") == ["0", "1"]
    assert block_dg.violations_metric(dbname, "arr", "max_array_length", "block") >= 1


def test_block_insert_many_unordered(block_dg, bclient, upstream, dbname):
    with pytest.raises(BulkWriteError) as ei:
        bclient[dbname].arr.insert_many(_arr_docs(), ordered=False)
    d = ei.value.details
    assert [e["index"] for e in d["writeErrors"]] == [2, 4], d
    assert_write_error(d["writeErrors"][0], index=2, rule="max_array_length", match="*.arr",
                       field="a", measured=4, bound=3, failing_id=2)
    assert_write_error(d["writeErrors"][1], index=4, rule="max_array_length", match="*.arr",
                       field="x.a", measured=5, bound=3, failing_id=4)
    assert d["nInserted"] == 3
    assert held(upstream, dbname, "arr") == [d for d in _arr_docs() if d["_id"] in (0, 1, 3)]
    assert block_dg.violations_metric(dbname, "arr", "max_array_length", "block") == 2
    assert block_dg.violations_metric(dbname, "arr", "max_array_length", "warn") == 0


def test_block_insert_many_upstream_error_mixed(bclient, upstream, dbname):
    """An upstream duplicate-key error and a docguard violation in one unordered batch: both
    reported, with the client's indices."""
    upstream[dbname].arr.insert_one({"_id": 1})
    docs = [{"_id": 0}, {"_id": 1}, {"_id": 2, "a": [1, 2, 3, 4]}, {"_id": 3}]
    with pytest.raises(BulkWriteError) as ei:
        bclient[dbname].arr.insert_many(docs, ordered=False)
    d = ei.value.details
    errs = {e["index"]: e for e in d["writeErrors"]}
    assert sorted(errs) == [1, 2], d
    assert errs[1]["code"] == 11000
    assert_write_error(errs[2], index=2, rule="max_array_length", match="*.arr", field="a",
                       measured=4, bound=3, failing_id=2)
    assert d["nInserted"] == 2
    assert held_ids(upstream, dbname, "arr") == ["0", "1", "3"]


BIG = "y" * 3000
INSERT_CASES = {
    "size": ("size", {"_id": "d", "p": BIG}, "max_document_bytes", "*.size", "",
             len(bson.encode({"_id": "d", "p": BIG})), KiB2),
    "arr-nested": ("arr", {"_id": "d", "m": {"n": {"a": [1, 2, 3, 4]}}}, "max_array_length",
                   "*.arr", "m.n.a", 4, 3),
    "path-reviews": ("paths", {"_id": "d", "reviews": [1, 2, 3]}, "array_length", "*.paths",
                     "reviews", 3, 2),
    "path-variants.tags": ("paths", {"_id": "d", "variants": [{"tags": [1]}, {"tags": [1, 2, 3]}]},
                           "array_length", "*.paths", "variants.tags", 3, 2),
    "nest": ("nest", {"_id": "d", "a": {"b": {"c": {"d": {"e": 1}}}}}, "max_nesting_depth",
             "*.nest", "", 5, 4),
}


@pytest.mark.parametrize("case", sorted(INSERT_CASES))
def test_block_insert_one_each_rule(case, block_dg, bclient, upstream, dbname):
    coll, doc, rule, match, field, measured, bound = INSERT_CASES[case]
    ok = {"_id": "ok"}
    bclient[dbname][coll].insert_one(ok)
    mark = block_dg.log_mark()
    with pytest.raises(WriteError) as ei:
        bclient[dbname][coll].insert_one(copy.deepcopy(doc))
    e = ei.value
    assert e.code == 121
    assert_write_error(e.details, index=0, rule=rule, match=match, field=field, measured=measured,
                       bound=bound, failing_id="d")
    assert held(upstream, dbname, coll) == [ok]
    assert block_dg.violations_metric(dbname, coll, rule, "block") == 1
    v = block_dg.wait_violations(mark, 1, ns=f"{dbname}.{coll}")
    assert len(v) == 1 and v[0]["action"] == "block" and v[0]["rule"] == rule, v


# ================================================================ block mode: updates

def test_block_update_one_and_many(block_dg, bclient, upstream, dbname):
    c = bclient[dbname].arr
    base = [{"_id": 1, "a": [1], "k": 1}, {"_id": 2, "a": [1], "k": 1}]
    c.insert_many(copy.deepcopy(base))
    with pytest.raises(WriteError) as ei:
        c.update_one({"_id": 1}, {"$set": {"a": [1, 2, 3, 4]}})
    assert ei.value.code == 121
    assert_write_error(ei.value.details, index=0, rule="max_array_length", match="*.arr",
                       field="a", measured=4, bound=3, failing_id=1)
    with pytest.raises(WriteError) as ei:
        c.update_many({"k": 1}, {"$set": {"b": [1, 2, 3, 4]}})
    assert_write_error(ei.value.details, index=0, rule="max_array_length", match="*.arr",
                       field="b", measured=4, bound=3)
    # upserts that violate create nothing
    with pytest.raises(WriteError):
        c.update_one({"k": 9}, {"$set": {"a": [1, 2, 3, 4]}}, upsert=True)
    with pytest.raises(WriteError):
        c.update_many({"k": 10}, {"$push": {"a": {"$each": [1, 2, 3, 4]}}}, upsert=True)
    # allowed updates still go through
    assert c.update_many({"k": 1}, {"$set": {"a": [7, 8]}}).modified_count == 2
    r = c.update_one({"k": 11}, {"$set": {"a": [1]}}, upsert=True)
    assert r.upserted_id is not None
    got = held(upstream, dbname, "arr")
    assert got[:2] == [{"_id": 1, "a": [7, 8], "k": 1}, {"_id": 2, "a": [7, 8], "k": 1}]
    assert len(got) == 3 and got[2]["k"] == 11 and got[2]["a"] == [1]
    assert block_dg.violations_metric(dbname, "arr", "max_array_length", "block") == 4


def test_block_require_push_slice(block_dg, bclient, upstream, dbname):
    c = bclient[dbname].push
    c.insert_one({"_id": 1, "tags": ["t"]})
    cases = [({"$push": {"tags": "u"}}, 1),
             ({"$push": {"tags": {"$each": ["u", "v"]}}}, 2),
             ({"$addToSet": {"tags": "u"}}, 1),
             ({"$addToSet": {"tags": {"$each": ["u", "v", "w"]}}}, 3)]
    for upd, added in cases:
        with pytest.raises(WriteError) as ei:
            c.update_one({"_id": 1}, upd)
        assert ei.value.code == 121
        assert_write_error(ei.value.details, index=0, rule="require_push_slice", match="*.push",
                           field="tags", measured=added, bound=0, failing_id=1)
    assert held(upstream, dbname, "push") == [{"_id": 1, "tags": ["t"]}]
    # with $slice it is fine (FerretDB 1.24 ignores the $slice itself: compare with it directly)
    capped = {"$push": {"tags": {"$each": ["u", "v"], "$slice": -2}}}
    assert c.update_one({"_id": 1}, capped).modified_count == 1
    upstream[dbname + "_direct"].push.insert_one({"_id": 1, "tags": ["t"]})
    upstream[dbname + "_direct"].push.update_one({"_id": 1}, capped)
    assert held(upstream, dbname, "push") == held(upstream, dbname + "_direct", "push")
    assert block_dg.violations_metric(dbname, "push", "require_push_slice", "block") == 4


def test_block_replace_one(block_dg, bclient, upstream, dbname):
    c = bclient[dbname].size
    c.insert_one({"_id": 1, "v": 1})
    with pytest.raises(WriteError) as ei:
        c.replace_one({"_id": 1}, {"v": 2, "p": BIG})
    assert ei.value.code == 121
    assert_write_error(ei.value.details, index=0, rule="max_document_bytes", match="*.size",
                       field="", measured=len(bson.encode({"v": 2, "p": BIG})), bound=KiB2,
                       failing_id=1)
    with pytest.raises(WriteError):
        c.replace_one({"_id": 2}, {"v": 2, "p": BIG}, upsert=True)
    assert held(upstream, dbname, "size") == [{"_id": 1, "v": 1}]
    assert c.replace_one({"_id": 1}, {"v": 3}).modified_count == 1
    assert c.replace_one({"_id": 3}, {"v": 4}, upsert=True).upserted_id == 3
    assert held(upstream, dbname, "size") == [{"_id": 1, "v": 3}, {"_id": 3, "v": 4}]


def test_block_update_batch_ordered_and_unordered(bclient, upstream, dbname):
    """Several statements in one update command: ordered stops at the first violation."""
    c = bclient[dbname].arr
    c.insert_many([{"_id": i, "a": []} for i in range(3)])
    ops = [UpdateOne({"_id": 0}, {"$set": {"a": [1]}}),
           UpdateOne({"_id": 1}, {"$set": {"a": [1, 2, 3, 4]}}),
           UpdateOne({"_id": 2}, {"$set": {"a": [2]}})]
    with pytest.raises(BulkWriteError) as ei:
        c.bulk_write(ops, ordered=True)
    d = ei.value.details
    assert [e["index"] for e in d["writeErrors"]] == [1]
    assert d["nModified"] == 1 and d["nMatched"] == 1
    assert held(upstream, dbname, "arr") == [{"_id": 0, "a": [1]}, {"_id": 1, "a": []},
                                             {"_id": 2, "a": []}]
    with pytest.raises(BulkWriteError) as ei:
        c.bulk_write([UpdateOne({"_id": 0}, {"$set": {"a": [5]}})] + ops[1:], ordered=False)
    d = ei.value.details
    assert [e["index"] for e in d["writeErrors"]] == [1]
    assert d["nModified"] == 2
    assert held(upstream, dbname, "arr") == [{"_id": 0, "a": [5]}, {"_id": 1, "a": []},
                                             {"_id": 2, "a": [2]}]


# ================================================================ block mode: findAndModify

def test_block_find_one_and_update(block_dg, bclient, upstream, dbname):
    c = bclient[dbname].arr
    c.insert_one({"_id": 1, "a": [1]})
    with pytest.raises(OperationFailure) as ei:
        c.find_one_and_update({"_id": 1}, {"$set": {"a": [1, 2, 3, 4]}})
    e = ei.value
    assert e.code == 121
    assert e.details["codeName"] == "DocumentValidationFailure"
    assert e.details["errmsg"].startswith("docguard: design rule max_array_length")
    assert_err_info(e.details["errInfo"], rule="max_array_length", match="*.arr", field="a",
                    measured=4, bound=3, failing_id=1)
    with pytest.raises(OperationFailure) as ei:
        c.find_one_and_update({"_id": 5}, {"$set": {"a": [1, 2, 3, 4]}}, upsert=True)
    assert ei.value.code == 121
    assert held(upstream, dbname, "arr") == [{"_id": 1, "a": [1]}]
    assert c.find_one_and_update({"_id": 1}, {"$set": {"a": [2]}})["a"] == [1]
    assert held(upstream, dbname, "arr") == [{"_id": 1, "a": [2]}]
    # require_push_slice through findAndModify
    p = bclient[dbname].push
    p.insert_one({"_id": 1, "tags": []})
    with pytest.raises(OperationFailure) as ei:
        p.find_one_and_update({"_id": 1}, {"$addToSet": {"tags": {"$each": ["a", "b"]}}})
    assert ei.value.code == 121
    assert_err_info(ei.value.details["errInfo"], rule="require_push_slice", match="*.push",
                    field="tags", measured=2, bound=0, failing_id=1)
    assert held(upstream, dbname, "push") == [{"_id": 1, "tags": []}]


def test_block_find_one_and_replace(bclient, upstream, dbname):
    c = bclient[dbname].nest
    c.insert_one({"_id": 1, "v": 1})
    with pytest.raises(OperationFailure) as ei:
        c.find_one_and_replace({"_id": 1}, {"a": {"b": {"c": {"d": {"e": 1}}}}})
    assert ei.value.code == 121
    assert ei.value.details["codeName"] == "DocumentValidationFailure"
    assert_err_info(ei.value.details["errInfo"], rule="max_nesting_depth", match="*.nest",
                    field="", measured=5, bound=4, failing_id=1)
    assert held(upstream, dbname, "nest") == [{"_id": 1, "v": 1}]
    assert c.find_one_and_replace({"_id": 1}, {"v": 2}) == {"_id": 1, "v": 1}
    assert held(upstream, dbname, "nest") == [{"_id": 1, "v": 2}]


# ================================================================ block mode: bulk_write

def test_block_bulk_write_mixed_unordered(block_dg, bclient, upstream, dbname):
    c = bclient[dbname].arr
    upstream[dbname].arr.insert_many([{"_id": "d1"}, {"_id": "u1", "a": []}])
    ops = [InsertOne({"_id": "i0", "a": [1]}),                                    # 0
           UpdateOne({"_id": "u1"}, {"$set": {"a": [1, 2]}}),                     # 1
           InsertOne({"_id": "i2", "a": [1, 2, 3, 4]}),                           # 2 blocked
           DeleteOne({"_id": "d1"}),                                              # 3
           InsertOne({"_id": "i4"}),                                              # 4
           UpdateOne({"_id": "u1"}, {"$set": {"b": [1, 2, 3, 4, 5]}}),            # 5 blocked
           ReplaceOne({"_id": "r6"}, {"a": [1, 2, 3, 4]}, upsert=True),           # 6 blocked
           UpdateOne({"_id": "u7"}, {"$set": {"x": 1}}, upsert=True)]             # 7
    with pytest.raises(BulkWriteError) as ei:
        c.bulk_write(ops, ordered=False)
    d = ei.value.details
    assert [e["index"] for e in d["writeErrors"]] == [2, 5, 6], d
    assert_write_error(d["writeErrors"][0], index=2, rule="max_array_length", match="*.arr",
                       field="a", measured=4, bound=3, failing_id="i2")
    assert_write_error(d["writeErrors"][1], index=5, rule="max_array_length", match="*.arr",
                       field="b", measured=5, bound=3, failing_id="u1")
    assert_write_error(d["writeErrors"][2], index=6, rule="max_array_length", match="*.arr",
                       field="a", measured=4, bound=3, failing_id="r6")
    assert (d["nInserted"], d["nModified"], d["nRemoved"], d["nUpserted"]) == (2, 1, 1, 1), d
    # (the upserted index is not checked: FerretDB 1.24 reports it wrongly)
    assert held(upstream, dbname, "arr") == [{"_id": "i0", "a": [1]}, {"_id": "i4"},
                                             {"_id": "u1", "a": [1, 2]}, {"_id": "u7", "x": 1}]
    assert block_dg.violations_metric(dbname, "arr", "max_array_length", "block") == 3


def test_block_bulk_write_mixed_ordered(bclient, upstream, dbname):
    c = bclient[dbname].arr
    upstream[dbname].arr.insert_many([{"_id": "d1"}, {"_id": "u1", "a": []}])
    ops = [InsertOne({"_id": "i0"}),                                              # 0
           UpdateOne({"_id": "u1"}, {"$set": {"a": [1]}}),                        # 1
           DeleteOne({"_id": "d1"}),                                              # 2
           UpdateOne({"_id": "u1"}, {"$push": {"a": {"$each": [1, 2, 3, 4]}}}),   # 3 blocked
           InsertOne({"_id": "i4"}),                                              # 4 not run
           UpdateOne({"_id": "u1"}, {"$set": {"z": 1}})]                          # 5 not run
    with pytest.raises(BulkWriteError) as ei:
        c.bulk_write(ops, ordered=True)
    d = ei.value.details
    assert len(d["writeErrors"]) == 1, d
    assert_write_error(d["writeErrors"][0], index=3, rule="max_array_length", match="*.arr",
                       field="a", measured=4, bound=3, failing_id="u1")
    assert (d["nInserted"], d["nModified"], d["nRemoved"]) == (1, 1, 1), d
    assert held(upstream, dbname, "arr") == [{"_id": "i0"}, {"_id": "u1", "a": [1]}]


# ================================================================ block mode: w:0

def _w0(client, dbname, coll):
    return client[dbname].get_collection(coll, write_concern=WriteConcern(w=0))


def _settle(upstream, dbname, coll, expected_ids):
    """w:0 gives no reply: wait (bounded) until the allowed documents are there."""
    wait_until(lambda: held_ids(upstream, dbname, coll) == expected_ids)
    return held_ids(upstream, dbname, coll)


def test_block_w0_dropped(block_dg, bclient, upstream, dbname):
    c = _w0(bclient, dbname, "arr")
    c.insert_one({"_id": "bad", "a": [1, 2, 3, 4]})            # dropped entirely
    c.insert_many([{"_id": "o0"}, {"_id": "o1", "a": [1, 2, 3, 4]}, {"_id": "o2"}],
                  ordered=True)                                 # only o0 forwarded
    c.insert_many([{"_id": "u0"}, {"_id": "u1", "a": [1, 2, 3, 4]}, {"_id": "u2"}],
                  ordered=False)                                # u0, u2 forwarded
    # an acknowledged write behind them on the same client, then the upstream's view
    bclient[dbname].arr.insert_one({"_id": "zz-marker"})
    ids = _settle(upstream, dbname, "arr", ["o0", "u0", "u2", "zz-marker"])
    assert ids == ["o0", "u0", "u2", "zz-marker"]
    assert block_dg.wait_metric(3, "docguard_violations_total", db=dbname, collection="arr",
                                rule="max_array_length", action="block") == 3
    # an update that violates under w:0 is dropped too
    c.update_one({"_id": "o0"}, {"$set": {"a": [1, 2, 3, 4]}})
    assert block_dg.wait_metric(4, "docguard_violations_total", db=dbname, collection="arr",
                                rule="max_array_length", action="block") == 4
    bclient[dbname].arr.update_one({"_id": "zz-marker"}, {"$set": {"m": 1}})
    assert upstream[dbname].arr.find_one({"_id": "o0"}) == {"_id": "o0"}
    assert block_dg.alive()


# ================================================================ block mode: $lookup reads

def test_block_lookup_ratio_explicit_rule_blocks_read(block_dg, bclient, upstream, dbname):
    ns = f"{dbname}.joins"
    mark = block_dg.log_mark()
    direct = _ferret_lookup_error(upstream, dbname, "joins")
    errors = _lookup_reads(bclient, upstream, dbname, "joins")
    for e in errors[:2]:  # under the ratio: forwarded, FerretDB's own answer
        assert (e is None) if direct is None else (e is not None and e.code == direct.code), e
    e = errors[2]
    assert e is not None and e.code == 121, e
    assert e.details["codeName"] == "DocumentValidationFailure"
    assert e.details["errmsg"].startswith("docguard: design rule max_lookup_ratio")
    assert_err_info(e.details["errInfo"], rule="max_lookup_ratio", match="*.joins", field="",
                    measured=0.6, bound=0.5)
    v = block_dg.wait_violations(mark, 1, ns=ns)
    assert len(v) == 1 and v[0]["action"] == "block", v
    assert block_dg.violations_metric(dbname, "joins", "max_lookup_ratio", "block") == 1


def test_block_mode_lookup_ratio_without_explicit_action_only_warns(block_dg, bclient, upstream,
                                                                    dbname):
    direct = _ferret_lookup_error(upstream, dbname, "joins_default")
    errors = _lookup_reads(bclient, upstream, dbname, "joins_default")
    for e in errors:
        assert (e is None) if direct is None else (e is not None and e.code == direct.code), e
    assert block_dg.violations_metric(dbname, "joins_default", "max_lookup_ratio", "warn") == 1
    assert block_dg.violations_metric(dbname, "joins_default", "max_lookup_ratio", "block") == 0


# ================================================================ reload and --check-config

def test_reload_warn_to_block_and_bad_file(env, upstream, dbname):
    dg = _start(env, upstream, "warn", name=f"reload-{uuid.uuid4().hex[:6]}")
    try:
        c = dg.client()[dbname].arr
        reloads = lambda r: dg.metric("docguard_config_reloads_total", result=r)  # noqa: E731
        ok0, bad0 = reloads("success"), reloads("failure")
        c.insert_one({"_id": 1, "a": [1, 2, 3, 4]})          # warn: written
        assert held_ids(upstream, dbname, "arr") == ["1"]
        assert dg.violations_metric(dbname, "arr", "max_array_length", "warn") == 1

        line = dg.reload(rules_config("block"))
        assert line is not None and "reloaded rules" in line["msg"], line
        assert reloads("success") == ok0 + 1
        with pytest.raises(WriteError) as ei:
            c.insert_one({"_id": 2, "a": [1, 2, 3, 4]})
        assert ei.value.code == 121
        assert held_ids(upstream, dbname, "arr") == ["1"]
        # counters survive the reload
        assert dg.violations_metric(dbname, "arr", "max_array_length", "warn") == 1
        assert dg.violations_metric(dbname, "arr", "max_array_length", "block") == 1

        bad_text = rules_config("block").replace("max_array_length: 3", "max_array_length: lots")
        line = dg.reload(bad_text)
        assert line is not None and "failed" in line["msg"] and "keeping" in line["msg"], line
        assert "max_array_length" in line["msg"] and str(dg.config_path) in line["msg"], line
        assert reloads("failure") == bad0 + 1
        assert reloads("success") == ok0 + 1
        with pytest.raises(WriteError):                       # old (block) rules still apply
            c.insert_one({"_id": 3, "a": [1, 2, 3, 4]})
        c.insert_one({"_id": 4, "a": [1]})
        assert held_ids(upstream, dbname, "arr") == ["1", "4"]
        assert dg.violations_metric(dbname, "arr", "max_array_length", "warn") == 1
        assert dg.violations_metric(dbname, "arr", "max_array_length", "block") == 2

        line = dg.reload(rules_config("warn"))                # and back again
        assert line is not None and "reloaded rules" in line["msg"], line
        c.insert_one({"_id": 5, "a": [1, 2, 3, 4]})
        assert held_ids(upstream, dbname, "arr") == ["1", "4", "5"]
        assert dg.violations_metric(dbname, "arr", "max_array_length", "warn") == 2
        assert dg.alive()
    finally:
        dg.stop()


BAD_CONFIGS = {
    "bad-value": ('mode: warn\nrules:\n  - match: "a.b"\n    max_array_length: lots\n',
                  4, "rules[0].max_array_length"),
    "unknown-rule-key": ('rules:\n  - match: "a.b"\n    max_aray_length: 3\n',
                         3, "rules[0].max_aray_length"),
    "bad-mode": ("mode: sometimes\n", 1, "mode"),
    "missing-match": ("mode: block\nrules:\n  - max_array_length: 3\n", 3, "rules[0].match"),
    "bad-window": ('rules:\n  - match: "a.b"\n    max_lookup_ratio: 0.5\n    lookup_window: soon\n',
                   4, "rules[0].lookup_window"),
    "bad-path-bound": ('rules:\n  - match: "a.b"\n    array_length: {reviews: -1}\n',
                       3, "rules[0].array_length.reviews"),
    "bad-size": ('rules:\n  - match: "a.b"\n    max_document_bytes: 2XB\n',
                 3, "rules[0].max_document_bytes"),
    "tracking-unknown": ("tracking:\n  bogus: 1\n", 2, "tracking.bogus"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_check_config_rejects_bad_file(case, tmp_path):
    text, line, key = BAD_CONFIGS[case]
    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    r = rules_harness.check_config(path)
    assert r.returncode != 0, (r.stdout, r.stderr)
    msg = r.stdout + r.stderr
    assert f"{path}:{line}" in msg, msg
    assert key in msg, msg


def test_check_config_accepts_good_files(tmp_path):
    for name, text in (("warn", rules_config("warn")), ("block", rules_config("block", "block"))):
        p = tmp_path / f"{name}.yaml"
        p.write_text(text)
        r = rules_harness.check_config(p)
        assert r.returncode == 0, (r.stdout, r.stderr)
    r = rules_harness.check_config(rules_harness.harness.REPO / "config" / "docguard.example.yaml")
    assert r.returncode == 0, (r.stdout, r.stderr)


# ================================================================ more block-mode shapes

def test_rules_combine_warn_under_block(block_dg, bclient, upstream, dbname):
    """A strict warn rule under a looser block rule: past the first it is warned and written,
    past both it is blocked, reported once by the block rule."""
    c = bclient[dbname].combo
    mark = block_dg.log_mark()
    c.insert_one({"_id": 1, "a": [1, 2, 3]})
    with pytest.raises(WriteError) as ei:
        c.insert_one({"_id": 2, "a": [1, 2, 3, 4, 5]})
    assert_write_error(ei.value.details, index=0, rule="max_array_length", match="*.combo",
                       field="a", measured=5, bound=4, failing_id=2)
    assert held_ids(upstream, dbname, "combo") == ["1"]
    assert block_dg.violations_metric(dbname, "combo", "max_array_length", "warn") == 1
    assert block_dg.violations_metric(dbname, "combo", "max_array_length", "block") == 1
    # one log line: rate limiting is per (rule, namespace), whatever the action
    v = block_dg.wait_violations(mark, 1, ns=f"{dbname}.combo")
    assert [(x["action"], x["bound"], x["measured"]) for x in v] == [("warn", "2", "3")], v


def test_block_insert_command_body_array(bclient, upstream, dbname):
    """documents in the command body (db.command), not a kind-1 sequence."""
    docs = [{"_id": i, "a": [1, 2, 3, 4] if i in (1, 3) else [i]} for i in range(5)]
    r = bclient[dbname].command(SON([("insert", "arr"), ("documents", docs), ("ordered", False)]))
    assert r["ok"] == 1 and r["n"] == 3, r
    assert [(e["index"], e["code"], e["errInfo"]["failingDocumentId"])
            for e in r["writeErrors"]] == [(1, 121, 1), (3, 121, 3)], r
    r = bclient[dbname].command(SON([("insert", "arr"),
                                     ("documents", [{"_id": 10}, docs[1] | {"_id": 11}, {"_id": 12}])]))
    assert r["n"] == 1 and [e["index"] for e in r["writeErrors"]] == [1], r
    assert held_ids(upstream, dbname, "arr") == ["0", "10", "2", "4"]


@pytest.mark.parametrize("compressor", ["zlib", "snappy", "zstd"])
def test_block_with_wire_compression(compressor, block_dg, upstream, dbname):
    c = block_dg.client(compressors=compressor)[dbname].arr
    with pytest.raises(BulkWriteError) as ei:
        c.insert_many([{"_id": 0}, {"_id": 1, "a": [1, 2, 3, 4]}, {"_id": 2}], ordered=False)
    assert [e["index"] for e in ei.value.details["writeErrors"]] == [1]
    assert ei.value.details["writeErrors"][0]["code"] == 121
    with pytest.raises(OperationFailure) as ei:
        c.find_one_and_update({"_id": 0}, {"$set": {"a": [1, 2, 3, 4]}})
    assert ei.value.code == 121
    assert held(upstream, dbname, "arr") == [{"_id": 0}, {"_id": 2}]
    assert block_dg.metric("docguard_compressed_messages_total", compressor=compressor) > 0


def test_block_large_batch_indices(bclient, upstream, dbname):
    """Indices stay the client's in a 3000-document batch (several kind-1 sections' worth)."""
    bad = {7, 1500, 2999}
    docs = [{"_id": i, "a": [1, 2, 3, 4] if i in bad else [i], "p": "z" * 200} for i in range(3000)]
    with pytest.raises(BulkWriteError) as ei:
        bclient[dbname].arr.insert_many(docs, ordered=False)
    d = ei.value.details
    assert [e["index"] for e in d["writeErrors"]] == sorted(bad)
    assert [e["errInfo"]["failingDocumentId"] for e in d["writeErrors"]] == sorted(bad)
    assert d["nInserted"] == 3000 - len(bad)
    assert upstream[dbname].arr.count_documents({}) == 3000 - len(bad)
    assert upstream[dbname].arr.count_documents({"_id": {"$in": sorted(bad)}}) == 0


def test_tracker_not_grown_by_blocked_push(block_dg, bclient, upstream, dbname):
    """A $push that docguard blocks never reaches the document, so the per-document tracker must
    not count its elements: a later small $push is not past the bound."""
    c = bclient[dbname].tracked
    c.insert_one({"_id": 1, "items": [1, 2, 3]})
    with pytest.raises(WriteError) as ei:                 # 6 elements at once: array_length blocks
        c.update_one({"_id": 1}, {"$push": {"items": {"$each": [4, 5, 6, 7, 8, 9]}}})
    assert ei.value.details["errInfo"]["rule"] == "array_length"
    assert held(upstream, dbname, "tracked") == [{"_id": 1, "items": [1, 2, 3]}]
    before = block_dg.violations_metric(dbname, "tracked", "tracked_array_length", "warn")
    assert c.update_one({"_id": 1}, {"$push": {"items": 4}}).modified_count == 1   # 4 of 5
    assert held(upstream, dbname, "tracked") == [{"_id": 1, "items": [1, 2, 3, 4]}]
    after = block_dg.violations_metric(dbname, "tracked", "tracked_array_length", "warn")
    assert after == before, "a $push to 4 of 5 elements was warned as tracked_array_length"


def test_block_operator_upsert_document_size(bclient, upstream, dbname):
    c = bclient[dbname].size
    with pytest.raises(WriteError) as ei:
        c.update_one({"k": 1}, {"$set": {"p": BIG}}, upsert=True)
    assert ei.value.details["errInfo"]["rule"] == "max_document_bytes"
    assert held(upstream, dbname, "size") == []

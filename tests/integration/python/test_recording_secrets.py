"""Recording is safe on production traffic: every secret the redaction policy names is planted
through a recording docguard in front of a FerretDB with SCRAM users, in requests and in the
replies that carry it back, and no file of the recording holds any of them. Where FerretDB 1.24
lacks a command (applyOps, setParameter's LDAP, setClusterParameter, Queryable Encryption's
compaction), it answers with an error; the request is recorded all the same, and that request is
what the redaction must clean."""

from __future__ import annotations

import uuid
from pathlib import Path

import bson
import pymongo
import pytest

import harness
from harness import admin_call, body_of, read_packets, start_proxy

pytestmark = pytest.mark.proxy

MARK = uuid.uuid4().hex[:8]


def plant(name: str) -> str:
    return f"PLANT-{name}-{MARK}"


KEY_BYTES = bytes(range(96))  # a data key's material: 96 bytes, as the key vault stores it


@pytest.fixture(scope="module")
def prod(tmp_path_factory):
    work = tmp_path_factory.mktemp("secrets")
    fdb = harness.start_ferretdb(work / "prod", auth=True)
    yield work, f"mongodb://127.0.0.1:{fdb.ports['listen']}"
    fdb.stop()


def client_of(port: int) -> pymongo.MongoClient:
    return pymongo.MongoClient(f"mongodb://127.0.0.1:{port}", username=harness.AUTH_USER,
                               password=harness.AUTH_PASSWORD, authSource="admin",
                               authMechanism="SCRAM-SHA-256", appName="secrets")


def attempt(f, *args, **kw):
    """Runs a command FerretDB may refuse: the request is recorded either way."""
    try:
        return f(*args, **kw)
    except pymongo.errors.PyMongoError:
        return None


def workload(c: pymongo.MongoClient) -> list[str]:
    """Plants every secret; returns the texts that must not reach a file."""
    admin = c.admin
    secrets = [harness.AUTH_PASSWORD]
    for name in ("CREATE-PWD", "UPDATE-PWD"):
        secrets.append(plant(name))
    user = f"planted_{MARK}"
    admin.command("createUser", user, pwd=plant("CREATE-PWD"), roles=[])
    admin.command("updateUser", user, pwd=plant("UPDATE-PWD"))
    # usersInfo with credentials, and a read of the users collection: the server's stored keys
    # and salts (what an offline dictionary attack needs) come back in the replies.
    attempt(admin.command, "usersInfo", user, showCredentials=True)
    attempt(lambda: list(admin["system.users"].find({})))
    # mongorestore's path: users staged in admin.tempusers with their credentials.
    creds = {"SCRAM-SHA-256": {"iterationCount": 15000, "salt": plant("TEMP-SALT"),
                               "storedKey": plant("TEMP-STORED"), "serverKey": plant("TEMP-SERVER")}}
    secrets += [plant("TEMP-SALT"), plant("TEMP-STORED"), plant("TEMP-SERVER")]
    attempt(admin.tempusers.insert_one, {"_id": f"admin.{user}2", "user": f"{user}2",
                                         "db": "admin", "credentials": creds})
    attempt(lambda: list(admin.tempusers.find({})))
    # A password nested in applyOps, parameters, a cluster parameter, QE compaction tokens.
    attempt(admin.command, "applyOps", [{"op": "c", "ns": "admin.$cmd",
                                         "o": {"createUser": "nested", "pwd": plant("APPLY-PWD"),
                                               "roles": []}}])
    attempt(admin.command, "setParameter", 1, ldapQueryPassword=plant("LDAP"))
    attempt(admin.command, "setClusterParameter", {"custom": {"value": plant("CLUSTER")}})
    attempt(c.shop.command, "compactStructuredEncryptionData", "people",
            compactionTokens={"ssn": plant("QE-TOKEN")})
    secrets += [plant("APPLY-PWD"), plant("LDAP"), plant("CLUSTER"), plant("QE-TOKEN")]
    # The key vault: its documents written and read back.
    vault = c.encryption["__keyVault"]
    attempt(vault.insert_one, {"_id": bson.Binary(uuid.uuid4().bytes, 4),
                               "keyMaterial": bson.Binary(KEY_BYTES), "masterKey": {"provider": "local"},
                               "keyAltNames": [plant("VAULT-ALT")]})
    attempt(lambda: list(vault.find({})))
    secrets.append(plant("VAULT-ALT"))
    # A password inside a stage argument.
    attempt(lambda: list(c.shop.people.aggregate(
        [{"$match": {}}, {"$out": {"s3": {"bucket": "b", "region": "eu",
                                          "filename": f"s3://AKIA:{plant('S3')}@bucket/x"}}}])))
    secrets.append(plant("S3"))
    # The application's own secrets, and the user's own fields and namespaces.
    c.shop.people.insert_one({"name": "ann", "ssn": plant("SSN"), "card": {"number": plant("CARD"),
                              "brand": "visa"}, "password": plant("APP-PASSWORD"),
                              "apiSecret": plant("APP-SECRET"),
                              "upstream": f"mongodb://svc:{plant('URI-PWD')}@db.internal/"})
    assert c.shop.people.find_one({"name": "ann"})["card"]["brand"] == "visa"
    c.hr.salaries.insert_one({"who": "ann", "amount": plant("HR")})
    assert c.hr.salaries.find_one({"who": "ann"}) is not None
    secrets += [plant(n) for n in ("SSN", "CARD", "APP-PASSWORD", "APP-SECRET", "URI-PWD", "HR")]
    return secrets


def server_secrets(uri: str, user: str) -> list[bytes]:
    """The credentials FerretDB itself stores for `user`, read directly (not through docguard)."""
    found: list[bytes] = []
    with pymongo.MongoClient(uri, username=harness.AUTH_USER, password=harness.AUTH_PASSWORD,
                             authSource="admin") as c:
        info = attempt(c.admin.command, "usersInfo", user, showCredentials=True) or {}
        for u in info.get("users", []):
            for mech in (u.get("credentials") or {}).values():
                for key in ("salt", "storedKey", "serverKey"):
                    if isinstance(mech, dict) and mech.get(key):
                        found.append(str(mech[key]).encode())
    return found


def files_of(rec: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(rec.iterdir()) if p.is_file()}


def test_no_planted_secret_reaches_any_file(prod):
    work, uri = prod
    rec = work / "rec"
    dg = start_proxy(work / "dg", uri, f"""recording:
  enabled: true
  directory: '{rec}'
  redact: {{fields: [ssn, card.number], namespaces: ['hr.*']}}
""")
    try:
        with client_of(dg.ports["listen"]) as c:
            secrets = workload(c)
        code, status = admin_call(dg, "POST", "/recording/stop")
        assert code == 200 and status["state"] == "stopped", status
    finally:
        dg.stop()
    stored = server_secrets(uri, f"planted_{MARK}") + server_secrets(uri, harness.AUTH_USER)
    files = files_of(rec)
    assert any(n.endswith(".bin") for n in files) and "checksum.txt" in files
    leaks = [(s, name) for s in [x.encode() for x in secrets] + stored + [KEY_BYTES]
             for name, data in files.items() if s in data]
    assert not leaks, leaks
    # What is not secret is still there: the commands and the shape of the workload.
    names = [next(iter(body_of(p))) for p in read_packets(rec) if p.event == 0]
    for name in ("createUser", "updateUser", "insert", "find", "aggregate", "applyOps"):
        assert name in names, (name, names)
    people = [body_of(p) for p in read_packets(rec)
              if p.event == 1 and b"visa" in p.message]
    assert people, "the brand, not a secret, is recorded"
    print(f"{len(secrets) + len(stored) + 1} planted secrets, {len(files)} files, none found")


def test_authentication_replies_are_redacted_under_a_users_filter(prod):
    """With a users: filter the authentication's requests are left out (the user is not yet
    known), but the reply that completes it is recorded: redacted by its shape."""
    work, uri = prod
    rec = work / "rec-users"
    dg = start_proxy(work / "dg-users", uri, f"""recording:
  enabled: true
  directory: '{rec}'
  users: ['{harness.AUTH_USER}@admin']
""")
    try:
        for _ in range(2):
            with client_of(dg.ports["listen"]) as c:
                c.shop.command("ping")
                c.shop.people.find_one({})
        admin_call(dg, "POST", "/recording/stop")
    finally:
        dg.stop()
    steps = [body_of(p) for p in read_packets(rec) if p.event == 1 and p.opcode == 2013]
    steps = [b for b in steps if "conversationId" in b]
    assert steps, "the authentication's last reply is recorded"
    for b in steps:
        assert b.get("payload") in (None, "[redacted by docguard]"), b
    data = b"".join(files_of(rec).values())
    assert harness.AUTH_PASSWORD.encode() not in data
    assert b"v=" not in data  # a SCRAM server signature


def operator_probes(c: pymongo.MongoClient) -> list[str]:
    """The user's fields under update and query operator syntax: each planted value must stay out
    of the files whether FerretDB runs the statement or refuses it (the request is recorded
    either way)."""
    people = c.shop.cards_people
    people.insert_one({"_id": 1, "name": "bo", "cards": [{"number": plant("INSERT-NUMBER"),
                                                          "brand": "visa"}]})
    probes: list[str] = [plant("INSERT-NUMBER")]

    def probe(name: str, f, *args, **kw):
        probes.append(plant(name))
        attempt(f, *args, **kw)

    probe("POSITION", people.update_one, {"_id": 1}, {"$set": {"cards.0.number": plant("POSITION")}})
    probe("DOLLAR", people.update_one, {"_id": 1, "cards.brand": "visa"},
          {"$set": {"cards.$.number": plant("DOLLAR")}})
    probe("ALL", people.update_one, {"_id": 1}, {"$set": {"cards.$[].number": plant("ALL")}})
    probes.append(plant("FILTER"))
    probe("FILTERED", people.update_one, {"_id": 1},
          {"$set": {"cards.$[c].number": plant("FILTERED")}},
          array_filters=[{"c.number": plant("FILTER")}])
    probe("EACH", people.update_one, {"_id": 1},
          {"$push": {"cards": {"$each": [{"number": plant("EACH")}]}}})
    probe("ADDTOSET", people.update_one, {"_id": 1},
          {"$addToSet": {"cards": {"number": plant("ADDTOSET")}}})
    probe("PULL", people.update_one, {"_id": 1}, {"$pull": {"cards": {"number": plant("PULL")}}})
    probe("ONINSERT", people.update_one, {"_id": 2},
          {"$setOnInsert": {"cards": [{"number": plant("ONINSERT")}]}}, upsert=True)
    probe("ELEMMATCH", lambda: list(people.find(
        {"cards": {"$elemMatch": {"number": plant("ELEMMATCH")}}})))
    probe("MATCH", lambda: list(people.aggregate(
        [{"$match": {"cards.number": {"$in": [plant("MATCH")]}}}])))
    probe("FAM", people.find_one_and_update, {"cards.number": plant("FAM")},
          {"$set": {"brand": "kept"}})
    # Read back: the stored numbers come back in replies, redacted there too.
    list(people.find({}))
    return probes


def test_operator_syntax_and_key_collections_leave_nothing(prod):
    work, uri = prod
    rec = work / "rec-operators"
    dg = start_proxy(work / "dg-operators", uri, f"""recording:
  enabled: true
  directory: '{rec}'
  redact: {{fields: [ssn, cards.number], namespaces: ['hr.*']}}
""")
    try:
        with client_of(dg.ports["listen"]) as c:
            secrets = operator_probes(c)
            # The keys that sign $clusterTime: a read of them is recorded as its status only.
            attempt(lambda: list(c.admin["system.keys"].find({"purpose": plant("KEYS")})))
            secrets.append(plant("KEYS"))
            # A redacted namespace's cursor, read a document at a time: every getMore's reply.
            c.hr.payroll.insert_many([{"who": i, "amount": plant(f"PAY{i}")} for i in range(5)])
            assert len(list(c.hr.payroll.find({}, batch_size=1))) == 5
            attempt(lambda: list(c.shop.people.aggregate([{"$lookup": {
                "from": "payroll", "localField": "name", "foreignField": "who", "as": "pay"}}],
                batchSize=1)))
            secrets += [plant(f"PAY{i}") for i in range(5)]
            # A duplicate key on a redacted field: the server's message quotes the value.
            c.shop.uniq.create_index("ssn", unique=True)
            c.shop.uniq.insert_one({"ssn": plant("DUP-SSN")})
            with pytest.raises(pymongo.errors.DuplicateKeyError):
                c.shop.uniq.insert_one({"ssn": plant("DUP-SSN")})
            secrets.append(plant("DUP-SSN"))
        admin_call(dg, "POST", "/recording/stop")
    finally:
        dg.stop()
    packets = read_packets(rec)
    data = b"".join(files_of(rec).values())
    leaks = [s for s in secrets if s.encode() in data]
    assert not leaks, leaks
    keys = [p for p in packets if p.event == 0 and body_of(p).get("find") == "system.keys"]
    assert keys, "the find on admin.system.keys is recorded"
    assert set(body_of(keys[0])) <= {"find", "filter", "$db", "lsid", "$readPreference"}, \
        body_of(keys[0])
    assert body_of(keys[0]).get("filter") in (None, "[redacted by docguard]")
    getmores = [p for p in packets if p.event == 0 and "getMore" in body_of(p)]
    assert getmores, "the cursor of hr.payroll was read in batches"
    # What no rule names is kept: the brand the statements set.
    assert b"visa" in data


def test_status_only_replies_quote_no_stored_value(prod):
    """reply_documents: false keeps each reply's codes and counts, never the server's texts that
    quote stored values (a duplicate key's, a path error's)."""
    work, uri = prod
    rec = work / "rec-status"
    dg = start_proxy(work / "dg-status", uri, f"""recording:
  enabled: true
  directory: '{rec}'
  reply_documents: false
  redact: {{fields: [ssn]}}
""")
    try:
        with client_of(dg.ports["listen"]) as c:
            coll = c.shop.status_only
            coll.create_index("ssn", unique=True)
            coll.insert_one({"_id": 1, "ssn": plant("STATUS-DUP")})
            with pytest.raises(pymongo.errors.DuplicateKeyError):
                coll.insert_one({"_id": 2, "ssn": plant("STATUS-DUP")})
            # A field below a string: the server's error quotes the string.
            attempt(coll.update_one, {"_id": 1}, {"$set": {"ssn.part": 1}})
            list(coll.find({}))
        admin_call(dg, "POST", "/recording/stop")
    finally:
        dg.stop()
    data = b"".join(files_of(rec).values())
    assert plant("STATUS-DUP").encode() not in data
    replies = [body_of(p) for p in read_packets(rec) if p.event == 1 and p.opcode == 2013]
    errors = [e for r in replies for e in r.get("writeErrors", [])]
    assert any(e.get("code") == 11000 for e in errors), replies
    assert all(set(e) <= {"index", "code", "codeName"} or
               all(v == "[redacted by docguard]" for k, v in e.items()
                   if k not in ("index", "code", "codeName")) for e in errors), errors


def expression_probes(c: pymongo.MongoClient) -> list[str]:
    """A listed field's value compared, bound or returned under another name: in the request,
    and in replies that return it as `values`, a group's `_id`, a projected or pushed field."""
    people = c.shop.expr_people
    people.insert_many([{"_id": i, "ssn": plant(f"EXPR-SSN{i}"),
                         "cards": [{"number": plant(f"EXPR-CARD{i}"), "brand": "visa"}]}
                        for i in range(2)])
    secrets = [plant(f"EXPR-SSN{i}") for i in range(2)] + [plant(f"EXPR-CARD{i}") for i in range(2)]

    def probe(name: str, f, *args, **kw):
        secrets.append(plant(name))
        attempt(f, *args, **kw)

    probe("EXPR-EQ", lambda: list(people.find({"$expr": {"$eq": ["$ssn", plant("EXPR-EQ")]}})))
    probe("EXPR-IN", lambda: list(people.find(
        {"$expr": {"$in": [plant("EXPR-IN"), "$cards.number"]}})))
    probe("EXPR-ROOT", lambda: list(people.find(
        {"$expr": {"$eq": ["$$ROOT.ssn", plant("EXPR-ROOT")]}})))
    probe("EXPR-REGEX", lambda: list(people.find(
        {"$expr": {"$regexMatch": {"input": "$ssn", "regex": plant("EXPR-REGEX")}}})))
    probe("EXPR-GETFIELD", lambda: list(people.find(
        {"$expr": {"$eq": [{"$getField": "ssn"}, plant("EXPR-GETFIELD")]}})))
    probe("EXPR-LET", lambda: list(people.find({"$expr": {"$eq": ["$ssn", "$$v"]}},
                                                 let={"v": plant("EXPR-LET")})))
    probe("EXPR-WHERE", lambda: list(people.find({"$where": f"this.x == '{plant('EXPR-WHERE')}'"})))
    probe("EXPR-C", people.update_one, {"_id": 0}, [{"$set": {"ssn": "$$v"}}],
          let={"v": plant("EXPR-C")})
    # Replies that return the values under another name.
    attempt(people.distinct, "ssn")
    attempt(lambda: list(people.aggregate([{"$group": {"_id": "$ssn"}}])))
    attempt(lambda: list(people.aggregate([{"$project": {"x": "$ssn"}}])))
    attempt(lambda: list(people.aggregate([{"$sortByCount": "$ssn"}])))
    attempt(lambda: list(people.aggregate([{"$group": {"_id": None, "all": {"$push": "$ssn"}}}])))
    return secrets


def test_listed_fields_under_other_names_views_and_explains_leave_nothing(prod):
    work, uri = prod
    rec = work / "rec-expressions"
    dg = start_proxy(work / "dg-expressions", uri, f"""recording:
  enabled: true
  directory: '{rec}'
  redact: {{fields: [ssn, cards.number]}}
""")
    try:
        with client_of(dg.ports["listen"]) as c:
            secrets = expression_probes(c)
            # A view over a secret namespace, and an explain of a read of one.
            attempt(c.admin.command, {"create": f"v_{MARK}", "viewOn": "system.users",
                                      "pipeline": [{"$match": {"user": plant("VIEW")}}]})
            attempt(c.admin.command, {"explain": {"find": "system.users",
                                                  "filter": {"user": plant("EXPLAIN")}}})
            secrets += [plant("VIEW"), plant("EXPLAIN")]
            # Before the recording stops, what GET /recording counts is in the files.
            code, status = admin_call(dg, "GET", "/recording")
            assert code == 200 and status["packets"] > 0, status
            on_disk = sum(p.stat().st_size for p in rec.iterdir() if p.is_file())
            assert on_disk >= status["bytes"] > 0, (on_disk, status)
        admin_call(dg, "POST", "/recording/stop")
    finally:
        dg.stop()
    data = b"".join(files_of(rec).values())
    leaks = [s for s in secrets if s.encode() in data]
    assert not leaks, leaks
    names = [next(iter(body_of(p))) for p in read_packets(rec) if p.event == 0]
    for name in ("find", "aggregate", "distinct", "explain", "create"):
        assert name in names, (name, names)


def test_a_directory_others_may_write_in_is_refused(prod, tmp_path):
    work, uri = prod
    rec = tmp_path / "shared"
    rec.mkdir()
    rec.chmod(0o777)
    dg = start_proxy(work / "dg-shared", uri, "")
    try:
        code, body = admin_call(dg, "POST", "/recording/start", {"directory": str(rec)})
        assert code >= 400, (code, body)
        assert "writable by its group or others" in str(body), body
        assert list(rec.iterdir()) == []
    finally:
        dg.stop()

"""Rules scoped to apps and users, through docguard with PyMongo.

Apps: clients with different appNames against rules scoped by `apps:` — one app is blocked
(code 121, nothing written), one warned (written, logged, counted with its app label), one
untouched (no violation counted for it); commands are counted per app; many appNames give at most
tracking.max_apps + 1 label values, on violations and on commands alike. Users: a FerretDB with SCRAM users, a `users:` rule that blocks one user and not another,
over SCRAM-SHA-256 and SCRAM-SHA-1, and still after the driver authenticates a new connection.
"""

from __future__ import annotations

import json
import time
import uuid

import pymongo
import pytest
from pymongo.errors import BulkWriteError, WriteError

import harness
import rules_harness
from rules_harness import RulesProxy

pytestmark = pytest.mark.proxy

MAX_APPS = 8

APPS_CONFIG = f"""\
mode: warn
tracking:
  read_sample_rate: 0
  max_apps: {MAX_APPS}
rules:
  - match: "*.scoped"
    apps: [checkout]
    action: block
    max_array_length: 3
  - match: "*.scoped"
    apps: ["report*"]
    action: warn
    max_array_length: 3
  - match: "*.many"
    max_array_length: 1
"""

USERS_CONFIG = """\
mode: warn
tracking:
  read_sample_rate: 0
rules:
  - match: "*.scoped"
    users: ["loader@admin"]
    action: block
    max_array_length: 3
"""

LONG = {"tags": [1, 2, 3, 4, 5]}


def _start(upstream_uri, workdir, config, name) -> RulesProxy:
    try:
        return RulesProxy(upstream_uri, workdir, config, f"{name}-{uuid.uuid4().hex[:6]}")
    except rules_harness.harness.StartError as e:
        pytest.fail(f"could not start docguard with a scoped rules config: {e}")


def _label_values(proxy: RulesProxy, name: str, label: str) -> set[str]:
    out = set()
    for (n, labels), _ in proxy.metrics().items():
        if n == name:
            out.add(dict(labels).get(label, ""))
    return out


# ------------------------------------------------------------------------------------------- apps

@pytest.fixture(scope="module")
def apps_dg(env):
    if not env.proxied:
        pytest.skip("needs docguard (DOCGUARD_DIRECT=1)")
    p = _start(env.ferret_uri, env.workdir, APPS_CONFIG, "scopes-apps")
    yield p
    assert p.alive(), "docguard (apps) died during the tests"
    p.stop()


@pytest.fixture(scope="module")
def upstream(env):
    c = pymongo.MongoClient(env.ferret_uri, directConnection=True, serverSelectionTimeoutMS=10000)
    yield c
    c.close()


def test_one_app_blocked_one_warned_one_untouched(apps_dg, upstream):
    # One database per app: violation logs are rate-limited per namespace and rule.
    dbs = {app: "it_scopes_" + uuid.uuid4().hex[:8] for app in
           ("checkout", "reports-nightly", "storefront")}
    since = apps_dg.log_mark()
    try:
        checkout = apps_dg.client(appname="checkout")
        with pytest.raises(WriteError) as e:
            checkout[dbs["checkout"]].scoped.insert_one(dict(LONG, _id=1))
        assert e.value.code == 121, e.value.details
        assert upstream[dbs["checkout"]].scoped.find_one({"_id": 1}) is None

        reports = apps_dg.client(appname="reports-nightly")
        reports[dbs["reports-nightly"]].scoped.insert_one(dict(LONG, _id=1))
        assert upstream[dbs["reports-nightly"]].scoped.find_one({"_id": 1}) is not None

        storefront = apps_dg.client(appname="storefront")
        storefront[dbs["storefront"]].scoped.insert_one(dict(LONG, _id=1))
        assert upstream[dbs["storefront"]].scoped.find_one({"_id": 1}) is not None

        assert apps_dg.wait_metric(1, "docguard_violations_total", app="checkout",
                                   action="block", db=dbs["checkout"]) == 1
        assert apps_dg.wait_metric(1, "docguard_violations_total", app="reports-nightly",
                                   action="warn", db=dbs["reports-nightly"]) == 1
        assert apps_dg.metric("docguard_violations_total", app="storefront") == 0
        assert apps_dg.metric("docguard_violations_total", db=dbs["storefront"]) == 0

        lines = apps_dg.wait_violations(since, 2)
        by_app = {v["app"]: v for v in lines}
        assert by_app["checkout"]["action"] == "block", lines
        assert by_app["reports-nightly"]["action"] == "warn", lines
        assert by_app["reports-nightly"]["ns"] == f"{dbs['reports-nightly']}.scoped"
        assert by_app["reports-nightly"]["user"] == "-", lines  # no authentication here
        assert "storefront" not in by_app, lines
    finally:
        for name in dbs.values():
            upstream.drop_database(name)


def test_commands_are_counted_per_app(apps_dg, upstream):
    name = "it_scopes_" + uuid.uuid4().hex[:8]
    try:
        a = apps_dg.client(appname="counter-a")
        b = apps_dg.client(appname="counter-b")
        for i in range(3):
            a[name].plain.insert_one({"_id": f"a{i}"})
        for _ in range(2):
            a[name].plain.find_one({"_id": "a0"})
        for i in range(5):
            b[name].plain.insert_one({"_id": f"b{i}"})

        # Per app in a family of its own (apps x namespaces x commands would be most of the
        # exposition), per namespace without the app.
        def count(app: str, command: str) -> float:
            return apps_dg.metric("docguard_app_commands_total", app=app, command=command)

        assert apps_dg.wait_metric(3, "docguard_app_commands_total", app="counter-a",
                                   command="insert") == 3
        assert apps_dg.wait_metric(5, "docguard_app_commands_total", app="counter-b",
                                   command="insert") == 5
        assert count("counter-a", "find") == 2
        assert count("counter-b", "find") == 0
        assert apps_dg.metric("docguard_commands_total", db=name) == 10
        assert _label_values(apps_dg, "docguard_commands_total", "app") == {""}  # no app label
    finally:
        upstream.drop_database(name)


def test_app_labels_are_bounded(apps_dg, upstream):
    name = "it_scopes_" + uuid.uuid4().hex[:8]
    try:
        for i in range(150):
            c = pymongo.MongoClient(apps_dg.uri, appname=f"many-{i:03d}", maxPoolSize=1,
                                    serverSelectionTimeoutMS=10000)
            try:
                c[name].many.insert_one({"_id": i, "a": [1, 2]})  # warned: written
            finally:
                c.close()
        assert upstream[name].many.count_documents({}) == 150
        deadline = time.monotonic() + 5
        while (apps_dg.metric("docguard_violations_total", db=name) < 150 and
               time.monotonic() < deadline):
            time.sleep(0.05)
        assert apps_dg.metric("docguard_violations_total", db=name) == 150
        apps = _label_values(apps_dg, "docguard_violations_total", "app")
        assert len(apps) <= MAX_APPS + 1, sorted(apps)
        assert "_other" in apps, sorted(apps)
        assert apps_dg.metric("docguard_violations_total", db=name, app="_other") >= 150 - MAX_APPS
        # The same bound on commands per app: one insert per connection, every one counted.
        assert apps_dg.metric("docguard_commands_total", db=name, command="insert") == 150
        apps = _label_values(apps_dg, "docguard_app_commands_total", "app")
        assert len(apps) <= MAX_APPS + 1, sorted(apps)
        assert "_other" in apps, sorted(apps)
        assert apps_dg.metric("docguard_app_commands_total", app="_other",
                              command="insert") >= 150 - MAX_APPS
    finally:
        upstream.drop_database(name)


# ------------------------------------------------------------------------------------------ users

USERS = {"loader": "loader-secret", "reader": "reader-secret"}


@pytest.fixture(scope="module")
def users_env(env):
    """A FerretDB with SCRAM users of its own and docguard with USERS_CONFIG in front of it."""
    if not env.proxied:
        pytest.skip("needs docguard (DOCGUARD_DIRECT=1)")
    workdir = env.workdir / ("scopes-auth-" + uuid.uuid4().hex[:6])
    workdir.mkdir(parents=True, exist_ok=True)
    procs = []
    try:
        fdb = harness.start_ferretdb(workdir, auth=True)
        procs.append(fdb)
        fdb_uri = f"mongodb://127.0.0.1:{fdb.ports['listen']}"
        admin = pymongo.MongoClient(fdb_uri, username=harness.AUTH_USER,
                                    password=harness.AUTH_PASSWORD, authSource="admin",
                                    directConnection=True, serverSelectionTimeoutMS=10000)
        for user, pwd in USERS.items():
            admin.admin.command("createUser", user, pwd=pwd, roles=[])
        dg = _start(fdb_uri, workdir, USERS_CONFIG, "scopes-users")
        yield dg, admin
        assert dg.alive(), "docguard (users) died during the tests"
        admin.close()
        dg.stop()
    except harness.StartError as e:
        pytest.fail(str(e))
    finally:
        for p in reversed(procs):
            p.stop()


def _user_client(dg: RulesProxy, user: str, mechanism: str, **kw) -> pymongo.MongoClient:
    return dg.client(username=user, password=USERS[user], authSource="admin",
                     authMechanism=mechanism, **kw)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-1"])
def test_a_users_rule_blocks_one_user_and_not_another(users_env, mechanism):
    dg, admin = users_env
    name = "it_scopes_" + uuid.uuid4().hex[:8]
    since = dg.log_mark()
    try:
        # Idle connections are closed at the next checkout: each operation below after a pause
        # runs on a new connection that authenticates again.
        loader = _user_client(dg, "loader", mechanism, maxIdleTimeMS=200, appname="etl")
        with pytest.raises(WriteError) as e:
            loader[name].scoped.insert_one(dict(LONG, _id=1))
        assert e.value.code == 121, e.value.details
        assert admin[name].scoped.find_one({"_id": 1}) is None

        reader = _user_client(dg, "reader", mechanism)
        reader[name].scoped.insert_one(dict(LONG, _id=2))
        assert admin[name].scoped.find_one({"_id": 2}) is not None

        connections = dg.metric("docguard_connections_total")
        time.sleep(0.6)
        with pytest.raises(BulkWriteError) as e:
            loader[name].scoped.insert_many([dict(LONG, _id=3)])
        assert e.value.details["writeErrors"][0]["code"] == 121, e.value.details
        assert dg.metric("docguard_connections_total") > connections, "no new connection"
        assert admin[name].scoped.find_one({"_id": 3}) is None
        # Short arrays pass for the blocked user too: the rule is about the arrays.
        loader[name].scoped.insert_one({"_id": 4, "tags": [1]})

        blocked = [v for v in dg.wait_violations(since, 2) if v["action"] == "block"]
        assert len(blocked) >= 1, blocked
        assert all(v["user"] == "loader@admin" for v in blocked), blocked
        assert blocked[0]["app"] == "etl"

        status, body = harness.http_get(f"http://{dg.admin}/status")
        assert status == 200
        collections = {c["namespace"]: c for c in json.loads(body)["collections"]}
        top = collections[f"{name}.scoped"]["top_users"]
        assert top[0] == {"user": "loader@admin", "violations": 2}, top
    finally:
        admin.drop_database(name)

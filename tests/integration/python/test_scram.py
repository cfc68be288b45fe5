"""SCRAM through docguard to a FerretDB with SCRAM users: docguard passes the
conversation through untouched (clients authenticate themselves), including speculative
authentication inside the hello docguard rewrites. DOCGUARD_DIRECT=1 runs it against that FerretDB
itself."""

from __future__ import annotations

import uuid

import pytest
from pymongo.errors import OperationFailure


def _client(auth_env, **kw):
    import pymongo

    kw.setdefault("serverSelectionTimeoutMS", 10000)
    return pymongo.MongoClient(auth_env.uri, **kw)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-1", None])
def test_scram_mechanisms(auth_env, mechanism):
    kw = {"authMechanism": mechanism} if mechanism else {}  # None: negotiated (saslSupportedMechs)
    c = _client(auth_env, username=auth_env.user, password=auth_env.password, authSource="admin",
                **kw)
    name = "it_scram_" + uuid.uuid4().hex[:8]
    try:
        coll = c[name].c
        coll.insert_many([{"i": i} for i in range(3)])
        assert coll.count_documents({}) == 3
        status = c.admin.command("connectionStatus")
        users = status["authInfo"]["authenticatedUsers"]
        assert {"user": auth_env.user, "db": "admin"} in users, status
        # More connections authenticate on their own (a pool, not one lucky socket).
        c2 = _client(auth_env, username=auth_env.user, password=auth_env.password,
                     authSource="admin", maxPoolSize=4, **kw)
        try:
            assert c2[name].c.find_one({"i": 2})["i"] == 2
        finally:
            c2.close()
        c.drop_database(name)
    finally:
        c.close()


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-1"])
def test_wrong_password_gets_the_servers_error(auth_env, mechanism):
    c = _client(auth_env, username=auth_env.user, password="wrong", authSource="admin",
                authMechanism=mechanism)
    try:
        with pytest.raises(OperationFailure) as e:
            c.admin.command("ping")
        assert e.value.code == 18, e.value.details  # AuthenticationFailed, from FerretDB
    finally:
        c.close()


def test_no_credentials_is_refused_by_the_server(auth_env):
    c = _client(auth_env)
    try:
        assert c.admin.command("ping")["ok"] == 1  # ping needs no authentication
        with pytest.raises(OperationFailure) as e:
            c.it_scram_anon.c.insert_one({})
        assert e.value.code == 13, e.value.details  # Unauthorized
    finally:
        c.close()

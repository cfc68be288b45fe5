"""TLS on both sides of docguard, with certificates this test makes.

* client side: docguard serves TLS (--tls-cert/--tls-key); PyMongo with tls=True and the test CA
  works, plain TCP and an untrusted CA do not; with --tls-ca, a client certificate is required,
  and its subject is the connection's user (`users:` rules, violation logs, /status top_users).
* upstream side: FerretDB listens with TLS; docguard verifies its certificate against the CA and
  its name (SNI + hostname check); a wrong expected name is refused with a clear error.
"""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import time
import uuid
from pathlib import Path

import pymongo
import pytest
from pymongo.errors import OperationFailure, PyMongoError, WriteError

import harness
import rules_harness

pytestmark = pytest.mark.skipif(harness.docguard_bin() is None, reason="no docguard binary")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _issue(cwd: Path, name: str, ca: str, *, san: str, client: bool = False,
           subject: str | None = None) -> None:
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-subj",
             subject or f"/CN={name}", "-out", f"{name}.csr", cwd=cwd)
    ext = cwd / f"{name}.ext"
    usage = "clientAuth" if client else "serverAuth"
    ext.write_text(f"subjectAltName={san}\nextendedKeyUsage={usage}\n")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
             "-CAcreateserial", "-days", "2", "-sha256", "-extfile", ext.name, "-out",
             f"{name}.pem", cwd=cwd)
    # PyMongo's tlsCertificateKeyFile wants certificate and key in one file.
    (cwd / f"{name}-combined.pem").write_text((cwd / f"{name}.pem").read_text() +
                                              (cwd / f"{name}.key").read_text())


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("tls")
    for ca in ("ca", "other-ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{ca}.key",
                 "-subj", f"/CN=docguard test {ca}", "-days", "2", "-out", f"{ca}.pem", cwd=d)
    _issue(d, "server", "ca", san="DNS:localhost,IP:127.0.0.1")
    _issue(d, "client", "ca", san="DNS:app.local", client=True)
    # Subjects as openssl writes them (first RDN first); MongoDB names the user in RFC 2253
    # order (last RDN first), with ',' and the other specials escaped.
    _issue(d, "blocked", "ca", san="DNS:blocked.local", client=True,
           subject="/O=Example/OU=billing/CN=blocked-loader")
    _issue(d, "allowed", "ca", san="DNS:allowed.local", client=True,
           subject="/O=Example, Inc./OU=billing/CN=allowed-loader")
    return d


@pytest.fixture(scope="module")
def ferret(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("tls-ferret")
    proc = harness.start_ferretdb(workdir)
    yield proc
    proc.stop()


def _crud(uri: str, **kwargs) -> None:
    options = {"serverSelectionTimeoutMS": 4000, "connectTimeoutMS": 4000, **kwargs}
    client = pymongo.MongoClient(uri, **options)
    try:
        coll = client.tlsdb.items
        coll.insert_one({"x": 1})
        assert coll.count_documents({"x": 1}) >= 1
    finally:
        client.close()


def _docguard(tmp_path: Path, upstream: str, *extra: str):
    return harness.start_docguard(upstream, tmp_path, config=None, wait_upstream=False,
                                  extra_args=list(extra))


def test_client_side_tls(ferret, certs, tmp_path):
    dg = _docguard(tmp_path, f"mongodb://127.0.0.1:{ferret.ports['listen']}",
                   "--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"))
    try:
        uri = f"mongodb://localhost:{dg.ports['listen']}"
        _crud(uri, tls=True, tlsCAFile=str(certs / "ca.pem"))
        with pytest.raises(PyMongoError):
            _crud(uri, serverSelectionTimeoutMS=1500)  # plain TCP to a TLS listener
        with pytest.raises(PyMongoError):
            _crud(uri, tls=True, tlsCAFile=str(certs / "other-ca.pem"), serverSelectionTimeoutMS=1500)
        samples = harness.fetch_metrics(f"127.0.0.1:{dg.ports['admin']}")
        assert harness.metric_sum(samples, "docguard_protocol_errors_total", kind="tls_handshake") >= 1
        assert dg.alive()
    finally:
        dg.stop()


def test_client_certificate_required_with_tls_ca(ferret, certs, tmp_path):
    dg = _docguard(tmp_path, f"mongodb://127.0.0.1:{ferret.ports['listen']}",
                   "--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"),
                   "--tls-ca", str(certs / "ca.pem"))
    try:
        uri = f"mongodb://localhost:{dg.ports['listen']}"
        _crud(uri, tls=True, tlsCAFile=str(certs / "ca.pem"),
              tlsCertificateKeyFile=str(certs / "client-combined.pem"))
        with pytest.raises(PyMongoError):
            _crud(uri, tls=True, tlsCAFile=str(certs / "ca.pem"), serverSelectionTimeoutMS=1500)
    finally:
        dg.stop()


X509_RULES = """\
mode: warn
tracking:
  read_sample_rate: 0
rules:
  - match: "*.scoped"
    users: ["CN=blocked*"]
    action: block
    max_array_length: 3
  - match: "*.scoped"
    action: warn
    max_array_length: 3
"""
BLOCKED_USER = "CN=blocked-loader,OU=billing,O=Example@$external"
ALLOWED_USER = "CN=allowed-loader,OU=billing,O=Example\\, Inc.@$external"


def test_client_certificate_subject_is_the_user(ferret, certs, tmp_path):
    """With --tls-ca, docguard verifies the client's certificate itself: its subject is the
    connection's user from the handshake on, without any authentication command (FerretDB has no
    x.509 authentication, so the drivers here send none)."""
    cfg = tmp_path / "x509-rules.yaml"
    cfg.write_text(X509_RULES)
    ferret_uri = f"mongodb://127.0.0.1:{ferret.ports['listen']}"
    dg = harness.start_docguard(ferret_uri, tmp_path, config=cfg, wait_upstream=False, extra_args=[
        "--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"),
        "--tls-ca", str(certs / "ca.pem")])
    upstream = pymongo.MongoClient(ferret_uri, serverSelectionTimeoutMS=4000)
    # One database per certificate: violation logs are rate-limited per namespace and rule.
    dbs = {cert: f"it_x509_{cert}_{uuid.uuid4().hex[:6]}" for cert in ("blocked", "allowed")}
    clients = []

    def client(cert: str, **kw) -> pymongo.MongoClient:
        c = pymongo.MongoClient(f"mongodb://localhost:{dg.ports['listen']}", tls=True,
                                tlsCAFile=str(certs / "ca.pem"),
                                tlsCertificateKeyFile=str(certs / f"{cert}-combined.pem"),
                                serverSelectionTimeoutMS=4000, **kw)
        clients.append(c)
        return c

    try:
        long = {"tags": [1, 2, 3, 4, 5]}
        with pytest.raises(WriteError) as e:
            client("blocked")[dbs["blocked"]].scoped.insert_one(dict(long, _id=1))
        assert e.value.code == 121, e.value.details
        assert upstream[dbs["blocked"]].scoped.find_one({"_id": 1}) is None
        client("allowed")[dbs["allowed"]].scoped.insert_one(dict(long, _id=2))  # warned: written
        assert upstream[dbs["allowed"]].scoped.find_one({"_id": 2}) is not None

        deadline = time.monotonic() + 5
        seen = []
        while len(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            seen = [v for v in map(rules_harness.parse_violation,
                                   harness.parse_json_lines(harness.read_log_lines(dg.log_path)))
                    if v is not None]
        by_action = {v["action"]: v for v in seen}
        assert by_action["block"]["user"] == BLOCKED_USER, seen
        assert by_action["warn"]["user"] == ALLOWED_USER, seen

        status, body = harness.http_get(f"http://127.0.0.1:{dg.ports['admin']}/status")
        assert status == 200
        collections = {c["namespace"]: c for c in json.loads(body)["collections"]}
        for cert, user in (("blocked", BLOCKED_USER), ("allowed", ALLOWED_USER)):
            top = collections[f"{dbs[cert]}.scoped"]["top_users"]
            assert top == [{"user": user, "violations": 1}], top

        # A driver told authMechanism=MONGODB-X509 sends `authenticate`, which docguard passes
        # on: FerretDB 1.x has no such command (59), so the driver fails as it would without
        # docguard. Hence the clients above send none.
        with pytest.raises(OperationFailure) as e:
            client("blocked", authMechanism="MONGODB-X509")[dbs["blocked"]].scoped.find_one()
        assert e.value.code == 59, e.value.details
        assert dg.alive()
    finally:
        for c in clients:
            c.close()
        for db in dbs.values():
            upstream.drop_database(db)
        upstream.close()
        dg.stop()


@pytest.fixture(scope="module")
def tls_ferret(tmp_path_factory, certs):
    """FerretDB serving TLS only (its plain listener on another free port, unused)."""
    workdir = tmp_path_factory.mktemp("tls-upstream")
    port, plain = harness.free_port(), harness.free_port()
    data = workdir / "data"
    data.mkdir()
    proc = harness._spawn("ferretdb-tls", [
        str(harness.FERRETDB_BIN), "--handler=sqlite", f"--sqlite-url=file:{data}/",
        f"--listen-addr=127.0.0.1:{plain}", f"--listen-tls=127.0.0.1:{port}",
        f"--listen-tls-cert-file={certs / 'server.pem'}",
        f"--listen-tls-key-file={certs / 'server.key'}", f"--state-dir={data}",
        "--telemetry=disable", "--debug-addr=-", "--log-level=warn"], workdir / "ferretdb.log")
    proc.ports["tls"] = port
    import time
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not harness.port_open(port):
        time.sleep(0.2)
    assert harness.port_open(port), harness._tail(proc.log_path)
    yield proc
    proc.stop()


def test_upstream_tls_verifies_certificate_and_name(tls_ferret, certs, tmp_path):
    port = tls_ferret.ports["tls"]
    ca = certs / "ca.pem"
    dg = _docguard(tmp_path, f"mongodb://localhost:{port}/?tls=true&tlsCAFile={ca}")
    try:
        _crud(f"mongodb://127.0.0.1:{dg.ports['listen']}")
    finally:
        dg.stop()
    # The certificate names localhost and 127.0.0.1, not this name: refused, clearly.
    cfg = tmp_path / "wrong-name.yaml"
    cfg.write_text(f"upstream_tls: {{ ca_file: {ca}, server_name: db.example.net }}\n")
    dg = _docguard(tmp_path, f"mongodb://localhost:{port}", "--config", str(cfg))
    try:
        with pytest.raises(PyMongoError) as err:
            _crud(f"mongodb://127.0.0.1:{dg.ports['listen']}", serverSelectionTimeoutMS=2000)
        assert "TLS handshake" in str(err.value) or "unreachable" in str(err.value)
        samples = harness.fetch_metrics(f"127.0.0.1:{dg.ports['admin']}")
        assert harness.metric_sum(samples, "docguard_upstream_errors_total", kind="tls") >= 1
    finally:
        dg.stop()
    # An untrusted CA is refused too.
    dg = _docguard(tmp_path, f"mongodb://localhost:{port}/?tls=true&tlsCAFile={certs / 'other-ca.pem'}")
    try:
        with pytest.raises(PyMongoError):
            _crud(f"mongodb://127.0.0.1:{dg.ports['listen']}", serverSelectionTimeoutMS=2000)
    finally:
        dg.stop()


def test_upstream_tls_block_reaches_the_topology_monitor(tls_ferret, certs, tmp_path):
    """TLS set only in the `upstream_tls` block (not in the URI) reaches docguard's own libmongoc
    connections too: the monitor's heartbeats find the server, so /readyz turns ready."""
    import time
    port = tls_ferret.ports["tls"]
    cfg = tmp_path / "upstream-tls.yaml"
    cfg.write_text(f"upstream_tls: {{ ca_file: {certs / 'ca.pem'} }}\n")
    dg = _docguard(tmp_path, f"mongodb://localhost:{port}", "--config", str(cfg))
    try:
        admin = f"http://127.0.0.1:{dg.ports['admin']}"
        deadline = time.monotonic() + 15
        status = 0
        while time.monotonic() < deadline:
            status, _ = harness.http_get(admin + "/readyz")
            if status == 200:
                break
            time.sleep(0.2)
        assert status == 200, "the topology monitor never reached the TLS-only upstream"
        _crud(f"mongodb://127.0.0.1:{dg.ports['listen']}")
    finally:
        dg.stop()


def _handshake(port: int, cafile: Path, *, ciphers: str | None = None,
               version: ssl.TLSVersion | None = None) -> str | None:
    """A bare TLS handshake with docguard's listener; the suite agreed, or None when refused."""
    ctx = ssl.create_default_context(cafile=str(cafile))
    if version:
        ctx.minimum_version = ctx.maximum_version = version
    if ciphers:
        ctx.set_ciphers(ciphers)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                return tls.cipher()[0]
    except (ssl.SSLError, ConnectionError):
        return None


def _tls_config(tmp_path: Path, certs: Path, extra: str = "") -> Path:
    cfg = tmp_path / "tls.yaml"
    cfg.write_text(f"tls:\n  cert_file: {certs / 'server.pem'}\n  key_file: {certs / 'server.key'}\n"
                   f"{extra}")
    return cfg


def test_weak_tls12_suites_are_refused_by_default(ferret, certs, tmp_path):
    """Static-RSA key exchange and CBC with SHA-1 are not offered: forward-secret AEAD only."""
    dg = harness.start_docguard(f"mongodb://127.0.0.1:{ferret.ports['listen']}", tmp_path,
                                config=_tls_config(tmp_path, certs), wait_upstream=False)
    try:
        port = dg.ports["listen"]
        v12 = ssl.TLSVersion.TLSv1_2
        assert _handshake(port, certs / "ca.pem", ciphers="AES128-SHA:AES256-SHA:@SECLEVEL=0",
                          version=v12) is None
        assert _handshake(port, certs / "ca.pem", ciphers="AES128-GCM-SHA256:@SECLEVEL=0",
                          version=v12) is None
        assert _handshake(port, certs / "ca.pem", ciphers="ECDHE-RSA-AES128-SHA:@SECLEVEL=0",
                          version=v12) is None
        assert _handshake(port, certs / "ca.pem", ciphers="ECDHE-RSA-AES128-GCM-SHA256",
                          version=v12) == "ECDHE-RSA-AES128-GCM-SHA256"
        assert _handshake(port, certs / "ca.pem") is not None  # TLS 1.3 by default
        assert dg.alive()
    finally:
        dg.stop()


def test_min_version_and_an_encrypted_key_from_a_file(ferret, certs, tmp_path):
    _openssl("pkey", "-in", "server.key", "-aes256", "-passout", "pass:key-passphrase-1",
             "-out", "server-encrypted.key", cwd=certs)
    (tmp_path / "passphrase").write_text("key-passphrase-1\n")
    cfg = tmp_path / "tls.yaml"
    cfg.write_text(f"tls:\n  cert_file: {certs / 'server.pem'}\n"
                   f"  key_file: {certs / 'server-encrypted.key'}\n"
                   f"  key_password_file: {tmp_path / 'passphrase'}\n  min_version: '1.3'\n")
    dg = harness.start_docguard(f"mongodb://127.0.0.1:{ferret.ports['listen']}", tmp_path,
                                config=cfg, wait_upstream=False)
    try:
        port = dg.ports["listen"]
        assert _handshake(port, certs / "ca.pem", version=ssl.TLSVersion.TLSv1_2) is None
        assert _handshake(port, certs / "ca.pem", version=ssl.TLSVersion.TLSv1_3) is not None
        _crud(f"mongodb://localhost:{port}", tls=True, tlsCAFile=str(certs / "ca.pem"))
    finally:
        dg.stop()
    # Without the passphrase: docguard says which key it could not load, and asks nobody.
    bare = tmp_path / "bare.yaml"
    bare.write_text(f"tls:\n  cert_file: {certs / 'server.pem'}\n"
                    f"  key_file: {certs / 'server-encrypted.key'}\n")
    started = subprocess.run([str(harness.docguard_bin()), "--config", str(bare), "--listen",
                              f"127.0.0.1:{harness.free_port()}", "--upstream",
                              f"mongodb://127.0.0.1:{ferret.ports['listen']}"],
                             capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert started.returncode != 0, started.stderr
    assert "tls.key_file" in started.stderr, started.stderr

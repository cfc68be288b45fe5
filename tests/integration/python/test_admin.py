"""The admin listener: bearer token, endpoints, and localhost by default."""

from __future__ import annotations

import json
import subprocess
import urllib.request

import pytest

import harness

pytestmark = pytest.mark.proxy


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url)
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=3) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_admin_token_protects_everything_but_healthz(env, tmp_path):
    admin_port = harness.free_port()
    cfg = tmp_path / "admin.yaml"
    cfg.write_text(f"admin: {{ listen: 127.0.0.1:{admin_port}, token: s3cret }}\n")
    dg = harness.start_docguard(env.ferret_uri, tmp_path, config=cfg, extra_args=[])
    try:
        # The harness passes --admin, which overrides the file's listen address but keeps the token.
        base = f"http://127.0.0.1:{dg.ports['admin']}"
        assert _get(base + "/healthz")[0] == 200
        for path in ("/metrics", "/status", "/readyz"):
            assert _get(base + path)[0] == 401, path
            assert _get(base + path, "wrong")[0] == 401, path
            status, body = _get(base + path, "s3cret")
            assert status == 200, (path, body)
        assert json.loads(_get(base + "/status", "s3cret")[1])["mode"] in ("off", "warn", "block")
        assert _get(base + "/nope", "s3cret")[0] == 404
    finally:
        dg.stop()


def test_admin_listens_on_localhost_by_default():
    out = subprocess.run([str(harness.docguard_bin()), "--help"], capture_output=True, text=True,
                         timeout=10).stdout
    assert "--admin HOST:PORT" in out and "default 127.0.0.1:9216" in out

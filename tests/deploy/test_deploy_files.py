"""Static checks of deploy/: what can be tested without a container engine.

  * every YAML/JSON file parses;
  * the Dockerfile builds the way the README/scripts do (same apt packages as
    scripts/install-deps.sh, same cmake/ninja commands as scripts/test.sh), its runtime stage has
    the packages of every shared library build/bin/docguard links, runs as non-root, and its
    HEALTHCHECK command really answers against a running docguard;
  * every flag passed to docguard exists in `docguard --help`; listen/admin addresses are 0.0.0.0
    (or loopback for a sidecar, and the image's own admin default), and ports line up with containerPorts, probes, scrape annotations,
    Services, compose port mappings and the Prometheus target;
  * every path compose mounts and the Dockerfile copies exists; the configs they give docguard pass
    `docguard --check-config`;
  * the admin API is closed wherever docguard is shipped: every deployment whose admin listener is
    off loopback gives it a token from a secret (a Kubernetes Secret's file, a compose secret),
    Prometheus scrapes with it, no Service exposes the admin port; each docguard of these files,
    started as the file says, refuses to start without its token, answers /healthz and /readyz
    without one, answers nothing else without it from another address than loopback, and refuses
    a foreign Host or Origin;
  * Grafana provisioning points at the dashboard; metric names used by the dashboard and alerts
    exist in the table of metric families (telemetry/include/docguard/telemetry/metric_families.h, or are listed as pending); promtool checks the Prometheus config.

Run: .tools/venv/bin/python -m pytest -q tests/deploy
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
DOCGUARD = Path(os.environ.get("DOCGUARD_BIN") or REPO / "build" / "bin" / "docguard")
sys.path.insert(0, str(REPO / "tests" / "integration" / "python"))
from harness import free_port  # noqa: E402  (ports outside the ephemeral range)
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
# metrics the dashboard/alerts use before docguard exports them (see test_prometheus.py)
# Metrics the dashboard/alerts may use before docguard exports them (none now: all exported).
PENDING_METRICS: set[str] = set()


# ------------------------------------------------------------------ helpers

def load_yaml_docs(path: Path) -> list:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


@pytest.fixture(scope="session")
def help_flags() -> set[str]:
    if not os.access(DOCGUARD, os.X_OK):
        pytest.fail(f"docguard binary not found at {DOCGUARD} (build it first)")
    out = subprocess.run([str(DOCGUARD), "--help"], capture_output=True, text=True, timeout=10)
    flags = set(re.findall(r"^\s+(--[a-z][a-z-]*)", out.stdout + out.stderr, re.M))
    assert {"--listen", "--upstream", "--admin", "--config"} <= flags, flags
    return flags


def parse_args(args: list[str]) -> dict[str, str]:
    """['--listen', 'X', ...] -> {'--listen': 'X'}; asserts every element is a flag or its value."""
    out: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = str(args[i])
        assert a.startswith("--"), f"not a flag: {a!r} in {args}"
        if "=" in a:
            k, v = a.split("=", 1)
            out[k] = v
            i += 1
        elif i + 1 < len(args) and not str(args[i + 1]).startswith("--"):
            out[a] = str(args[i + 1])
            i += 2
        else:
            out[a] = ""
            i += 1
    return out


def port_of(hostport: str) -> int:
    return int(hostport.rsplit(":", 1)[1])


def host_of(hostport: str) -> str:
    return hostport.rsplit(":", 1)[0]


def check_docguard_args(args: list[str], help_flags: set[str], admin_host: str = "0.0.0.0") -> dict:
    flags = parse_args(args)
    unknown = set(flags) - help_flags
    assert not unknown, f"flags not in docguard --help: {unknown}"
    for key in ("--listen", "--admin", "--upstream"):
        assert key in flags, f"{key} missing from {args}"
    assert flags["--upstream"].startswith("mongodb://")
    assert host_of(flags["--admin"]) == admin_host, \
        f"admin on {flags['--admin']}, want {admin_host} (probes/scrapes, or the image's loopback)"
    return flags


def no_token_env() -> dict:
    """This environment without any admin token a shell may have set."""
    return {k: v for k, v in os.environ.items() if not k.startswith("DOCGUARD_ADMIN_TOKEN")}


def token_file(tmp_path: Path, token: str = "deploy-test-token") -> Path:
    """A secret's file as Kubernetes or compose mounts it: the token and a final newline."""
    p = tmp_path / "admin-token"
    p.write_text(token + "\n")
    p.chmod(0o440)
    return p


def check_config(path_or_text, tmp_path: Path, extra: list[str] | None = None,
                 env: dict | None = None) -> None:
    if isinstance(path_or_text, str):
        p = tmp_path / f"cfg-{abs(hash(path_or_text))}.yaml"
        p.write_text(path_or_text)
    else:
        p = path_or_text
    r = subprocess.run([str(DOCGUARD), "--check-config", "--config", str(p)] + (extra or []),
                       capture_output=True, text=True, timeout=10, env=env)
    assert r.returncode == 0, f"docguard --check-config {p}:\n{r.stdout}{r.stderr}"


def defined_metrics() -> set[str]:
    # the one table of metric families every family is registered from
    table = REPO / "telemetry" / "include" / "docguard" / "telemetry" / "metric_families.h"
    return set(re.findall(r'MetricFamily k[A-Za-z]+\{\s*"(docguard_[a-z_]+)"', table.read_text()))


def used_metrics(expr: str) -> set[str]:
    names = set(re.findall(r"\b(docguard_[a-z_]+)\b", expr))
    return {re.sub(r"_(bucket|count|sum)$", "", n) if re.sub(r"_(bucket|count|sum)$", "", n)
            in defined_metrics() else n for n in names}


# ------------------------------------------------------------------ all files parse

def test_every_file_parses():
    files = sorted(p for p in DEPLOY.rglob("*") if p.is_file())
    assert files
    seen = 0
    for p in files:
        if p.suffix in (".yaml", ".yml"):
            assert load_yaml_docs(p), f"{p} is empty"
            seen += 1
        elif p.suffix == ".json":
            json.loads(p.read_text())
            seen += 1
    assert seen >= 10, seen


# ------------------------------------------------------------------ Dockerfile

def dockerfile_stages() -> list[dict]:
    """[{from, name, instructions: [(KEYWORD, text)]}] with line continuations joined."""
    text = (DEPLOY / "Dockerfile").read_text()
    joined = re.sub(r"\\\n", " ", text)
    stages: list[dict] = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        kw, _, rest = line.partition(" ")
        kw = kw.upper()
        if kw == "FROM":
            m = re.match(r"(\S+)(?:\s+AS\s+(\S+))?", rest, re.I)
            stages.append({"from": m.group(1), "name": m.group(2), "ins": []})
        else:
            stages[-1]["ins"].append((kw, rest.strip()))
    return stages


def apt_installs(stage: dict) -> set[str]:
    pkgs: set[str] = set()
    for kw, text in stage["ins"]:
        if kw != "RUN":
            continue
        for cmd in text.split("&&"):
            words = shlex.split(cmd)
            if words[:2] == ["apt-get", "install"]:
                pkgs |= {w for w in words[2:] if not w.startswith("-")}
    return pkgs


def install_deps_apt() -> set[str]:
    text = (REPO / "scripts" / "install-deps.sh").read_text()
    m = re.search(r"apt_pkgs=\((.*?)\)", text, re.S)
    return set(m.group(1).split())


def test_dockerfile_build_stage_matches_readme_build():
    build, runtime = dockerfile_stages()[0], dockerfile_stages()[-1]
    assert build["from"] == "debian:12" and build["name"], build["from"]
    # packages: the ones scripts/install-deps.sh installs (the README's install step)
    pkgs = apt_installs(build)
    assert pkgs and pkgs <= install_deps_apt(), pkgs - install_deps_apt()
    # build commands: the ones scripts/test.sh runs (the README's build step)
    test_sh = (REPO / "scripts" / "test.sh").read_text()
    cmake = re.search(r"(cmake -S \. -B build -G Ninja -DCMAKE_BUILD_TYPE=\S+)", test_sh).group(1)
    runs = " ".join(t for k, t in build["ins"] if k == "RUN")
    assert cmake in runs, f"Dockerfile does not run `{cmake}`"
    assert "ninja -C build" in test_sh and "ninja -C build" in runs
    assert "scripts/install-deps.sh" in (REPO / "README.md").read_text()
    # every COPY source exists in the build context (the repository root)
    for stage in (build, runtime):
        for kw, text in stage["ins"]:
            if kw == "COPY" and "--from" not in text:
                *srcs, _dst = shlex.split(text)
                for s in srcs:
                    assert (REPO / s).exists(), f"COPY {s}: not in the repository"
    # the .dockerignore keeps every copied path
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text()
    for kw, text in build["ins"]:
        if kw == "COPY":
            for s in shlex.split(text)[:-1]:
                assert f"!{s}" in ignore or f"!{s.rstrip('/')}" in ignore, s


def test_dockerfile_build_stage_configures_from_its_copies(tmp_path):
    """The build stage's cmake, run here on only the files its COPY lines bring in.

    No Docker engine runs on the CI machines and no image registry is reachable, so the stage is
    reproduced on the host, which is the stage's own base (Debian 12 with the same packages). The
    configure step is what breaks when a layer is added and not copied (a missing folder or source
    file fails there); the compile is the same as the build step's.
    """
    if not shutil.which("cmake"):
        pytest.skip("needs cmake")
    build = dockerfile_stages()[0]
    ctx = tmp_path / "src"
    ctx.mkdir()
    for kw, text in build["ins"]:
        if kw == "COPY" and "--from" not in text:
            *srcs, dst = shlex.split(text)
            for s in srcs:  # `COPY dir/ dir/` and `COPY file ./` (WORKDIR is the context)
                src, target = REPO / s, ctx / dst
                if src.is_dir():
                    shutil.copytree(src, target, ignore=shutil.ignore_patterns("build*"))
                else:
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copy(src, target / src.name if dst.endswith("/") else target)
    runs = " && ".join(t for k, t in build["ins"] if k == "RUN" and "cmake -S" in t)
    cmake = re.search(r"(cmake -S \. -B build [^&]*?)\s*&&", runs).group(1)
    r = subprocess.run(shlex.split(cmake), cwd=ctx, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"`{cmake}` on the copied files failed:\n{r.stdout[-3000:]}{r.stderr[-3000:]}"


def test_dockerfile_runtime_stage(help_flags):
    stages = dockerfile_stages()
    runtime = stages[-1]
    assert runtime["from"] == "debian:12-slim"
    ins = dict((k, t) for k, t in runtime["ins"])  # last of each keyword
    user = ins["USER"].split(":")[0]
    assert user not in ("root", "0"), "runtime must not run as root"
    assert "useradd" in " ".join(t for k, t in runtime["ins"] if k == "RUN")
    assert json.loads(ins["ENTRYPOINT"]) == ["/usr/local/bin/docguard"]
    copy = [t for k, t in runtime["ins"] if k == "COPY" and "--from" in t]
    assert any("/src/build/bin/docguard /usr/local/bin/docguard" in t for t in copy)
    # The image's default opens no admin API: it listens on the container's loopback, where the
    # HEALTHCHECK reaches it (`--admin 0.0.0.0:9216` with a token opens it, deploy files do).
    flags = check_docguard_args(json.loads(ins["CMD"]), help_flags, admin_host="127.0.0.1")
    assert host_of(flags["--listen"]) == "0.0.0.0"
    admin_port = port_of(flags["--admin"])
    expose = {int(p) for p in ins["EXPOSE"].split()}
    assert {port_of(flags["--listen"]), admin_port} <= expose
    env = dict(re.findall(r"(\w+)=(\S+)", " ".join(t for k, t in runtime["ins"] if k == "ENV")))
    assert int(env["DOCGUARD_ADMIN_PORT"]) == admin_port
    assert "/healthz" in ins["HEALTHCHECK"] and "DOCGUARD_ADMIN_PORT" in ins["HEALTHCHECK"]


def test_dockerfile_runtime_has_every_shared_library():
    """Runtime apt packages cover the Debian packages of `ldd build/bin/docguard` (this machine)."""
    if not shutil.which("ldd") or not shutil.which("dpkg"):
        pytest.skip("needs ldd and dpkg")
    out = subprocess.run(["ldd", str(DOCGUARD)], capture_output=True, text=True, timeout=10).stdout
    needed = set()
    for lib in re.findall(r"=> (/\S+)", out):
        real = os.path.realpath(lib)
        for candidate in (lib, real, "/usr" + real, real.removeprefix("/usr")):
            r = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
            if r.returncode == 0:
                needed.add(r.stdout.split(":")[0].strip())
                break
    needed -= {"libc6"}  # in every Debian image
    have = apt_installs(dockerfile_stages()[-1])
    assert needed and needed <= have, f"runtime stage lacks {needed - have}"


def test_dockerfile_healthcheck_command_works(tmp_path):
    """Run the HEALTHCHECK's command against a real docguard (upstream need not be up)."""
    if not shutil.which("bash"):
        pytest.skip("needs bash")
    ins = dict((k, t) for k, t in dockerfile_stages()[-1]["ins"])
    m = re.match(r"(?:--\S+\s+)*CMD\s+(\[.*\])$", ins["HEALTHCHECK"])
    cmd = json.loads(m.group(1))

    aport, lport, dead = free_port(), free_port(), free_port()
    env = dict(os.environ, DOCGUARD_ADMIN_PORT=str(aport))
    p = subprocess.Popen([str(DOCGUARD), "--listen", f"127.0.0.1:{lport}", "--upstream",
                          f"mongodb://127.0.0.1:{dead}", "--admin", f"127.0.0.1:{aport}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while subprocess.run(cmd, env=env, timeout=10).returncode != 0:
            assert p.poll() is None, "docguard exited"
            assert time.monotonic() < deadline, "healthcheck never passed"
            time.sleep(0.2)
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    # and fails when nothing listens
    assert subprocess.run(cmd, env=dict(env, DOCGUARD_ADMIN_PORT=str(dead)), timeout=10,
                          stderr=subprocess.DEVNULL).returncode != 0


# ------------------------------------------------------------------ started as shipped

ADMIN_GUARDED = ("/metrics", "/status", "/report", "/report.json", "/recording", "/nope")


def host_address() -> str | None:
    """An address of this host that is not loopback (what another host would connect to)."""
    import socket
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # only the route is looked up, nothing is sent
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


def http_status(address: str, port: int, path: str, token: str | None = None,
                host: str | None = None, origin: str | None = None) -> int:
    import socket
    head = f"GET {path} HTTP/1.1\r\nHost: {host or f'{address}:{port}'}\r\n"
    if token is not None:
        head += f"Authorization: Bearer {token}\r\n"
    if origin is not None:
        head += f"Origin: {origin}\r\n"
    with socket.create_connection((address, port), timeout=5) as s:
        s.sendall((head + "\r\n").encode())
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return int(answer.split(b" ", 2)[1])


def shipped_args(flags: dict, tmp_path: Path, config: Path | None) -> tuple[list[str], int]:
    """The file's docguard flags with this machine's free ports, a scratch socket path, an
    upstream nothing answers and the file's --config text in a scratch file; hosts as shipped."""
    out: list[str] = []
    admin_port = free_port()
    for k, v in flags.items():
        if k == "--listen":
            v = (f"unix:{tmp_path}/dg-{free_port()}.sock" if v.startswith("unix:")
                 else f"{host_of(v)}:{free_port()}")
        elif k == "--admin":
            v = f"{host_of(v)}:{admin_port}"
        elif k == "--upstream":
            v = f"mongodb://127.0.0.1:{free_port()}"
        elif k == "--config":
            assert config is not None
            v = str(config)
        out += [k, v] if v else [k]
    return out, admin_port


def stop(p: subprocess.Popen) -> None:
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def check_started_as_shipped(where: str, flags: dict, token_env: str | None, tmp_path: Path,
                             config: Path | None = None) -> None:
    """docguard started with the file's flags (and, where the file gives it one, its token
    through the file's variable): the admin API closed to whoever lacks the token."""
    args, admin_port = shipped_args(flags, tmp_path, config)
    admin_host = host_of(flags["--admin"])
    token = "deploy-test-token"
    env = no_token_env()
    if admin_host != "127.0.0.1":
        # Without the secret (a Secret not created, a compose secret missing): no start.
        r = subprocess.run([str(DOCGUARD)] + args, capture_output=True, text=True, timeout=20,
                           env=env)
        assert r.returncode == 1, f"{where}: started without a token:\n{r.stderr[-2000:]}"
        assert "admin.allow_without_token" in r.stderr, f"{where}: {r.stderr}"
        assert token_env, f"{where}: an admin off loopback with no token from a secret"
        env[token_env] = str(token_file(tmp_path, token))
    p = subprocess.Popen([str(DOCGUARD)] + args, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 20
        while True:
            assert p.poll() is None, f"{where}: docguard exited: {p.stderr.read().decode()[-2000:]}"
            try:
                if http_status("127.0.0.1", admin_port, "/healthz") == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"{where}: /healthz never answered"
            time.sleep(0.2)
        outside = host_address()
        if admin_host == "127.0.0.1":
            # The image's default: nothing but this container's loopback reaches the admin API.
            if outside:
                with pytest.raises(OSError):
                    http_status(outside, admin_port, "/metrics")
            return
        assert outside, "this machine has no address but loopback: cannot test from outside"
        # The probes need no token (a kubelet sends no header); /readyz answers 503 here, as
        # nothing answers at the upstream, but never 401.
        assert http_status(outside, admin_port, "/healthz") == 200, where
        assert http_status(outside, admin_port, "/readyz") == 503, where
        for path in ADMIN_GUARDED:
            assert http_status(outside, admin_port, path) == 401, (where, path)
            assert http_status(outside, admin_port, path, token="wrong") == 401, (where, path)
            # A DNS-rebound name and another site's page: refused, even with the token.
            assert http_status(outside, admin_port, path, token=token,
                               host="attacker.example") == 421, (where, path)
            assert http_status(outside, admin_port, path, token=token,
                               origin="http://evil.example") == 403, (where, path)
        for probe in ("/healthz", "/readyz"):
            assert http_status(outside, admin_port, probe, host="attacker.example") == 421, where
        assert http_status(outside, admin_port, "/metrics", token=token) == 200, where
        assert http_status(outside, admin_port, "/status", token=token) == 200, where
    finally:
        stop(p)


def test_dockerfile_cmd_started_as_shipped(help_flags, tmp_path):
    ins = dict((k, t) for k, t in dockerfile_stages()[-1]["ins"])
    flags = check_docguard_args(json.loads(ins["CMD"]), help_flags, admin_host="127.0.0.1")
    check_started_as_shipped("Dockerfile CMD", flags, None, tmp_path)


# ------------------------------------------------------------------ compose

@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def compose_mounts(service: dict) -> dict[str, Path]:
    """container path -> host path (bind mounts only)."""
    out = {}
    for v in service.get("volumes", []):
        parts = v.split(":")
        if parts[0].startswith((".", "/")):
            out[parts[1]] = (DEPLOY / parts[0]).resolve()
    return out


def test_compose(compose, help_flags, tmp_path):
    services = compose["services"]
    assert {"mongo", "docguard", "prometheus", "grafana"} <= set(services)
    assert services["mongo"]["image"].startswith("mongo:")
    dg = services["docguard"]
    assert (DEPLOY / dg["build"]["context"] / dg["build"]["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    flags = check_docguard_args(dg["command"], help_flags)
    assert host_of(flags["--listen"]) == "0.0.0.0"
    up_host = flags["--upstream"].split("://", 1)[1].split(":")[0]
    assert up_host in services, f"upstream host {up_host} is not a compose service"
    published = {int(p.rsplit(":", 1)[1]) for p in dg["ports"]}
    assert {port_of(flags["--listen"]), port_of(flags["--admin"])} <= published
    # every bind mount exists; the config docguard is given passes --check-config with these flags
    for svc in services.values():
        for container_path, host_path in compose_mounts(svc).items():
            assert host_path.exists(), f"{host_path} (mounted at {container_path}) does not exist"
    # The admin token: a compose secret, created by hand (not in git), read by docguard through
    # DOCGUARD_ADMIN_TOKEN_FILE and by Prometheus as its credentials_file.
    secrets = compose["secrets"]
    token_path = dg["environment"]["DOCGUARD_ADMIN_TOKEN_FILE"]
    name = token_path.removeprefix("/run/secrets/")
    assert name in dg["secrets"] and name in secrets, token_path
    secret_file = (DEPLOY / secrets[name]["file"]).resolve()
    assert secret_file.parent.relative_to(REPO).as_posix() + "/" in \
        (REPO / ".gitignore").read_text(), f"{secret_file} must stay out of git"
    assert "openssl rand" in (DEPLOY / "compose.yaml").read_text(), "say how to create it"
    assert name in services["prometheus"]["secrets"]
    cfg = compose_mounts(dg)[flags["--config"]]
    check_config(cfg, tmp_path, extra=[a for k, v in flags.items() if k != "--config"
                                       for a in ([k, v] if v else [k])],
                 env=dict(no_token_env(), DOCGUARD_ADMIN_TOKEN_FILE=str(token_file(tmp_path))))
    check_started_as_shipped("compose.yaml", flags, "DOCGUARD_ADMIN_TOKEN_FILE", tmp_path, cfg)
    # Prometheus scrapes docguard's admin port by service name, with the token
    prom = compose_mounts(services["prometheus"])
    prom_cfg = yaml.safe_load(prom["/etc/prometheus/prometheus.yml"].read_text())
    targets = [t for j in prom_cfg["scrape_configs"] for sc in j.get("static_configs", [])
               for t in sc["targets"]]
    assert f"docguard:{port_of(flags['--admin'])}" in targets
    job = next(j for j in prom_cfg["scrape_configs"] if j["job_name"] == "docguard")
    assert job["authorization"]["credentials_file"] == f"/run/secrets/{name}", job
    for rf in prom_cfg["rule_files"]:
        assert f"/etc/prometheus/{rf}" in prom, f"rule file {rf} not mounted next to prometheus.yml"
    # Grafana: provisioning mounted; the dashboard provider path is where the dashboards are mounted
    graf = compose_mounts(services["grafana"])
    prov = graf["/etc/grafana/provisioning"]
    ds = yaml.safe_load((prov / "datasources" / "prometheus.yaml").read_text())["datasources"][0]
    assert ds["type"] == "prometheus"
    assert re.match(r"http://prometheus:9090/?$", ds["url"]), ds["url"]
    providers = yaml.safe_load((prov / "dashboards" / "docguard.yaml").read_text())["providers"]
    path = providers[0]["options"]["path"]
    assert path in graf, f"provider path {path} is not a mount"
    assert list(graf[path].glob("*.json")), f"no dashboards in {graf[path]}"
    home = services["grafana"]["environment"].get("GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH")
    if home:
        assert (graf[str(Path(home).parent)] / Path(home).name).exists()


def test_promtool_check_config():
    if not os.access(PROMTOOL, os.X_OK):
        pytest.skip("promtool not installed")
    # promtool checks that the token's file exists: the compose secret's path, here a scratch
    # file (the same config otherwise, rule files beside it).
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        text = (DEPLOY / "prometheus" / "prometheus.yml").read_text()
        assert "/run/secrets/docguard_admin_token" in text
        token = Path(scratch) / "token"
        token.write_text("t\n")
        (Path(scratch) / "prometheus.yml").write_text(
            text.replace("/run/secrets/docguard_admin_token", str(token)))
        for rule_file in (DEPLOY / "prometheus").glob("alerts*.yml"):
            shutil.copy(rule_file, scratch)
        r = subprocess.run([PROMTOOL, "check", "config", str(Path(scratch) / "prometheus.yml")],
                           capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr


# ------------------------------------------------------------------ Kubernetes

def k8s_objects() -> list[tuple[Path, dict]]:
    out = []
    for p in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        for d in load_yaml_docs(p):
            assert {"apiVersion", "kind", "metadata"} <= set(d), f"{p}: {d.keys()}"
            assert d["metadata"].get("name"), p
            out.append((p, d))
    return out


def test_kubernetes(help_flags, tmp_path):
    objs = k8s_objects()
    kinds = {d["kind"] for _, d in objs}
    assert {"Deployment", "Service", "ConfigMap"} <= kinds
    configmaps = {d["metadata"]["name"]: d for _, d in objs if d["kind"] == "ConfigMap"}
    deployments = [(p, d) for p, d in objs if d["kind"] == "Deployment"]
    docguard_containers = 0
    sidecar = False
    for p, dep in deployments:
        pod = dep["spec"]["template"]
        assert dep["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
        volumes = {v["name"]: v for v in pod["spec"].get("volumes", [])}
        containers = pod["spec"]["containers"]
        for c in containers:
            if not c["image"].startswith("docguard:"):
                continue
            docguard_containers += 1
            sidecar |= len(containers) > 1
            flags = check_docguard_args(c["args"], help_flags)
            admin_port = port_of(flags["--admin"])
            ports = {pt["name"]: pt["containerPort"] for pt in c.get("ports", [])}
            assert admin_port in ports.values(), f"{p}: admin port {admin_port} not a containerPort"
            if flags["--listen"].startswith("unix:"):
                # A socket in a volume the pod's other containers mount, owned by the pod's
                # fsGroup (docguard gives it mode 0660 by default): the application can connect.
                sock = flags["--listen"][len("unix:"):]
                assert sock.endswith(".sock"), f"{p}: drivers need a socket path ending in .sock"
                mount = next((m for m in c["volumeMounts"]
                              if sock.startswith(m["mountPath"].rstrip("/") + "/")), None)
                assert mount and not mount.get("readOnly"), f"{p}: {sock} not in a writable volume"
                assert "emptyDir" in volumes[mount["name"]], f"{p}: share the socket in an emptyDir"
                others = [o for o in containers if o is not c and any(
                    m["name"] == mount["name"] for m in o.get("volumeMounts", []))]
                assert others, f"{p}: no other container mounts {mount['name']}"
                assert pod["spec"].get("securityContext", {}).get("fsGroup"), \
                    f"{p}: set the pod's fsGroup so the application's user may use the socket"
            elif host_of(flags["--listen"]) == "0.0.0.0":
                assert port_of(flags["--listen"]) in ports.values()
            else:
                assert host_of(flags["--listen"]) == "127.0.0.1" and len(containers) > 1

            def probe_port(probe):
                port = probe["httpGet"]["port"]
                return ports[port] if isinstance(port, str) else port

            assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
            assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
            for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
                if kind in c:
                    assert probe_port(c[kind]) == admin_port, f"{p}: {kind} port"
            ann = pod["metadata"]["annotations"]
            assert ann["prometheus.io/scrape"] == "true"
            assert int(ann["prometheus.io/port"]) == admin_port
            assert ann["prometheus.io/path"] == "/metrics"
            sc = {**pod["spec"].get("securityContext", {}), **c.get("securityContext", {})}
            assert sc.get("runAsNonRoot") is True and sc.get("runAsUser", 0) != 0
            # the --config file comes from a ConfigMap in these files, and is valid
            cfg_path = flags["--config"]
            mount = next(m for m in c["volumeMounts"] if cfg_path.startswith(m["mountPath"] + "/"))
            cm = configmaps[volumes[mount["name"]]["configMap"]["name"]]
            key = cfg_path[len(mount["mountPath"]) + 1:]
            # The admin token: a Secret's file in a volume of this pod, named by the variable
            # docguard reads it from; the Secret's files readable by the pod's fsGroup.
            env = {e["name"]: e for e in c.get("env", [])}
            token_path = env["DOCGUARD_ADMIN_TOKEN_FILE"]["value"]
            secret_mount = next(m for m in c["volumeMounts"]
                                if token_path.startswith(m["mountPath"].rstrip("/") + "/"))
            secret = volumes[secret_mount["name"]]["secret"]
            assert secret["secretName"] == "docguard-admin-token", p
            assert f"kubectl create secret generic {secret['secretName']}" in p.read_text(), \
                f"{p}: say how to create the Secret"
            if secret.get("defaultMode", 0o644) & 0o004 == 0:
                assert pod["spec"].get("securityContext", {}).get("fsGroup"), \
                    f"{p}: the Secret's files need the pod's fsGroup to be readable"
            secret_token = token_file(tmp_path)
            check_config(cm["data"][key], tmp_path,
                         extra=[a for k, v in flags.items() if k != "--config" for a in [k, v]],
                         env=dict(no_token_env(), DOCGUARD_ADMIN_TOKEN_FILE=str(secret_token)))
            started_cfg = tmp_path / f"{dep['metadata']['name']}.yaml"
            started_cfg.write_text(cm["data"][key])
            check_started_as_shipped(f"{p.name} {dep['metadata']['name']}", flags,
                                     "DOCGUARD_ADMIN_TOKEN_FILE", tmp_path, started_cfg)
    assert docguard_containers >= 2 and sidecar, "want a standalone Deployment and a sidecar example"
    # Services point at named ports of the pods they select
    for p, svc in [(p, d) for p, d in objs if d["kind"] == "Service"]:
        sel = svc["spec"]["selector"]
        match = [d for _, d in deployments
                 if sel.items() <= d["spec"]["template"]["metadata"]["labels"].items()]
        assert match, f"{p}: selector {sel} matches no Deployment"
        names = {pt["name"] for d in match for c in d["spec"]["template"]["spec"]["containers"]
                 for pt in c.get("ports", [])}
        admin_names = {pt["name"] for d in match for c in d["spec"]["template"]["spec"]["containers"]
                       for pt in c.get("ports", []) if pt["containerPort"] == 9216}
        for pt in svc["spec"]["ports"]:
            assert pt["targetPort"] in names, f"{p}: targetPort {pt['targetPort']}"
            # The admin API is scraped on each pod's own address, never through a Service.
            assert pt["targetPort"] not in admin_names and pt["targetPort"] != 9216, \
                f"{p}: the Service exposes the admin port"


# ------------------------------------------------------------------ dashboard and alerts

def dashboard() -> dict:
    return json.loads((DEPLOY / "grafana" / "dashboards" / "docguard.json").read_text())


def dashboard_targets(d: dict) -> list[tuple[dict, dict]]:
    out = []

    def walk(panels):
        for p in panels:
            walk(p.get("panels", []))
            for t in p.get("targets", []):
                out.append((p, t))

    walk(d["panels"])
    return out


def test_dashboard_structure():
    d = dashboard()
    assert d["uid"] and d["title"]
    variables = {v["name"]: v for v in d["templating"]["list"]}
    assert {"db", "collection"} <= set(variables)
    ds_vars = [v for v in variables.values() if v["type"] == "datasource"]
    assert ds_vars and ds_vars[0]["query"] == "prometheus"
    ds_ref = {"type": "prometheus", "uid": "${%s}" % ds_vars[0]["name"]}
    targets = dashboard_targets(d)
    assert len(targets) >= 20
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for p, t in targets:
        assert p["datasource"] == ds_ref and t["datasource"] == ds_ref, p["title"]
        assert t["expr"].strip(), p["title"]
    # per the issue: these are charted
    exprs = " ".join(t["expr"] for _, t in targets)
    for needed in ("docguard_document_size_bytes_bucket", "docguard_array_length_bucket",
                   "docguard_lookup_total", "docguard_reads_total", "docguard_violations_total",
                   "docguard_commands_total", "docguard_inspection_seconds_bucket",
                   "docguard_connections_active", "docguard_upstream_errors_total"):
        assert needed in exprs, needed
    # collection-scoped metrics are filtered by the db and collection variables
    for p, t in targets:
        for m in ("docguard_commands_total", "docguard_document_size_bytes", "docguard_array_length",
                  "docguard_lookup_total", "docguard_reads_total", "docguard_violations_total"):
            for sel in re.findall(m + r"\w*\{([^}]*)\}", t["expr"]):
                assert 'db=~"$db"' in sel and 'collection=~"$collection"' in sel, (p["title"], sel)


def test_metric_names_exist():
    exported = defined_metrics()
    assert "docguard_violations_total" in exported
    alerts = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text())
    exprs = [t["expr"] for _, t in dashboard_targets(dashboard())]
    exprs += [r["expr"] for g in alerts["groups"] for r in g["rules"]]
    exprs += [v["query"]["query"] for v in dashboard()["templating"]["list"] if v["type"] == "query"]
    used = set().union(*(used_metrics(e) for e in exprs))
    unknown = used - exported - PENDING_METRICS
    assert not unknown, f"metrics used but neither exported nor pending: {unknown}"


def test_pending_metrics_are_exported():
    assert PENDING_METRICS <= defined_metrics(), PENDING_METRICS - defined_metrics()

// Helpers the Node suites share: the environment tests/integration/run.sh sets, a docguard of a
// suite's own (its configuration, free ports, its log), and /metrics read by name and labels.
// Not a test file: `node --test` is given the *.test.mjs files by name.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';

const here = dirname(fileURLToPath(import.meta.url));

export const DIRECT = process.env.DOCGUARD_DIRECT === '1';
export const FERRETDB_URI = process.env.FERRETDB_URI;
export const BIN = process.env.DOCGUARD_BIN || resolve(here, '../../../build/bin/docguard');
// For suites that start their own docguard: nothing to test without one.
export const skipWithoutDocguard = DIRECT ? 'DOCGUARD_DIRECT=1: no docguard under test' : false;

// Suites that start their own docguard need FerretDB's address.
export function requireUpstream() {
  if (!DIRECT && !FERRETDB_URI) throw new Error('set FERRETDB_URI (tests/integration/run.sh does)');
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

// Starts docguard in front of FerretDB with `config` written to work/configName, and waits until
// /healthz answers 200 and `ready()` holds. listen: false leaves the listeners to the
// configuration (a Unix socket). Returns { proc, logPath, uri, admin } (uri: null without a TCP
// listener); throws with the log's tail when docguard does not come up within 20 s.
export async function startDocguard({ work, configName, config, listen = true, ready = () => true }) {
  const lport = listen ? await freePort() : null;
  const admin = `127.0.0.1:${await freePort()}`;
  const cfg = join(work, configName);
  writeFileSync(cfg, config);
  const logPath = join(work, listen ? `docguard-${lport}.log` : 'docguard.log');
  const fd = openSync(logPath, 'a');
  const listenArgs = listen ? ['--listen', `127.0.0.1:${lport}`] : [];
  const proc = spawn(BIN, [...listenArgs, '--upstream', FERRETDB_URI, '--admin', admin,
    '--config', cfg, '--log-format', 'json', '--threads', '2'], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = null;
  proc.once('exit', (code) => { exited = code ?? -1; });
  const deadline = Date.now() + 20000;
  while (Date.now() < deadline) {
    if (exited !== null) break;
    try {
      const r = await fetch(`http://${admin}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (r.status === 200 && ready()) {
        return { proc, logPath, uri: listen ? `mongodb://127.0.0.1:${lport}` : null, admin };
      }
    } catch { /* not up yet */ }
    await sleep(100);
  }
  if (exited === null) proc.kill('SIGKILL');  // up but not ready: no process outlives the suite
  let tail = '';
  try { tail = readFileSync(logPath, 'utf8').split('\n').slice(-20).join('\n'); } catch { /* none */ }
  throw new Error(`docguard did not start (exit ${exited}); log:\n${tail}`);
}

// SIGTERM, SIGKILL after 10 s; resolves to the exit code (undefined when it was not running).
export async function stopDocguard(proc) {
  if (!proc || proc.exitCode !== null) return undefined;
  const done = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
  const code = await done;
  clearTimeout(t);
  return code;
}

// A suite's own docguard (startDocguard) in a fresh work directory, a client through it (`client`,
// `db` on dbName) and one straight to FerretDB (`upstream`, `up`), to read back what the upstream
// holds. Returns them with { work, proc, logPath, uri, admin }; closes what it opened when it
// fails.
export async function openSuite({ workPrefix, configName, config, dbName, clientOptions = {} }) {
  const s = { work: mkdtempSync(join(tmpdir(), workPrefix)) };
  try {
    Object.assign(s, await startDocguard({ work: s.work, configName, config }));
    s.client = new MongoClient(s.uri, { serverSelectionTimeoutMS: 10000, ...clientOptions });
    await s.client.connect();
    s.upstream = new MongoClient(FERRETDB_URI, { directConnection: true, serverSelectionTimeoutMS: 10000 });
    await s.upstream.connect();
  } catch (e) {
    await closeSuite(s);
    throw e;
  }
  s.db = s.client.db(dbName);
  s.up = s.upstream.db(dbName);
  return s;
}

// Drops the suite's database upstream, closes the clients, stops docguard and removes the work
// directory. Returns whether docguard was still running: false means it died during the suite.
export async function closeSuite(s) {
  await s.up?.dropDatabase().catch(() => {});
  await s.client?.close();
  await s.upstream?.close();
  const alive = Boolean(s.proc) && s.proc.exitCode === null;
  await stopDocguard(s.proc);
  if (s.work) rmSync(s.work, { recursive: true, force: true });
  return alive;
}

// The text of http://admin/metrics; throws unless it answers 200.
export async function metricsText(admin) {
  const res = await fetch(`http://${admin}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return await res.text();
}

// The sum of the series of `name` whose labels include every label in `labels`.
export function metricSum(text, name, labels = {}) {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/);
    if (!m || m[1] !== name) continue;
    const ls = {};
    for (const kv of (m[3] || '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) ls[kv[1]] = kv[2];
    if (Object.entries(labels).every(([k, v]) => ls[k] === v)) sum += Number(m[4]);
  }
  return sum;
}

#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) and runs each for a bounded time.
#   scripts/fuzz.sh                        # 20 s per target
#   FUZZ_RUNS=300000 scripts/fuzz.sh       # what CI runs: a fixed number of inputs from a fixed
#                                          # seed and the seed corpus, so the work done does not
#                                          # depend on the machine's speed
#   FUZZ_SECONDS=3600 scripts/fuzz.sh      # the documented long run
# Seeds: the recorded driver messages in tests/fixtures (hex), converted per target.
# A crash, a sanitizer report or undefined behaviour (UBSan is fatal in this build and here)
# leaves crash-* files in build-fuzz/artifacts/ and fails the script. Before the real targets,
# a planted case (fuzz_planted_ub) must fail: otherwise a report would not stop a target, and
# the script says so and fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds="${FUZZ_SECONDS:-20}"
build=build-fuzz
# A unity build (16 sources of a target to a translation unit, as the sanitizer builds of
# scripts/test.sh) with line tables only: the libraries under the targets took 3 minutes of CPU
# time on the 2-core CI machine, and a report's stack trace still names file and line.
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O2 -g1 -DNDEBUG' -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 -DDOCGUARD_FUZZ=ON -DDOCGUARD_WERROR=ON -DDOCGUARD_TESTS=OFF \
  -DDOCGUARD_BENCH=OFF >/dev/null
ninja -C "$build" -j "${DOCGUARD_JOBS:-2}" fuzz_inbound_buffer fuzz_op_msg fuzz_op_query \
  fuzz_op_compressed fuzz_config fuzz_bson fuzz_dump_reader fuzz_catalog fuzz_reply fuzz_json_schema \
  fuzz_recording_redaction fuzz_recording_packet fuzz_planted_ub
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

corpus="$build/corpus"
rm -rf "$corpus"  # seeds only: every run starts from the same corpus
mkdir -p "$build/artifacts"
python3 - "$corpus" <<'PY'
import os, sys, glob, struct
out = sys.argv[1]
for t in ("fuzz_inbound_buffer", "fuzz_op_msg", "fuzz_op_query", "fuzz_op_compressed", "fuzz_config", "fuzz_bson", "fuzz_dump_reader", "fuzz_catalog", "fuzz_reply", "fuzz_json_schema", "fuzz_recording_redaction", "fuzz_recording_packet"):
    os.makedirs(os.path.join(out, t), exist_ok=True)
for path in glob.glob("tests/fixtures/*.hex"):
    raw = bytes.fromhex(open(path).read().strip())
    name = os.path.basename(path)[:-4]
    opcode = struct.unpack("<i", raw[12:16])[0]
    open(os.path.join(out, "fuzz_inbound_buffer", name), "wb").write(b"\x07" + raw)
    # The other targets take the message without its header (they write their own).
    target = {2013: "fuzz_op_msg", 2004: "fuzz_op_query", 1: "fuzz_op_query", 2012: "fuzz_op_compressed"}.get(opcode)
    if target:
        open(os.path.join(out, target, name), "wb").write(raw[16:])
    # fuzz_reply's first byte picks the opcode (0 OP_MSG, 1 OP_REPLY, 2 OP_COMPRESSED) and, with
    # 4 (and 8 for the legacy one), a hello awaiting the reply.
    # fuzz_recording_redaction's first byte: 0 a request, 1 a reply, 3 a reply to an auth step.
    for mode in (0, 1, 3):
        open(os.path.join(out, "fuzz_recording_redaction", f"{name}-{mode}"), "wb").write(bytes([mode]) + raw)
    # fuzz_recording_packet: the message inside a request packet of the recording layout.
    session = b"127.0.0.1:27017\0"
    body = bytes([0]) + struct.pack("<Q", 7) + session + struct.pack("<QQ", 1500, 3) + raw
    open(os.path.join(out, "fuzz_recording_packet", name), "wb").write(struct.pack("<I", len(body) + 4) + body)
    family = {2013: 0, 1: 1, 2012: 2}.get(opcode)
    if family is not None:
        for awaited in (0, 4, 12):
            open(os.path.join(out, "fuzz_reply", f"{name}-{awaited}"), "wb").write(bytes([family | awaited]) + raw[16:])
# Hand-written starting points (tests/fuzz/seeds/TARGET/): the commands the query guardrail and
# the workload ledger judge (find, aggregate, count, distinct, findAndModify, update, delete with
# $or, $text, $elemMatch, sorts, projections), which no recorded driver capture holds.
for path in glob.glob("tests/fuzz/seeds/*/*"):
    target = os.path.basename(os.path.dirname(path))
    open(os.path.join(out, target, "seed-" + os.path.basename(path)), "wb").write(open(path, "rb").read())
# Inputs that once crashed a target stay in its corpus (tests/fuzz/regressions/TARGET/).
for path in glob.glob("tests/fuzz/regressions/*/*"):
    target = os.path.basename(os.path.dirname(path))
    open(os.path.join(out, target, "regression-" + os.path.basename(path)), "wb").write(open(path, "rb").read())
for path in glob.glob("config/*.yaml") + glob.glob("deploy/**/*.yaml", recursive=True):
    open(os.path.join(out, "fuzz_config", os.path.basename(path)), "wb").write(open(path, "rb").read())
# The dump reader starts from the real mongodump archive (inflated) and one collection's .bson.
import gzip
archive = gzip.open("tests/fixtures/dumps/shop/shop.archive.gz").read()
open(os.path.join(out, "fuzz_dump_reader", "shop.archive"), "wb").write(archive[:200000])
customers = gzip.open("tests/fixtures/dumps/shop/dir-gzip/shop/customers.bson.gz").read()
open(os.path.join(out, "fuzz_dump_reader", "customers.bson"), "wb").write(customers)
# The catalog target starts from a dump's index specs and options (metadata.json as BSON is
# not at hand here, so a hand-made listIndexes-like document and a shared-facts document).
import struct as st
def cstr(s): return s.encode() + b"\0"
def doc(fields):
    body = b"".join(fields)
    return st.pack("<i", len(body) + 5) + body + b"\0"
def utf8(k, v): return b"\x02" + cstr(k) + st.pack("<i", len(v) + 1) + cstr(v)
def sub(k, d, t=b"\x03"): return t + cstr(k) + d
def i32(k, v): return b"\x10" + cstr(k) + st.pack("<i", v)
index = doc([sub("key", doc([i32("customerId", 1)])), utf8("name", "customerId_1"),
             b"\x08" + cstr("unique") + b"\x01", i32("expireAfterSeconds", 60)])
for i, kind in enumerate([0, 5, 6]):
    open(os.path.join(out, "fuzz_catalog", f"index{i}"), "wb").write(bytes([kind]) + index)
meta = doc([utf8("db", "shop"), utf8("collection", "orders"),
            sub("indexes", doc([sub("0", doc([utf8("name", "_id_"), sub("keys", doc([sub("0", doc([utf8("field", "_id"), utf8("type", "1")]))]), b"\x04")]))]), b"\x04")])
shared = doc([utf8("_id", "shop.orders"), sub("metadata", meta)])
open(os.path.join(out, "fuzz_catalog", "shared"), "wb").write(b"\x00" + shared)
# fuzz_json_schema: a schema's JSON text, NUL, a document's bytes.
schema = (b'{"bsonType": "object", "required": ["a"], "additionalProperties": false, "properties": '
          b'{"a": {"bsonType": "number", "minimum": 0}, "t": {"items": {"pattern": "^x"}, '
          b'"uniqueItems": true}, "e": {"enum": [1, {"k": [2]}]}}, "anyOf": [{"required": ["a"]}]}')
sample = doc([sub("a", b"\x01\x00\x00\x00", b"\x10"), sub("t", doc([utf8("0", "xy"), utf8("1", "xy")]), b"\x04")])
open(os.path.join(out, "fuzz_json_schema", "seed"), "wb").write(schema + b"\x00" + sample)
PY

# The planted case: a double out of long long's range, cast. It must fail and leave its input.
planted="$build/planted"
rm -rf "$planted" && mkdir -p "$planted/corpus" "$planted/artifacts"
python3 -c 'import struct,sys; sys.stdout.buffer.write(b"U" + struct.pack("<d", 3.25e219))' \
  >"$planted/corpus/out-of-range"
if "$build/tests/fuzz/fuzz_planted_ub" "$planted/corpus" -runs=1 \
    -artifact_prefix="$planted/artifacts/" >"$planted/log" 2>&1 ||
    ! grep -q "runtime error" "$planted/log" || ! ls "$planted/artifacts"/crash-* >/dev/null 2>&1; then
  echo "FAILED: the planted undefined behaviour did not fail its target with an artifact:"
  echo "undefined behaviour is not fatal in this build (see $planted/log)"
  tail -20 "$planted/log"
  exit 1
fi
echo "== fuzz_planted_ub failed as it must: $(grep -m1 -o 'runtime error: .*' "$planted/log")"

status=0
for t in fuzz_inbound_buffer fuzz_op_msg fuzz_op_query fuzz_op_compressed fuzz_config fuzz_bson \
    fuzz_dump_reader fuzz_catalog fuzz_reply fuzz_json_schema fuzz_recording_redaction \
    fuzz_recording_packet; do
  if [ -n "${FUZZ_RUNS:-}" ]; then
    runs=$FUZZ_RUNS
    # A YAML config or a dump costs 20-40 times a wire message per input (1,200-2,100 inputs a
    # second against 30,000-50,000 here); a fifth of the inputs keeps each within a minute.
    case $t in fuzz_config | fuzz_dump_reader) runs=$((FUZZ_RUNS / 5)) ;; esac
    budget=(-runs="$runs" -seed=1)
    echo "== $t ($runs inputs, seed 1)"
  else
    budget=(-max_total_time="$seconds")
    echo "== $t (${seconds}s)"
  fi
  if ! "$build/tests/fuzz/$t" "$corpus/$t" "${budget[@]}" -rss_limit_mb=2048 \
      -max_len=1048576 -artifact_prefix="$build/artifacts/$t-" -print_final_stats=1 \
      2>"$build/$t.log"; then
    echo "FAILED: $t (see $build/$t.log and $build/artifacts/)"
    tail -40 "$build/$t.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "$build/$t.log" | tail -2
  fi
done
exit $status

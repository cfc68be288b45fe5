#!/usr/bin/env python3
"""Charts of a benchmark run: reads the results.csv that scripts/bench.sh writes and
writes PNG and SVG files into OUT_DIR:

  throughput_vs_connections   ops/s of the small-op mix at 16, 64, 256 and 1,000 connections
  p99_vs_connections          p99 latency, same runs
  throughput_vs_doc_size      inserts/s and MiB/s for ~200 B, 4 KiB, 64 KiB and 1 MiB documents
  p99_vs_doc_size             p99 latency, same runs
  cpu_per_op                  proxy CPU (utime+stime) per operation, every scenario; hatched: stime
  memory_per_connection       proxy memory per idle connection

  tests/bench/plot.py build-bench/results.csv docs/bench

Needs matplotlib (Debian: python3-matplotlib). Only the stub-upstream series is drawn: it measures
the proxies; FerretDB's series measures FerretDB. The Unix socket targets (haproxy-unix,
dg-warn-unix) run every scenario: dashed lines, and bars of their own in the CPU and memory charts.
Targets this script does not know are left out.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TARGETS = [  # csv name, label, colour, marker
    ("direct", "direct (no proxy)", "#777777", "o"),
    ("haproxy", "HAProxy (TCP mode)", "#1f77b4", "s"),
    ("mongobetween", "mongobetween", "#2ca02c", "^"),
    ("dg-warn", "docguard (all rules, warn)", "#d62728", "D"),
    ("dg-block", "docguard (all rules, block)", "#ff9896", "d"),
    ("haproxy-unix", "HAProxy, Unix socket", "#17becf", "s"),
    ("dg-warn-unix", "docguard (warn), Unix socket", "#9467bd", "D"),
]


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def load(path):
    rows = [r for r in csv.DictReader(open(path)) if r["series"] in ("stub", "idle")]
    for r in rows:
        for k in ("conns", "doc_bytes", "ops_per_s", "p50_us", "p99_us", "cpu_us_per_op", "rss_kib",
                  "bytes_per_conn", "sys_us_per_op"):
            r[k] = num(r.get(k))
    return rows


def save(fig, out, name):
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out, f"{name}.{ext}"), dpi=120)
    plt.close(fig)
    print(f"plot: {out}/{name}.png, .svg")


def series(rows, target, pick, x, y):
    pts = sorted((r[x], r[y]) for r in rows if r["target"] == target and pick(r)
                 and r[x] is not None and r[y] is not None)
    return [p[0] for p in pts], [p[1] for p in pts]


def line_chart(rows, out, name, pick, x, y, xlabel, ylabel, title, logx=False, transform=None):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    drawn = 0
    for t, label, colour, marker in TARGETS:
        xs, ys = series(rows, t, pick, x, y)
        if not xs:
            continue
        if transform:
            ys = [transform(xv, yv) for xv, yv in zip(xs, ys)]
        ax.plot(xs, ys, label=label, color=colour, marker=marker, linewidth=1.8,
                linestyle="--" if t.endswith("-unix") else "-")
        drawn += 1
    if not drawn:
        plt.close(fig)
        return
    if logx:
        ax.set_xscale("log", base=2)
        ticks = sorted({v for r in rows if pick(r) for v in [r[x]] if v})
        ax.set_xticks(ticks)
        ax.set_xticklabels([size_label(v) if x == "doc_bytes" else f"{v:,.0f}" for v in ticks])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, out, name)


def size_label(b):
    if b >= 1 << 20:
        return f"{b / (1 << 20):g} MiB"
    if b >= 1024:
        return f"{b / 1024:g} KiB"
    return f"{b:g} B"


def bar_chart(out, name, groups, values, ylabel, title, hatched=None, hatched_label=None):
    """groups: list of x labels; values: {target: [value or None per group]}; hatched: the same
    shape, a part of each value drawn hatched inside its bar (the kernel's share of CPU)."""
    present = [t for t in TARGETS if t[0] in values and any(v is not None for v in values[t[0]])]
    if not present:
        return
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(groups) + 2), 4.2))
    width = 0.8 / len(present)
    for i, (t, label, colour, _) in enumerate(present):
        xs = [g + (i - (len(present) - 1) / 2) * width for g in range(len(groups))]
        ys = [v if v is not None else 0 for v in values[t]]
        ax.bar(xs, ys, width, label=label, color=colour)
        if hatched and t in hatched:
            hs = [v if v is not None else 0 for v in hatched[t]]
            ax.bar(xs, hs, width, fill=False, hatch="///", edgecolor="#222222", linewidth=0,
                   label=hatched_label if i == 0 else None)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, out, name)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = load(sys.argv[1])
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    small = lambda r: r["series"] == "stub" and r["scenario"].startswith(("small-", "conns-"))  # noqa: E731
    # Inserts of N bytes, with the small-op mix's ~200-byte insert as the smallest size is not
    # the same operation (it alternates with finds): only the insert scenarios are on this axis.
    sized = lambda r: r["series"] == "stub" and r["scenario"].startswith("insert-")  # noqa: E731

    line_chart(rows, out, "throughput_vs_connections", small, "conns", "ops_per_s", "client connections",
               "operations / s", "Small operations (50% insert ~200 B, 50% find by _id)", logx=True)
    line_chart(rows, out, "p99_vs_connections", small, "conns", "p99_us", "client connections",
               "p99 latency (µs)", "Small operations: p99 latency", logx=True)
    line_chart(rows, out, "throughput_vs_doc_size", sized, "doc_bytes", "ops_per_s", "document size",
               "MiB/s inserted", "Inserts, 8 connections: throughput", logx=True,
               transform=lambda b, ops: ops * b / (1 << 20))
    line_chart(rows, out, "p99_vs_doc_size", sized, "doc_bytes", "p99_us", "document size",
               "p99 latency (µs)", "Inserts, 8 connections: p99 latency", logx=True)

    scen = []
    for r in rows:
        if r["series"] == "stub" and r["scenario"] not in scen:
            scen.append(r["scenario"])
    cpu = {t: [next((r["cpu_us_per_op"] for r in rows if r["series"] == "stub" and r["scenario"] == s
                     and r["target"] == t), None) for s in scen] for t, *_ in TARGETS if t != "direct"}
    kernel = {t: [next((r["sys_us_per_op"] for r in rows if r["series"] == "stub" and r["scenario"] == s
                        and r["target"] == t), None) for s in scen] for t, *_ in TARGETS if t != "direct"}
    # Different scales (small ops ~10 µs, 1 MiB ~300 µs): one chart each.
    small_s = [s for s in scen if not s.startswith("insert-")]
    big_s = [s for s in scen if s.startswith("insert-")]
    for name, subset in (("cpu_per_op_small", small_s), ("cpu_per_op_inserts", big_s)):
        if subset:
            idx = [scen.index(s) for s in subset]
            bar_chart(out, name, subset, {t: [v[i] for i in idx] for t, v in cpu.items()},
                      "proxy CPU per operation (µs)", "Proxy CPU (user + system) per operation",
                      hatched={t: [v[i] for i in idx] for t, v in kernel.items()},
                      hatched_label="hatched: of it in the kernel (system time)")

    idle = {r["target"]: r for r in rows if r["series"] == "idle"}
    if idle:
        vals = {t: [idle[t]["bytes_per_conn"] / 1024 if t in idle and idle[t]["bytes_per_conn"] else None]
                for t, *_ in TARGETS}
        held = max(int(r["conns"] or 0) for r in idle.values())
        bar_chart(out, "memory_per_connection", [f"{held:,} idle connections"], vals,
                  "KiB per connection (proxy RSS)", "Memory per idle client connection")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Where a proxy's CPU goes, by kind of work, from `perf script` output of a cpu-clock recording
with call graphs, profiling before optimising. Reads the samples on stdin, prints one line:

    profile=TARGET samples=N user=..% wake_peer=..% switch=..% tcp=..% syscall_other=..%

- user: the sample's innermost frame is in user space (the proxy's code, libc, libbson ...);
- wake_peer: waking the task that reads the socket just written to (the stack passes through
  sock_def_readable / ep_poll_callback / try_to_wake_up): on loopback the sender runs the
  receiver's TCP input and its wake-up, so every relayed message pays for waking its reader;
- switch: being switched out and back in (schedule, finish_task_switch), after a wake-up
  preempted the proxy on return from send(), or while it sleeps in epoll_wait;
- tcp: the rest of the TCP/IP stack (tcp_*, ip_*, skb, softirq), both directions;
- syscall_other: the rest of the kernel (entry and exit, epoll bookkeeping, fd lookup, timers).

A sample counts once, in the first of these kinds (in that order) whose frames it contains.

    perf record -e cpu-clock -g -p PID -o perf.data -- sleep S
    perf script -i perf.data | tests/bench/kernel_profile.py TARGET
"""

from __future__ import annotations

import sys

WAKE = ("sock_def_readable", "ep_poll_callback", "try_to_wake_up", "__wake_up_common",
        "sock_def_wakeup")
SWITCH = ("finish_task_switch", "__schedule", "schedule_hrtimeout_range", "schedule")
TCP_PREFIXES = ("tcp_", "__tcp_", "ip_", "__ip_", "skb_", "__skb_", "net_rx", "__netif",
                "process_backlog", "__napi", "napi_", "inet_", "__inet_", "sock_", "sk_",
                "_copy_to_iter", "_copy_from_iter", "__dev_queue_xmit", "dev_hard_start",
                "loopback_xmit", "bbr_", "kfree_skb", "__kfree_skb", "consume_skb",
                "handle_softirqs", "do_softirq", "__local_bh_enable")


def classify(frames: list[tuple[str, bool]]) -> str:
    """frames: (symbol, is_kernel), innermost first."""
    if not frames or not frames[0][1]:
        return "user"
    kernel_syms = [s for s, k in frames if k]
    if any(s.startswith(WAKE) for s in kernel_syms):
        return "wake_peer"
    if any(s.startswith(SWITCH) for s in kernel_syms):
        return "switch"
    if any(s.startswith(TCP_PREFIXES) for s in kernel_syms):
        return "tcp"
    return "syscall_other"


def main() -> int:
    target = sys.argv[1] if len(sys.argv) > 1 else "proxy"
    kinds = ["user", "wake_peer", "switch", "tcp", "syscall_other"]
    counts = dict.fromkeys(kinds, 0)
    frames: list[tuple[str, bool]] = []
    in_sample = False

    def flush() -> None:
        if in_sample:
            counts[classify(frames)] += 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            frames, in_sample = [], False
            continue
        if not line.startswith(("\t", " ")):
            flush()
            frames, in_sample = [], True  # a sample's header line
            continue
        parts = line.split(None, 1)
        if len(parts) < 2:
            continue
        sym_dso = parts[1].strip()
        is_kernel = "[kernel.kallsyms]" in sym_dso
        frames.append((sym_dso.split("+", 1)[0].split(" (", 1)[0], is_kernel))
    flush()
    total = sum(counts.values())
    share = " ".join(f"{k}={100.0 * counts[k] / max(total, 1):.1f}%" for k in kinds)
    print(f"profile={target} samples={total} {share}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

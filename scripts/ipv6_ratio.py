#!/usr/bin/env python3
"""IPv6/IPv4 throughput ratios pooled over bench-tun.sh --family "4 6" runs.

Usage: scripts/ipv6_ratio.py RUN.csv... (bench-tun --out files, or
docs/data/bench-tun-ipv6.csv with its `run` column). Pairs the IPv4 and IPv6
transfer of each trial (same tt-serve, same mode and direction), and prints
per mode and direction the median of those per-trial ratios, their quartiles
and count: one figure from many runs on a machine whose single transfers
spread by +-25 %.
"""
import csv
import statistics
import sys

pairs = {}
for n, name in enumerate(sys.argv[1:]):
    with open(name) as f:
        for r in csv.DictReader(f):
            if r["path"] == "kernel":
                continue
            run = r.get("run") or f"{n}"
            key = (r["path"], r["direction"], r["mtu"], run, r["trial"])
            pairs.setdefault(key, {})[r["family"]] = float(r["gbps"])
ratios = {}
for (path, direction, mtu, _, _), v in pairs.items():
    if "4" in v and "6" in v:
        ratios.setdefault((path, direction, mtu), []).append(v["6"] / v["4"])
if not ratios:
    sys.exit("ipv6_ratio: no trial with both families in the input")
for (path, direction, mtu), v in sorted(ratios.items()):
    v.sort()
    q1, q3 = v[len(v) // 4], v[(3 * len(v)) // 4]
    print(f"{path:8} {direction:8} mtu {mtu:>5}: IPv6/IPv4 median {statistics.median(v):.3f} "
          f"(quartiles {q1:.3f}-{q3:.3f}, {len(v)} trials)")

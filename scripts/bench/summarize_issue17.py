#!/usr/bin/env python3
"""Markdown tables (medians) from docs/data/tunnel_loss.csv and docs/data/session_overhead.csv.

  summarize_issue17.py [TUNNEL_CSV] [OVERHEAD_CSV]
"""
import csv
import statistics
import sys
from collections import defaultdict


def tunnel(path):
    goodput, wire, done = defaultdict(list), defaultdict(list), defaultdict(lambda: [0, 0])
    losses, systems = [], []
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row["system"], float(row["loss_percent"]))
            if key[1] not in losses:
                losses.append(key[1])
            if key[0] not in systems:
                systems.append(key[0])
            goodput[key].append(float(row["goodput_MBps"]))  # a failed trial counts as 0
            done[key][1] += 1
            if row["completed"] == "1":
                done[key][0] += 1
                wire[key].append(float(row["wire_per_useful"]))
    print("| loss each way | " + " | ".join(f"{s} MB/s (done)" for s in systems)
          + " | tt/kcptun | tt/direct | " + " | ".join(f"{s} wire/useful" for s in systems) + " |")
    print("|---" * (1 + 2 * len(systems) + 2) + "|")
    for loss in losses:
        med = {s: statistics.median(goodput[(s, loss)]) for s in systems if goodput[(s, loss)]}
        cells = [f"{med.get(s, 0):.2f} ({done[(s, loss)][0]}/{done[(s, loss)][1]})" for s in systems]
        ratio = lambda a, b: f"{med[a] / med[b]:.2f}x" if a in med and b in med and med[b] > 0 else "-"
        wires = [f"{statistics.median(wire[(s, loss)]):.3f}" if wire[(s, loss)] else "-" for s in systems]
        print(f"| {loss:g}% | " + " | ".join(cells) + f" | {ratio('tt-tunnel', 'kcptun')} | "
              f"{ratio('tt-tunnel', 'direct')} | " + " | ".join(wires) + " |")


def overhead(path):
    values = defaultdict(list)
    arms, tests, units = [], [], {}
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["arm"] not in arms:
                arms.append(row["arm"])
            if row["test"] not in tests:
                tests.append(row["test"])
            units[row["test"]] = row["unit"]
            values[(row["arm"], row["test"])].append(float(row["value"]))
    med = {k: statistics.median(v) for k, v in values.items()}
    print("| test (unit) | " + " | ".join(arms) + " | robust cost, kernel | robust cost, udp |")
    print("|---" * (len(arms) + 3) + "|")
    for test in tests:
        cells = [f"{med[(a, test)]:.1f}" if (a, test) in med else "-" for a in arms]
        costs = []
        for transport in ("kernel", "udp"):
            plain, robust = med.get((f"{transport}-plain", test)), med.get((f"{transport}-robust", test))
            costs.append(f"{(plain / robust - 1) * 100:+.1f}%" if plain and robust else "-")
        print(f"| {test} ({units[test]}) | " + " | ".join(cells) + " | " + " | ".join(costs) + " |")
    print()
    print("Robust cost = plain median / robust median - 1 (positive: robust is slower; "
          f"{len(next(iter(values.values())))} rounds).")


if __name__ == "__main__":
    args = sys.argv[1:] or ["docs/data/tunnel_loss.csv", "docs/data/session_overhead.csv"]
    tunnel(args[0])
    print()
    overhead(args[1])

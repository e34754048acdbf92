#!/usr/bin/env python3
"""Summarize sliding_window.sh CSVs (experiment 1, docs/experiments.md).

Usage: summarize_sliding_window.py CSV [CSV ...] [--arms "linux sack40"]

One row per (loss, arm), a column per router: client packets median (range) /
seconds median (slowest), the median against the floor 1000 / (1 - p), and
the echo latency's median p50 / p99 (ms) where the CSV has them. Runs that
did not complete are counted and shown as "n not done"; their packets and
seconds are those until the run was stopped.
"""
import csv
import statistics
import sys


def cell(runs):
    done = [r for r in runs if r["completed"] == "true" and r["verified"] == "true"]
    packets = [int(r["client_packets"]) for r in runs]
    seconds = [float(r["seconds"]) for r in runs if r["seconds"]]
    text = f"{statistics.median(packets):.0f} ({min(packets)}-{max(packets)})"
    if seconds:
        text += f" / {statistics.median(seconds):.2f} ({max(seconds):.2f})"
    messages = int(runs[0]["messages"])
    floor = messages / (1 - int(runs[0]["loss_pct"]) / 100)
    text += f", {statistics.median(packets) / floor:.2f}x"
    p50 = [float(r["latency_p50_ms"]) for r in runs if r.get("latency_p50_ms")]
    p99 = [float(r["latency_p99_ms"]) for r in runs if r.get("latency_p99_ms")]
    if p50 and p99:
        text += f", {statistics.median(p50):.1f}/{statistics.median(p99):.0f} ms"
    if len(done) < len(runs):
        text += f", {len(runs) - len(done)} of {len(runs)} not done"
    return text


def main():
    args = sys.argv[1:]
    arms = None
    if "--arms" in args:
        i = args.index("--arms")
        arms = args[i + 1].split()
        del args[i : i + 2]
    if not args:
        sys.exit(__doc__)
    rows = []
    for path in args:
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    routers = sorted({r["router"] for r in rows})
    keys = sorted({(int(r["loss_pct"]), r["arm"]) for r in rows})
    print("| drop at B | arm | " + " | ".join(f"{r} B" for r in routers) + " |")
    print("|---|---|" + "---|" * len(routers))
    for loss, arm in keys:
        if arms and arm not in arms:
            continue
        cells = []
        for router in routers:
            runs = [r for r in rows
                    if r["router"] == router and int(r["loss_pct"]) == loss and r["arm"] == arm]
            cells.append(cell(runs) if runs else "-")
        print(f"| {loss}% | {arm} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

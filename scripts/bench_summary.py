#!/usr/bin/env python3
"""Prints the medians of a google-benchmark JSON file in decimal units."""
import json
import sys


def main(path):
    with open(path) as f:
        data = json.load(f)
    ctx = data.get("context", {})
    print(f"# {ctx.get('date', '')}  {ctx.get('num_cpus', '?')} cpus  "
          f"{ctx.get('library_build_type', '')} google-benchmark")
    rows = [b for b in data["benchmarks"]
            if b.get("aggregate_name", "median") == "median"]
    width = max((len(b["run_name"]) for b in rows), default=10)
    for b in rows:
        parts = []
        if "bytes_per_second" in b:
            parts.append(f"{b['bytes_per_second'] * 8 / 1e9:10.2f} Gbit/s")
        if "items_per_second" in b:
            parts.append(f"{b['items_per_second'] / 1e6:10.2f} M items/s")
        for key in ("classic_gbps",):
            if key in b:
                parts.append(f"{key}={b[key]:.1f}")
        print(f"{b['run_name']:<{width}}  {'  '.join(parts)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/release/bench.json")

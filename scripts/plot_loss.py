#!/usr/bin/python3
"""Plots goodput against loss from scripts/bench-loss.sh CSV output.

    scripts/plot_loss.py docs/data/loss-kernel.csv docs/img/loss-kernel.png

One line per transport:cc (median of the trials at each loss rate); a loss
rate where any trial did not complete is drawn as a hollow marker at the
median of the completed trials, or left out if none completed. Uses
Debian's python3-matplotlib (hence /usr/bin/python3).
"""
import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(csv_path, png_path):
    runs = defaultdict(lambda: defaultdict(list))
    sizes = set()
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            key = f"{row['transport']}:{row['cc']}"
            runs[key][float(row["loss_percent"])].append(
                (row["completed"] == "1", float(row["goodput_MBps"])))
            sizes.add(int(row["size_bytes"]))
    fig, ax = plt.subplots(figsize=(8, 5))
    for key, by_loss in sorted(runs.items()):
        xs, ys, hollow_x, hollow_y = [], [], [], []
        for loss in sorted(by_loss):
            trials = by_loss[loss]
            done = [g for ok, g in trials if ok]
            if not done:
                continue
            median = statistics.median(done)
            if len(done) == len(trials):
                xs.append(loss)
                ys.append(median)
            else:
                hollow_x.append(loss)
                hollow_y.append(median)
        line, = ax.plot(xs, ys, marker="o", label=key)
        if hollow_x:
            ax.plot(hollow_x, hollow_y, marker="o", linestyle="none",
                    markerfacecolor="none", color=line.get_color())
    ax.set_yscale("log")
    ax.set_xlabel("random loss each way (%)")
    ax.set_ylabel("goodput (MB/s, median)")
    size_text = ", ".join(f"{s / 2**20:g} MiB" for s in sorted(sizes))
    ax.set_title(f"file transfer goodput vs kernel-level loss ({size_text})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)
    print(f"wrote {png_path}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot_loss.py RESULTS.csv OUT.png")
    main(sys.argv[1], sys.argv[2])

#!/usr/bin/python3
"""Plots goodput against loss from scripts/bench-loss.sh CSV output, and the
sender's state over one transfer from a `file-send --trace` CSV.

    scripts/plot_loss.py docs/data/loss-kernel.csv docs/img/loss-kernel.png
    scripts/plot_loss.py --trace trace.csv docs/img/cwnd-trace.png [TITLE]

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


def plot_trace(csv_path, png_path, title):
    """cwnd, ssthresh and bytes in flight (KiB) over time, with the smoothed RTT
    and cumulative retransmissions on a second axis."""
    t, cwnd, ssthresh, flight, srtt, retrans = [], [], [], [], [], []
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            t.append(float(row["time_s"]))
            cwnd.append(int(row["cwnd"]) / 1024)
            s = int(row["ssthresh"])
            ssthresh.append(s / 1024 if s < 2**31 else float("nan"))
            flight.append(int(row["bytes_in_flight"]) / 1024)
            srtt.append(float(row["srtt_ms"]))
            retrans.append(int(row["retransmits"]))
    if not t:
        sys.exit(f"{csv_path}: no rows")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True,
                                      gridspec_kw={"height_ratios": [2, 1]})
    top.plot(t, cwnd, label="cwnd", drawstyle="steps-post")
    top.plot(t, ssthresh, label="ssthresh", drawstyle="steps-post", linestyle="--")
    top.plot(t, flight, label="bytes in flight", drawstyle="steps-post", alpha=0.6)
    top.set_ylabel("KiB")
    top.grid(True, alpha=0.3)
    top.legend(loc="upper right")
    top.set_title(title or f"sender state ({csv_path})")
    bottom.plot(t, srtt, label="srtt (ms)", color="tab:purple")
    bottom.set_ylabel("srtt (ms)")
    bottom.set_xlabel("time (s)")
    bottom.grid(True, alpha=0.3)
    right = bottom.twinx()
    right.plot(t, retrans, label="retransmits", color="tab:red", drawstyle="steps-post")
    right.set_ylabel("retransmits")
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)
    print(f"wrote {png_path}")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--trace":
        plot_trace(sys.argv[2], sys.argv[3], " ".join(sys.argv[4:]))
    elif len(sys.argv) == 3:
        main(sys.argv[1], sys.argv[2])
    else:
        sys.exit("usage: plot_loss.py RESULTS.csv OUT.png | --trace TRACE.csv OUT.png [TITLE]")

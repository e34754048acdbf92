#!/usr/bin/python3
"""Plots scripts/experiments/stop_and_wait.sh's CSV: time to send the messages
against the window (fixed:N), one line per path and loss rate, per message size,
with the UDP flood, tinytcp's default and kernel TCP as horizontal references.

    scripts/experiments/plot_stop_and_wait.py docs/data/stop_and_wait.csv docs/img/stop_and_wait.png

Medians over trials. Uses Debian's python3-matplotlib (hence /usr/bin/python3).
"""
import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(csv_path, png_path):
    windows = defaultdict(lambda: defaultdict(list))  # (size, path, loss) -> window -> seconds
    refs = defaultdict(list)  # (size, path, loss, arm) -> seconds
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            key = (int(row["size"]), row["path"], row["loss_pct"])
            if row["arm"] == "fixed":
                windows[key][int(row["window"])].append(float(row["seconds"]))
            else:
                refs[key + (row["arm"],)].append(float(row["seconds"]))
    sizes = sorted({k[0] for k in windows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        for (s, path, loss), by_window in sorted(windows.items()):
            if s != size:
                continue
            xs = sorted(by_window)
            line, = ax.plot(xs, [statistics.median(by_window[x]) for x in xs], marker="o",
                            label=f"{path}, {loss}% loss: fixed:N")
            for arm, style in (("default", "--"), ("kernel", ":")):
                values = refs.get((s, path, loss, arm))
                if values:
                    ax.axhline(statistics.median(values), linestyle=style, color=line.get_color(),
                               linewidth=0.8, label=f"{path}, {loss}%: {arm}")
        ax.set_xlabel("window (segments)")
        ax.set_ylabel("seconds")
        ax.set_yscale("log")
        ax.set_title(f"{size}-byte messages")
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

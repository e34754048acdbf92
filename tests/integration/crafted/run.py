#!/usr/bin/python3
"""Runs the crafted-packet cases against one TCP echo server.

    run.py --target linux|tinytcp --iface IF --src IP --dst IP [--port 7] [--http-port 80]
           [--ethernet SRC_MAC DST_MAC] [--flood-src IP] [--case NAME ...] [--list]

Run inside the namespace that holds IF (crafted_test.sh sets everything up).
With IPv6 addresses (--src and --dst) it runs the IPv6 cases (cases6.py)
instead of the IPv4 ones (cases.py).
`--src` must be an address the namespace's kernel does not own, so that it
never answers the server's segments itself. Prints one line per case
(PASS / FAIL / XFAIL / XPASS) and the packet exchange of every case that did
not pass; exits 1 if any case failed or passed against an xfail marker.
"""
import argparse
import sys
import time
import traceback

sys.path.insert(0, __import__("os").path.dirname(__file__))

from cases import CASES  # noqa: E402
from cases6 import CASES6  # noqa: E402
from conn import CaseFailure, Context  # noqa: E402
from wire import Link  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--target", required=False, default="")
    p.add_argument("--iface")
    p.add_argument("--src")
    p.add_argument("--dst")
    p.add_argument("--port", type=int, default=7)
    p.add_argument("--http-port", type=int, default=80, help="an HTTP server that closes first")
    p.add_argument("--ethernet", nargs=2, metavar=("SRC_MAC", "DST_MAC"))
    p.add_argument("--flood-src")
    p.add_argument("--case", action="append", default=[])
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    args = p.parse_args()
    family = 6 if args.dst and ":" in args.dst else 4
    cases = CASES6 if family == 6 else CASES

    if args.list:
        for c in CASES + CASES6:
            xf = "; ".join(f"xfail {t}: {r}" for t, r in c.xfail.items())
            print(f"{c.name} [{c.rfc}] {c.doc}" + (f" ({xf})" if xf else ""))
        return 0

    known = {c.name for c in CASES + CASES6}
    unknown = set(args.case) - known
    if unknown:
        sys.exit(f"unknown case(s): {', '.join(sorted(unknown))}")
    link_args = (args.iface, bool(args.ethernet), *(args.ethernet or (None, None)), family)
    link = Link(*link_args)
    ctx = Context(link, args.src, args.dst, args.port, args.target, args.flood_src,
                  args.http_port)
    ctx.link_args = link_args

    counts = {"PASS": 0, "FAIL": 0, "XFAIL": 0, "XPASS": 0}
    started = time.monotonic()
    for c in cases:
        if args.case and c.name not in args.case:
            continue
        ctx.new_case()
        t0 = time.monotonic()
        error = None
        try:
            c.fn(ctx)
        except CaseFailure as e:
            error = str(e)
        except Exception:  # a bug in the case is a failure too, with its traceback
            error = traceback.format_exc()
        finally:
            for conn in ctx.conns:
                if not conn.closed and conn.irs is not None:
                    conn.reset()
        reason = c.xfail.get(args.target)
        if error is None:
            verdict = "XPASS" if reason else "PASS"
        else:
            verdict = "XFAIL" if reason else "FAIL"
        counts[verdict] += 1
        notes = f" ({'; '.join(ctx.notes)})" if ctx.notes else ""
        print(f"{verdict:5} {args.target}: {c.name} [{c.rfc}] {time.monotonic() - t0:.1f} s{notes}",
              flush=True)
        if error is not None:
            print(f"      {error.strip()}")
        if reason:
            print(f"      expected to fail: {reason}")
        if verdict in ("FAIL", "XFAIL", "XPASS"):
            print("\n".join(ctx.trace.lines), flush=True)
    link.close()
    print(f"{args.target}: {counts['PASS']} passed, {counts['FAIL']} failed, "
          f"{counts['XFAIL']} expected failures, {counts['XPASS']} unexpectedly passed "
          f"in {time.monotonic() - started:.1f} s")
    return 1 if counts["FAIL"] or counts["XPASS"] else 0


if __name__ == "__main__":
    sys.exit(main())

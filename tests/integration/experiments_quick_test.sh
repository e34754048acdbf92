#!/usr/bin/env bash
# The experiment scripts of issue 18 (scripts/experiments/*.sh,
# docs/experiments.md) in their --quick mode with the build's binaries, so a
# change that breaks one shows in CI, not at the next full run:
#   sliding_window.sh    100 echoed messages at 10% and 50% drops, SACK and no
#                        SACK, through a kernel router and through tinyrouter:
#                        every run completes with its echo verified
#   stop_and_wait.sh     1000 messages, windows 1 and 4 and the UDP flood floor,
#                        at 0% and 1% loss: every TCP row verified
#   router_forwarding.sh one round of 1 s over kernel forwarding and tinyrouter
#                        with and without offloads: stream and rr measured on
#                        every path
# The CSVs go to a scratch folder, never to docs/data. Usage:
# experiments_quick_test.sh BIN_DIR. Skips (77) without root, fails under CI=true.
set -euo pipefail
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
cd "$(dirname "$0")/../.."

. tests/integration/lib.sh
tt_require ip iptables ethtool python3
for tool in tt-perf tinyrouter; do
  [ -x "$BIN/$tool" ] || { echo "FAIL: no $tool in $BIN" >&2; exit 1; }
done

work=$(mktemp -d /tmp/tt-experiments.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# run NAME SCRIPT ARGS...: the script's own exit status must be 0.
run() {
  local name=$1
  shift
  echo "--- $name" >&2
  "$@" --quick --bin "$BIN" --out "$work/$name.csv" >"$work/$name.log" 2>&1 ||
    { tail -n 20 "$work/$name.log" >&2; fail "$name exited $?"; }
}

run sliding_window scripts/experiments/sliding_window.sh
python3 - "$work/sliding_window.csv" <<'PY' || fail "sliding_window rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = {(router, loss, arm) for router in ("kernel", "tinyrouter")
        for loss in ("10", "50") for arm in ("sack", "nosack")}
got = {(r["router"], r["loss_pct"], r["arm"]) for r in rows}
assert got == want, f"runs {sorted(got)} != {sorted(want)}"
for r in rows:
    assert r["completed"] == "true" and r["verified"] == "true", r
    assert int(r["client_packets"]) >= 100, r        # at least one packet per message
    assert float(r["latency_p50_ms"]) >= 0, r
print(f"sliding_window: {len(rows)} runs verified")
PY

run stop_and_wait scripts/experiments/stop_and_wait.sh
python3 - "$work/stop_and_wait.csv" <<'PY' || fail "stop_and_wait rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
assert {r["arm"] for r in rows} >= {"flood", "fixed"}, {r["arm"] for r in rows}
for r in rows:
    # The raw UDP flood is the floor: under loss it delivers what it delivers.
    assert r["verified"] == "true" or (r["arm"] == "flood" and r["loss_pct"] != "0"), r
    assert float(r["seconds"]) > 0, r
print(f"stop_and_wait: {len(rows)} rows, every TCP row verified")
PY

run router_forwarding scripts/experiments/router_forwarding.sh
python3 - "$work/router_forwarding.csv" <<'PY' || fail "router_forwarding rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
paths = {r["path"] for r in rows}
assert len(paths) == 3 and "kernel" in paths, paths
for r in rows:
    if r["test"] == "stream":
        assert float(r["bits_per_second"]) > 0, r
    else:
        assert float(r["transactions_per_second"]) > 0, r
print(f"router_forwarding: {len(rows)} rows, paths {sorted(paths)}")
PY
echo "experiments_quick_test: ok"

#!/usr/bin/env bash
# Long fuzzing runs toward a target number of executions per fuzz target,
# resumable. Each target runs in chunks of at most CHUNK seconds, niced, each
# chunk under a shared lock on /tmp/locks/quiet (a benchmark takes it
# exclusively, so it waits for one chunk at most and then runs alone). The
# state lives outside build/ so a clean build or a new session resumes it:
# in $TINYTCP_FUZZ_STATE (default /var/tmp/tinytcp-fuzz), the corpus in
# corpus/<target>, executions and seconds in long/<target>.state, crashes in
# artifacts/. After every chunk docs/data/fuzz_runs.csv is rewritten; a
# target with no state file starts from its row there (its earlier totals),
# and a target that has not run keeps its row as it was.
# tests/fuzz/seeds/<target> and tests/fuzz/regressions/<target> are read as
# seed inputs at the start of every chunk.
#
# Order: targets that have not run yet get one chunk each (to measure their
# rate), then the fastest target still short of the goal runs, chunk after
# chunk, so the most targets reach the goal first. A target that crashed is
# left alone (its reproducer in artifacts/) until its binary is
# newer than the reproducer (rebuilt with the fix); its crash count stays.
#
#   ./scripts/fuzz-long.sh [-n EXECUTIONS] [-c CHUNK_SECONDS] [-u UNTIL_EPOCH] [target...]
#   e.g. ./scripts/fuzz-long.sh -n 1e8 -u "$(date -d '01:15' +%s)"
# The fuzz preset must be built (scripts/fuzz.sh builds it).
#
# -entropic=0: libFuzzer's entropic scheduler updates a frequency for every
# feature of every run; the component targets hit thousands per run. In short
# runs from a small corpus that was 30-50% of their time (perf); from a large
# corpus it costs about nothing, but loading the corpus at each chunk's start
# took fuzz_host 5.5 s with it, 1.9 s without. Coverage after 60 s was never
# lower without it (docs/fuzzing.md, "Where the time goes").
set -euo pipefail
cd "$(dirname "$0")/.."

goal=100000000
chunk=120
until_epoch=0
while getopts "n:c:u:" opt; do
  case $opt in
    n) goal=$(awk -v n="$OPTARG" 'BEGIN { printf "%d", n }') ;;
    c) chunk=$OPTARG ;;
    u) until_epoch=$OPTARG ;;
    *) echo "usage: $0 [-n EXECUTIONS] [-c CHUNK_SECONDS] [-u UNTIL_EPOCH] [target...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ "$chunk" -gt 120 ]; then
  echo "fuzz-long: chunks are at most 120 s (the quiet lock's promise)" >&2
  exit 2
fi

bin_dir=build/fuzz/bin
root=${TINYTCP_FUZZ_STATE:-/var/tmp/tinytcp-fuzz}
state_dir=$root/long
corpus_dir=$root/corpus
artifacts=$root/artifacts
csv=docs/data/fuzz_runs.csv
mkdir -p "$state_dir" "$artifacts" "$corpus_dir" docs/data /tmp/locks

# The totals so far (target -> whole csv row), so a target with no state file
# resumes from them and one that does not run keeps its row.
declare -A old_row=()
if [ -f "$csv" ]; then
  while IFS=, read -r t rest; do
    [ "$t" = target ] || old_row[$t]="$t,$rest"
  done <"$csv"
fi
for t in "${!old_row[@]}"; do
  if [ ! -f "$state_dir/$t.state" ]; then
    IFS=, read -r _ execs secs _ _ _ crashes <<<"${old_row[$t]}"
    echo "$execs $secs $crashes" >"$state_dir/$t.state"
  fi
done

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for bin in "$bin_dir"/fuzz_*; do targets+=("$(basename "$bin")"); done
fi
for t in "${targets[@]}"; do
  if [ ! -x "$bin_dir/$t" ]; then
    echo "fuzz-long: no $bin_dir/$t (build the fuzz preset first)" >&2
    exit 2
  fi
done

# state file: executions seconds crashes
read_state() {
  if [ -f "$state_dir/$1.state" ]; then cat "$state_dir/$1.state"; else echo "0 0 0"; fi
}

write_csv() {
  local tmp="$csv.tmp.$$"  # two runs may share the csv
  echo "target,executions,seconds,exec_per_s,corpus_files,corpus_bytes,crashes" >"$tmp"
  local state t
  for state in "$state_dir"/*.state; do  # every target run so far, not only this run's
    [ -f "$state" ] || continue
    t=$(basename "$state" .state)
    read -r execs secs crashes <"$state"
    local dir=$corpus_dir/$t files=0 bytes=0
    if [ -d "$dir" ]; then
      files=$(find "$dir" -type f | wc -l)
      bytes=$(find "$dir" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
    elif [ -n "${old_row[$t]:-}" ]; then  # not run here: its corpus is elsewhere
      IFS=, read -r _ _ _ _ files bytes _ <<<"${old_row[$t]}"
    fi
    local rate
    rate=$(awk -v e="$execs" -v s="$secs" 'BEGIN { printf "%d", (s > 0) ? e / s : 0 }')
    echo "$t,$execs,$secs,$rate,$files,$bytes,$crashes" >>"$tmp"
  done
  mv "$tmp" "$csv"
}

run_chunk() {
  local t=$1 log=$state_dir/$1.log
  mkdir -p "$corpus_dir/$t"
  local start end status=0 seeds=() execs secs crashes
  read -r execs secs crashes < <(read_state "$t")
  # Hand-made seeds and past crashes are read too (new finds go to the corpus).
  for d in "tests/fuzz/seeds/$t" "tests/fuzz/regressions/$t"; do
    [ -d "$d" ] && seeds+=("$d")
  done
  # The clock starts once the lock is held: waiting for a benchmark is not fuzzing.
  flock -s /tmp/locks/quiet bash -c 'date +%s >"$0.start"; exec nice -n 19 "$@"' "$log" \
    "$bin_dir/$t" -max_total_time="$chunk" -runs=$((goal - execs)) -timeout=25 -print_final_stats=1 \
    -entropic=0 -artifact_prefix="$artifacts/$t-" "$corpus_dir/$t" "${seeds[@]}" \
    >"$log" 2>&1 || status=$?
  end=$(date +%s)
  start=$(cat "$log.start")
  local ran
  ran=$(awk '/stat::number_of_executed_units:/ { print $2 }' "$log" | tail -1)
  execs=$((execs + ${ran:-0}))
  secs=$((secs + end - start))
  if [ "$status" -ne 0 ]; then
    crashes=$((crashes + 1))
    echo "fuzz-long: $t CRASHED (exit $status); log $log, artifacts $artifacts/$t-*" >&2
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5 >&2 || true
  fi
  echo "$execs $secs $crashes" >"$state_dir/$t.state"
  echo "fuzz-long: $t +${ran:-0} executions in $((end - start)) s, total $execs in $secs s"
  write_csv
}

while :; do
  if [ "$until_epoch" -gt 0 ] && [ "$(($(date +%s) + chunk))" -gt "$until_epoch" ]; then
    echo "fuzz-long: stopping, another chunk would pass the deadline"
    break
  fi
  next="" best=-1
  for t in "${targets[@]}"; do
    read -r execs secs crashes < <(read_state "$t")
    [ "$execs" -lt "$goal" ] || continue
    # A crash blocks the target until its binary is rebuilt (the fix).
    if [ "$crashes" -gt 0 ] && find "$artifacts" -name "$t-*" -newer "$bin_dir/$t" |
      grep -q .; then
      continue
    fi
    if [ "$secs" -eq 0 ]; then next=$t; break; fi
    rate=$((execs / secs))
    if [ "$rate" -gt "$best" ]; then best=$rate next=$t; fi
  done
  if [ -z "$next" ]; then
    echo "fuzz-long: every target reached $goal executions (or crashed)"
    break
  fi
  run_chunk "$next"
done
write_csv
cat "$csv"

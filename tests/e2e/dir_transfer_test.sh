#!/usr/bin/env bash
# End to end: file-send DIR and file-recv recreate a directory tree on
# loopback, over tinytcp in the UDP tunnel (and once over kernel TCP): nested
# and empty directories, zero-length files, spaces and UTF-8 in names,
# symlinks and FIFOs skipped with a warning; sending the tree again confirms
# every file; a changed file is refused (exit 3) while the rest is confirmed;
# resume of a tree after the receiver is killed mid-file. Trees are compared
# byte for byte. Usage: dir_transfer_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
WORK=$(mktemp -d /tmp/tt-e2e-dir.XXXXXX)
PIDS=()
. "$(dirname "$0")/lib.sh"
start_recv() {  # port, extra args...
  local port=$1; shift
  "$BIN/file-recv" --listen "$port" --output "$WORK/out" --transport "$T" --once "$@" \
    >"$WORK/recv.out" 2>"$WORK/recv.err" &
  RECV_PID=$!
  PIDS+=("$RECV_PID")
  wait_listen "$port"
}
# Same directories and regular files (names, bytes) under both; symlinks and
# special files of the source are expected to be missing.
same_tree() {  # src dst
  python3 - "$1" "$2" <<'PY' || fail "trees differ"
import os, stat, sys
def walk(root):
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if stat.S_ISDIR(st.st_mode):
                out[rel] = "dir"
            elif stat.S_ISREG(st.st_mode):
                out[rel] = open(p, "rb").read()
    return out
a, b = walk(sys.argv[1]), walk(sys.argv[2])
if a != b:
    print("only in source:", sorted(set(a) - set(b)), "only in copy:", sorted(set(b) - set(a)),
          "differ:", sorted(k for k in set(a) & set(b) if a[k] != b[k]), file=sys.stderr)
    sys.exit(1)
PY
}

make_tree() {  # dir, big file size
  local d=$1
  mkdir -p "$d/e1/e2/e3" "$d/sub dir" "$d/.hidden"
  head -c 100000 /dev/urandom >"$d/a.txt"
  : >"$d/empty.txt"
  head -c 1000000 /dev/urandom >"$d/sub dir/b c.bin"
  echo "unicode" >"$d/sub dir/ünï ☃.txt"
  echo "dot" >"$d/.hidden/x"
  head -c "$2" /dev/zero | tr '\0' 'q' >"$d/sub dir/big.bin"
  head -c 1000 /dev/urandom >>"$d/sub dir/big.bin"
  ln -s /etc/passwd "$d/link-out"
  ln -s a.txt "$d/link-in"
  mkfifo "$d/fifo"
}

suite() {  # transport
  T=$1
  rm -rf "$WORK/in" "$WORK/out"
  mkdir -p "$WORK/in" "$WORK/out"
  make_tree "$WORK/in/tree" 3000000

  echo "--- [$T] a tree in one session"
  port=$(free_port)
  start_recv "$port"
  set +e
  "$BIN/file-send" --transport "$T" "$WORK/in/tree" --to "127.0.0.1:$port" >"$WORK/send.out" 2>"$WORK/send.err"
  rc=$?
  set -e
  [ "$rc" = 0 ] || fail "sender exit $rc: $(cat "$WORK/send.err")"
  wait "$RECV_PID" || fail "receiver exit status: $(cat "$WORK/recv.err")"
  same_tree "$WORK/in/tree" "$WORK/out/tree"
  [ -z "$(find "$WORK/out" -name '*.part')" ] || fail "partial file left behind"
  [ ! -e "$WORK/out/tree/link-out" ] && [ ! -e "$WORK/out/tree/fifo" ] || fail "special file sent"
  grep -q "warning: skipping symlink .*link-out" "$WORK/send.err" || fail "no symlink warning"
  grep -q "warning: skipping special file .*fifo" "$WORK/send.err" || fail "no fifo warning"
  [ "$(grep -c "integrity verified" "$WORK/send.out")" = 6 ] || fail "per-file lines: $(cat "$WORK/send.out")"
  grep -q "^tree/: 6 files (0 already present), 6 directories, 4101012 bytes" "$WORK/send.out" \
    || fail "sender session summary: $(tail -1 "$WORK/send.out")"
  grep -q "^tree/sub dir/ünï ☃.txt: 8 bytes, integrity verified" "$WORK/send.out" || fail "unicode line"
  grep -q "^session from 127.0.0.1:[0-9]*: 6 files (0 already present), 6 directories" "$WORK/recv.out" \
    || fail "receiver session summary: $(cat "$WORK/recv.out")"

  echo "--- [$T] the same tree again: every file confirmed, nothing resent"
  port=$(free_port)
  start_recv "$port"
  "$BIN/file-send" --transport "$T" "$WORK/in/tree" --to "127.0.0.1:$port" --json >"$WORK/send.json" 2>/dev/null
  wait "$RECV_PID" || fail "receiver exit status (again)"
  python3 - "$WORK/send.json" <<'PY' || fail "second run: $(cat "$WORK/send.json")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
files, session = lines[:-1], lines[-1]
assert len(files) == 6 and all(f["already_present"] and f["bytes_sent"] == 0 for f in files), files
assert session["files"] == 6 and session["already_present"] == 6 and session["bytes_sent"] == 0, session
assert session["verified"] is True and session["failed"] == 0, session
PY

  echo "--- [$T] a changed file is refused (exit 3), the rest confirmed"
  printf 'X' | dd of="$WORK/out/tree/a.txt" bs=1 seek=10 conv=notrunc status=none
  port=$(free_port)
  start_recv "$port"
  set +e
  "$BIN/file-send" --transport "$T" "$WORK/in/tree" --to "127.0.0.1:$port" >"$WORK/send.out" 2>"$WORK/send.err"
  rc=$?
  set -e
  [ "$rc" = 3 ] || fail "expected exit 3, got $rc: $(cat "$WORK/send.err")"
  grep -q "tree/a.txt: .*file exists" "$WORK/send.err" || fail "message: $(cat "$WORK/send.err")"
  grep -q "5 files (5 already present).*1 failed" "$WORK/send.out" || fail "summary: $(cat "$WORK/send.out")"
  wait "$RECV_PID" && fail "receiver should report failure"
  [ "$(head -c 11 "$WORK/out/tree/a.txt" | tail -c 1)" = X ] || fail "existing file was replaced"

  echo "--- [$T] an empty directory, and nested empty ones"
  mkdir -p "$WORK/in/hollow/x/y/z" "$WORK/in/hollow/w"
  port=$(free_port)
  start_recv "$port"
  "$BIN/file-send" --transport "$T" "$WORK/in/hollow/" --to "127.0.0.1:$port" >"$WORK/send.out"
  wait "$RECV_PID" || fail "receiver exit status (hollow)"
  same_tree "$WORK/in/hollow" "$WORK/out/hollow"
  grep -q "^hollow/: 0 files (0 already present), 5 directories" "$WORK/send.out" || fail "hollow summary"
}

resume() {  # a tree whose receiver is killed in the middle of a large file
  T=udp
  echo "--- [udp] resume a tree after the receiver is killed mid-file"
  rm -rf "$WORK/in" "$WORK/out"
  mkdir -p "$WORK/in" "$WORK/out"
  make_tree "$WORK/in/tree" 200000000
  port=$(free_port)
  start_recv "$port"
  "$BIN/file-send" "$WORK/in/tree" --to "127.0.0.1:$port" --idle-timeout 3 >"$WORK/send1.out" 2>"$WORK/send1.err" &
  SEND_PID=$!
  PIDS+=("$SEND_PID")
  part=
  for _ in $(seq 600); do
    part=$(find "$WORK/out" -name '.big.bin.*.part' -size +20M | head -1)
    [ -n "$part" ] && break
    sleep 0.01
  done
  [ -n "$part" ] || fail "no partial file appeared"
  kill -9 "$RECV_PID"
  set +e; wait "$SEND_PID"; rc=$?; set -e
  [ "$rc" = 5 ] || fail "interrupted sender: expected exit 5, got $rc ($(cat "$WORK/send1.err"))"
  grep -q "run the same command again to resume" "$WORK/send1.err" || fail "no resume hint"
  [ ! -e "$WORK/out/tree/sub dir/big.bin" ] || fail "final name appeared before verification"
  held=$(stat -c %s "$part")
  echo "partial file holds $held bytes"
  port=$(free_port)
  start_recv "$port"
  "$BIN/file-send" "$WORK/in/tree" --to "127.0.0.1:$port" --json >"$WORK/resume.json" 2>/dev/null
  wait "$RECV_PID" || fail "receiver exit status (resume)"
  python3 - "$WORK/resume.json" "$held" <<'PY' || fail "resume: $(cat "$WORK/resume.json")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
files = {f["file"]: f for f in lines[:-1]}
held = int(sys.argv[2])
assert files["tree/sub dir/big.bin"]["resumed_from"] == held, files["tree/sub dir/big.bin"]
assert files["tree/a.txt"]["already_present"], files["tree/a.txt"]
assert files["tree/sub dir/b c.bin"]["already_present"]
assert not files["tree/sub dir/ünï ☃.txt"]["already_present"]
assert lines[-1]["verified"] is True
PY
  same_tree "$WORK/in/tree" "$WORK/out/tree"
  [ -z "$(find "$WORK/out" -name '*.part')" ] || fail "partial file left after success"
}

suite udp
suite kernel
resume
echo "1 passed, 0 failed"

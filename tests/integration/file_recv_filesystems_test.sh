#!/usr/bin/env bash
# file-recv on file systems other than the one /tmp is on, each mounted in a
# private mount namespace (nothing outside this test sees them):
#  - ramfs: refuses O_DIRECT (EINVAL), so the sink falls back to writes through
#    the page cache; and it reports no size at all (f_blocks 0), which must not
#    read as "0 bytes free".
#  - tmpfs with size=0 (unlimited; also no size) and a small tmpfs (16 MiB):
#    a file larger than the free space is refused up front (exit 3), and
#    nothing is written.
# Each transfer runs over the UDP tunnel on loopback and is checked byte for
# byte. Usage: file_recv_filesystems_test.sh BIN_DIR
set -euo pipefail
BIN=${1:?usage: $0 BIN_DIR}
HERE=$(dirname "$0")
. "$HERE/lib.sh"
tt_require unshare mount
[ "${TT_IN_MOUNT_NS:-}" = 1 ] || exec unshare --mount --propagation private env TT_IN_MOUNT_NS=1 "$0" "$@"

WORK=$(mktemp -d /tmp/tt-fs.XXXXXX)
PIDS=()
. "$HERE/../e2e/lib.sh"  # fail, free_port, wait_listen; cleanup on exit
MOUNTS=()
trap 'for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || true; done; cleanup' EXIT
mkdir -p "$WORK/in"
head -c 5000000 /dev/urandom >"$WORK/in/data.bin"
head -c 4097 /dev/urandom >>"$WORK/in/data.bin"  # a short last block
head -c 20000000 /dev/zero >"$WORK/in/big.bin"

transfer() {  # output dir, file, expected file-send exit status
  local out=$1 file=$2 want_rc=$3 port rc
  port=$(free_port)
  # No free-space reserve (default 64 MiB): the file systems here are 16 MiB,
  # and what is checked is the size each one reports.
  "$BIN/file-recv" --listen "$port" --output "$out" --once --free-reserve 0 \
    >"$WORK/recv.out" 2>"$WORK/recv.err" &
  RECV_PID=$!
  PIDS+=("$RECV_PID")
  wait_listen "$port"
  set +e
  "$BIN/file-send" "$file" --to "127.0.0.1:$port" --json >"$WORK/send.json" 2>"$WORK/send.err"
  rc=$?
  set -e
  wait "$RECV_PID" || true
  [ "$rc" = "$want_rc" ] ||
    fail "$file -> $out: exit $rc, wanted $want_rc: $(cat "$WORK/send.err") / $(tail -2 "$WORK/recv.err")"
}

for fs in ramfs "tmpfs size=0" "tmpfs size=16m"; do
  type=${fs%% *}
  opts=${fs#"$type"}
  dir="$WORK/mnt-${type}${opts// /}"
  mkdir -p "$dir"
  mount -t "$type" ${opts:+-o ${opts# }} none "$dir"
  MOUNTS+=("$dir")
  echo "--- $fs: a 5 MB file arrives intact"
  transfer "$dir" "$WORK/in/data.bin" 0
  cmp "$WORK/in/data.bin" "$dir/data.bin" || fail "$fs: data differs"
  grep -q '"verified":true' "$WORK/send.json" || fail "$fs: $(cat "$WORK/send.json")"
  if [ "$fs" = "tmpfs size=16m" ]; then
    echo "--- $fs: a 20 MB file is refused for space, nothing written"
    transfer "$dir" "$WORK/in/big.bin" 3
    grep -q "free" "$WORK/send.err" || fail "refusal message: $(cat "$WORK/send.err")"
    [ -z "$(find "$dir" -name '*big.bin*')" ] || fail "refused file left something: $(ls -a "$dir")"
  fi
  umount "$dir"
done
echo "OK"

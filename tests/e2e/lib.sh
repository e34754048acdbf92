# Shared by the e2e scripts (sourced; not a test itself). The caller sets
# BIN, WORK (a fresh temporary directory) and PIDS=() first; processes whose
# PIDs are in PIDS are killed, and WORK is removed, when the script exits.
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A port free for both TCP and UDP: ask the kernel, then release it.
free_port() {
  python3 - <<'PY'
import socket
while True:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    port = u.getsockname()[1]
    t = socket.socket()
    try:
        t.bind(("127.0.0.1", port))
        print(port)
        break
    except OSError:
        pass
    finally:
        t.close()
        u.close()
PY
}
# The receiver logs when it listens (a probe connection would use up --once).
wait_listen() {  # port
  for _ in $(seq 200); do
    if grep -q "listening on port $1" "$WORK/recv.err" 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  fail "receiver did not listen on $1: $(cat "$WORK/recv.err")"
}

# Shell helpers for the benchmark scripts (sourced, not run).

# listening NS PROTO PORT: waits up to 6 s until something in namespace NS
# listens on PROTO (tcp or udp) PORT; else says so on stderr and returns 1.
listening() {
  local flag=-ltn
  [ "$2" = udp ] && flag=-lun
  for _ in $(seq 300); do
    ip netns exec "$1" ss -H "$flag" "sport = :$3" | grep -q . && return 0
    sleep 0.02
  done
  echo "$(basename "$0" .sh): nothing listening on $2 port $3 in $1" >&2
  return 1
}

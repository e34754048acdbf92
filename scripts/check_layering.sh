#!/usr/bin/env bash
# Fails when a file of src/ includes a layer it may not use (ARCHITECTURE.md),
# or when the sans-I/O core reaches for sockets, threads, devices or a clock.
set -euo pipefail
cd "$(dirname "$0")/.."

# layer -> the layers it may include (itself included).
declare -A ALLOWED=(
  [util]="util"
  [stream]="util stream"
  [wire]="util wire"
  [tcp]="util stream tcp"
  [net]="util wire net"
  [stack]="util stream wire tcp net stack"
  [io]="util io"
  [proto]="util stream proto"
  [session]="util stream session"
  [runtime]="util stream wire tcp net stack io proto session runtime"
)
CORE="stream wire tcp net stack proto session"
# System headers and calls the core may not use: I/O, threads, clocks.
FORBIDDEN_HEADERS='<(sys/socket|sys/epoll|sys/ioctl|sys/select|poll|unistd|fcntl|thread|mutex|condition_variable|future|pcap[^>]*|linux/[^>]*|netinet/[^>]*|arpa/[^>]*|net/if[^>]*|fstream|cstdio)\.?h?>'
FORBIDDEN_CALLS='(steady_clock|system_clock|high_resolution_clock)::now|sleep_for|sleep_until|std::thread|getenv|(^|[^A-Za-z0-9_])::(socket|read|write|open|send|recv|sendto|recvfrom|ioctl)\('

status=0
for dir in src/*/; do
  layer=$(basename "$dir")
  if [ -z "${ALLOWED[$layer]+x}" ]; then
    echo "layering: src/$layer is not a layer of ARCHITECTURE.md" >&2
    status=1
    continue
  fi
  while IFS= read -r -d '' file; do
    while IFS= read -r inc; do
      target=${inc%%/*}
      if [[ " ${ALLOWED[$layer]} " != *" $target "* ]]; then
        echo "layering: $file includes \"$inc\" but $layer may use only: ${ALLOWED[$layer]}" >&2
        status=1
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
    if [[ " $CORE " == *" $layer "* ]]; then
      if grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*$FORBIDDEN_HEADERS" "$file" >&2; then
        echo "layering: $file is in the sans-I/O core ($layer) and includes an I/O, thread or clock header" >&2
        status=1
      fi
      if grep -nE "$FORBIDDEN_CALLS" "$file" >&2; then
        echo "layering: $file is in the sans-I/O core ($layer) and reads a clock, sleeps, starts a thread or does I/O" >&2
        status=1
      fi
    fi
  done < <(find "$dir" -type f \( -name '*.hh' -o -name '*.cc' \) -print0)
done

if [ "$status" -eq 0 ]; then
  echo "layering: ok"
fi
exit "$status"

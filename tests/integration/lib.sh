# Sourced by the privileged test scripts of this folder.
#
# tt_require ROOT_NEEDS...: skips the test (exit 77) unless it runs as root with
# /dev/net/tun and each named command; under CI=true it fails instead, because
# privileged tests must run in CI, never skip.

tt_skip() {
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: $1 (CI=true: privileged tests must run, not skip)" >&2
    exit 1
  fi
  echo "SKIP: $1" >&2
  exit 77
}

tt_require() {
  [ "$(id -u)" -eq 0 ] || tt_skip "needs root"
  [ -c /dev/net/tun ] || tt_skip "needs /dev/net/tun"
  local cmd
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null || tt_skip "needs $cmd"
  done
}

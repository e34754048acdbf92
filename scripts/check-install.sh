#!/usr/bin/env bash
# scripts/check-install.sh [BUILD_DIR]: what a user of the release meets.
#
#  1. a release build of what is installed (target tinytcp_installed: the
#     libraries and apps): in BUILD_DIR (default build/release) if it is
#     configured, else a fresh one in a scratch dir;
#  2. `cmake --install` to a scratch prefix: the files that must be there, the
#     umbrella header compiled from the prefix alone, every app's --version;
#  3. both examples built out of tree against the prefix, with CMake
#     (find_package) and with make + pkg-config;
#  4. run: the echo client against tt-serve and webget against the HTTP
#     example, all from the prefix, over the UDP tunnel on loopback; as root
#     also the echo client through a TUN device (the installed tun.sh) in a
#     throwaway network namespace against a kernel echo server (socat);
#  5. the .deb (CPack): its contents (dpkg-deb -c), unpacked into a scratch
#     root (dpkg -x), the apps run from there, the echo example built
#     against it with CMake and pkg-config.
# Exits non-zero with one FAIL line on the first problem.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
BUILD=${1:-build/release}
WORK=$(mktemp -d /tmp/tt-check-install.XXXXXX)
NS="tt-install-$$"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ "$(id -u)" -eq 0 ] && ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$NS"; then
    ip netns pids "$NS" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "check-install: FAIL: $*" >&2; exit 1; }
step() { echo "--- check-install: $*"; }
start=$(date +%s)

# 1. The release build.
if [ -f "$BUILD/CMakeCache.txt" ]; then
  step "release build in $BUILD (reused)"
  cmake --build "$BUILD" -j "$(nproc)" --target tinytcp_installed >"$WORK/build.log" 2>&1 \
    || { tail -30 "$WORK/build.log"; fail "build of $BUILD"; }
else
  BUILD=$WORK/build
  step "release build in $BUILD (fresh, libraries and apps only)"
  cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DTINYTCP_TESTS=OFF -DTINYTCP_BENCHMARKS=OFF >"$WORK/configure.log" 2>&1 || { tail -30 "$WORK/configure.log"; fail "configure"; }
  cmake --build "$BUILD" -j "$(nproc)" --target tinytcp_installed >"$WORK/build.log" 2>&1 \
    || { tail -30 "$WORK/build.log"; fail "build"; }
fi
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
[ -n "$version" ] || fail "no project version in $BUILD/CMakeCache.txt"

# 2. Install to a scratch prefix.
PREFIX=$WORK/prefix
step "cmake --install $BUILD --prefix $PREFIX"
cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1 || { tail -20 "$WORK/install.log"; fail "cmake --install"; }
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
apps=()
for dir in "$SRC"/apps/*/; do
  app=$(basename "$dir")
  [ "$app" != common ] && ls "$dir"/*.cc >/dev/null 2>&1 && apps+=("$app")
done
expect_files() {  # root file...
  local root=$1; shift
  for f in "$@"; do [ -e "$root/$f" ] || fail "$root/$f is missing"; done
}
expect_files "$PREFIX" "$libdir/libtinytcp_util.a" "$libdir/libtinytcp_stack.a" "$libdir/libtinytcp_io.a" \
  include/tinytcp/tinytcp.hh include/tinytcp/util/version.hh include/tinytcp/util/version_number.hh \
  include/tinytcp/stack/host.hh include/tinytcp/tcp/congestion \
  "$libdir/cmake/tinytcp/tinytcpConfig.cmake" "$libdir/cmake/tinytcp/tinytcpConfigVersion.cmake" \
  "$libdir/cmake/tinytcp/tinytcpTargets.cmake" "$libdir/pkgconfig/tinytcp.pc" \
  share/tinytcp/scripts/tun.sh share/tinytcp/scripts/tap.sh share/doc/tinytcp/README.md \
  share/doc/tinytcp/CHANGELOG.md share/doc/tinytcp/docs/io.md
for app in "${apps[@]}"; do
  expect_files "$PREFIX" "bin/$app"
  line=$("$PREFIX/bin/$app" --version) || fail "$app --version"
  [[ $line == "$app $version"* ]] || fail "$app --version printed '$line'"
  if command -v help2man >/dev/null; then expect_files "$PREFIX" "share/man/man1/$app.1"; fi
done
echo "installed: $(find "$PREFIX" -type f | wc -l) files, ${#apps[@]} apps, version $version"

export PKG_CONFIG_PATH=$PREFIX/$libdir/pkgconfig
step "pkg-config: $(pkg-config --modversion tinytcp)"
[ "$(pkg-config --modversion tinytcp)" = "$version" ] || fail "pkg-config version"
# Compiled with nothing but the prefix and the system: the umbrella header.
mkdir -p "$WORK/umbrella"
printf '#include <tinytcp/tinytcp.hh>\nint main() { return tinytcp::version().empty(); }\n' >"$WORK/umbrella/main.cc"
# shellcheck disable=SC2046
g++ -std=c++17 -Wall -Wextra -Werror $(pkg-config --cflags tinytcp) -o "$WORK/umbrella/main" \
  "$WORK/umbrella/main.cc" $(pkg-config --libs tinytcp) 2>"$WORK/umbrella.log" \
  || { head -30 "$WORK/umbrella.log"; fail "the umbrella header does not compile from the prefix"; }
"$WORK/umbrella/main" || fail "umbrella program"

# 3. The examples, out of tree, against the prefix: CMake and pkg-config.
cp -r "$SRC/examples" "$WORK/examples"
build_examples() {  # prefix_for_cmake pkg_config_path label
  for ex in echo-client:echo_client http-server:http_server; do
    local dir=${ex%%:*} bin=${ex##*:}
    cmake -S "$WORK/examples/$dir" -B "$WORK/cmake-$3-$dir" -G Ninja -DCMAKE_PREFIX_PATH="$1" \
      -DCMAKE_BUILD_TYPE=Release >"$WORK/ex.log" 2>&1 && cmake --build "$WORK/cmake-$3-$dir" >>"$WORK/ex.log" 2>&1 \
      || { tail -30 "$WORK/ex.log"; fail "$dir with CMake against $3"; }
    rm -f "$WORK/examples/$dir/$bin"
    PKG_CONFIG_PATH=$2 make -s -C "$WORK/examples/$dir" >"$WORK/ex.log" 2>&1 \
      || { tail -30 "$WORK/ex.log"; fail "$dir with make + pkg-config against $3"; }
    mv "$WORK/examples/$dir/$bin" "$WORK/pc-$3-$bin"
  done
}
step "examples with CMake and with pkg-config against the prefix"
build_examples "$PREFIX" "$PKG_CONFIG_PATH" prefix

# 4. Run them, with the installed apps on the other end.
free_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() {  # file pattern
  for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "no '$2' in $1: $(cat "$1")"
}
step "echo client (CMake build) against the installed tt-serve over the UDP tunnel"
a=$(free_port); b=$(free_port)
"$PREFIX/bin/tt-serve" --dev "udp:127.0.0.1:$b@$a" --address 169.254.0.1 --echo 7 2>"$WORK/serve.err" &
PIDS+=($!)
wait_for "$WORK/serve.err" "serving on"
out=$(timeout 30 "$WORK/cmake-prefix-echo-client/echo_client" "udp:127.0.0.1:$a@$b" 169.254.0.1 7 "echo over udp") \
  || fail "echo_client over the UDP tunnel: $out"
[ "$out" = "echo over udp" ] || fail "echo_client printed '$out'"
kill "${PIDS[0]}"; wait "${PIDS[0]}" 2>/dev/null || true; PIDS=()

step "installed webget against the HTTP example (pkg-config build) over the UDP tunnel"
a=$(free_port); b=$(free_port)
"$WORK/pc-prefix-http_server" "udp:127.0.0.1:$b@$a" 80 --once 2>"$WORK/http.err" &
PIDS+=($!)
wait_for "$WORK/http.err" "listening on port 80"
out=$(timeout 30 "$PREFIX/bin/webget" -q --timeout 20 --dev "udp:127.0.0.1:$a@$b" --address 169.254.0.2 \
  http://169.254.0.9/) || fail "webget from the HTTP example: $out"
[ "$out" = "hello from tinytcp" ] || fail "HTTP example answered '$out'"
wait "${PIDS[0]}" || fail "http_server --once exited non-zero"; PIDS=()

if [ "$(id -u)" -eq 0 ] && [ -c /dev/net/tun ] && command -v socat >/dev/null; then
  step "echo client through tun199 in netns $NS against a kernel echo server (socat)"
  "$PREFIX/share/tinytcp/scripts/tun.sh" start 199 --netns "$NS" >/dev/null
  ip netns exec "$NS" ip link set lo up
  ip netns exec "$NS" socat TCP-LISTEN:7,bind=169.254.199.1,reuseaddr,fork EXEC:cat &
  PIDS+=($!)
  for _ in $(seq 100); do ip netns exec "$NS" ss -ltn | grep -q '169.254.199.1:7 ' && break; sleep 0.05; done
  out=$(ip netns exec "$NS" timeout 30 "$WORK/pc-prefix-echo_client" tun199 169.254.199.1 7 "echo over tun") \
    || fail "echo_client through TUN: $out"
  [ "$out" = "echo over tun" ] || fail "echo_client through TUN printed '$out'"
else
  step "not root (or no /dev/net/tun, socat): the TUN run is skipped"
fi

# 5. The .deb.
step "cpack -G DEB"
(cd "$BUILD" && cpack -G DEB -B "$WORK/pkg" >"$WORK/cpack.log" 2>&1) || { tail -30 "$WORK/cpack.log"; fail "cpack"; }
deb=$(ls "$WORK"/pkg/tinytcp_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "cpack made no tinytcp_*.deb: $(ls "$WORK/pkg")"
dpkg-deb -I "$deb" | grep -E '^ (Package|Version|Depends):' | sed 's/^ /  /'
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$WORK/deb.list"
debroot_libdir=$(grep -m1 '/libtinytcp_util\.a$' "$WORK/deb.list" | sed 's|/libtinytcp_util\.a$||; s|^/usr/||')
[ -n "$debroot_libdir" ] || fail "the .deb has no libtinytcp_util.a"
for f in /usr/include/tinytcp/tinytcp.hh "/usr/$debroot_libdir/pkgconfig/tinytcp.pc" \
  "/usr/$debroot_libdir/cmake/tinytcp/tinytcpConfig.cmake" /usr/share/tinytcp/scripts/tun.sh \
  /usr/share/doc/tinytcp/README.md "${apps[@]/#//usr/bin/}"; do
  grep -qx "$f" "$WORK/deb.list" || fail "the .deb lacks $f"
done
ROOT=$WORK/root
dpkg -x "$deb" "$ROOT"
for app in "${apps[@]}"; do
  line=$("$ROOT/usr/bin/$app" --version) || fail "$app --version from the .deb"
  [[ $line == "$app $version"* ]] || fail "$app --version from the .deb printed '$line'"
done
step "examples against the unpacked .deb"
build_examples "$ROOT/usr" "$ROOT/usr/$debroot_libdir/pkgconfig" deb
echo "check-install: ok ($(grep -c . "$WORK/deb.list") paths in $(basename "$deb"), $(( $(date +%s) - start )) s)"

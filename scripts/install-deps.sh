#!/usr/bin/env bash
# Installs every Debian package tinytcp needs to build, test, benchmark and demo.
# Idempotent: one `apt-get update`, then installs only what is missing.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ clang clang-format clang-tidy libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev libspdlog-dev libssl-dev libpcap-dev libcli11-dev nlohmann-json3-dev
  liburing-dev
  iproute2 iptables ethtool iputils-ping tcpdump tshark curl socat procps
  kcptun sockperf
  python3 python3-matplotlib python3-scapy
  valgrind
  help2man
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer for it.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"

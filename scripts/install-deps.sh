#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages gnncheck needs to build and test (Debian 12, Ubuntu 24.04).
# Runs apt-get only for what is missing; uses sudo when not root.
#
#   bash scripts/install-deps.sh               # build and test
#   bash scripts/install-deps.sh --sanitizers  # also clang and its runtimes (libFuzzer, ASan) for
#                                              # scripts/fuzz.sh and scripts/ci-extra.sh
set -euo pipefail
pkgs=(build-essential cmake ninja-build ccache pkg-config
      libeigen3-dev libomp-dev libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
      libgtest-dev libgmock-dev googletest librapidcheck-dev libbenchmark-dev
      python3 python3-numpy python3-scipy python3-jsonschema
      pybind11-dev python3-dev python3-pytest python3-pytest-xdist python3-torch python3-yaml)
# Headless Chromium renders index.html for reports_render_test (about 10 s on 2 cores). Debian only:
# Ubuntu's chromium is a snap, which containers lack; there the test skips and says why.
if grep -qs '^ID=debian' /etc/os-release; then pkgs+=(chromium); fi
for arg in "$@"; do
  case "$arg" in
    --sanitizers) pkgs+=(clang libclang-rt-dev) ;;
    *) echo "install-deps.sh: unknown argument '$arg' (expected --sanitizers)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

#!/usr/bin/env bash
# Installs everything HiveGate needs on a Debian 12 machine with Node 20: Debian packages (ffmpeg, and
# Chromium for the browser tests), pnpm, and the workspace's dependencies. Safe to run again.
#   bash scripts/install.sh          # what the demo needs
#   bash scripts/install.sh --test   # also what the tests need (Chromium, a running Postgres, test database)
set -euo pipefail
cd "$(dirname "$0")/.."

want_tests=0
[[ "${1:-}" == "--test" ]] && want_tests=1

sudo_if_needed() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

apt_packages=(ffmpeg)
# python3-onnx: the test of the 8-bit model rewrite (agent/tools/qdq.py); valgrind: it stands in for an x86 CPU
# without VNNI in the test of 8-bit models there (agent/test/onnx-x86-overflow.test.ts); qemu-user-static: it
# stands in for a Raspberry Pi's cores in the test of the 8-bit models on arm64 (agent/test/onnx-arm64.test.ts).
[[ $want_tests -eq 1 ]] && apt_packages+=(chromium shellcheck python3-onnx python3-numpy valgrind qemu-user-static)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "Installing Debian packages: ${missing[*]}"
  sudo_if_needed apt-get update -qq
  DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v pnpm >/dev/null 2>&1; then
  echo "Installing pnpm"
  sudo_if_needed npm install -g pnpm@10 >/dev/null
fi

# better-sqlite3 builds from source here; node-gyp must use the installed Node headers, not download them.
export npm_config_nodedir="${npm_config_nodedir:-/usr}"
export ONNXRUNTIME_NODE_INSTALL=skip
pnpm install --frozen-lockfile --reporter=silent

if [[ $want_tests -eq 1 ]]; then
  bash scripts/postgres-up.sh
  bash scripts/arm64-node.sh --setup
fi

#!/usr/bin/env bash
# Runs Node.js for arm64 under qemu, as on a Raspberry Pi, so the agent's 8-bit models can be checked on the
# integer kernels a Pi uses (agent/test/onnx-arm64.test.ts) on an x86 machine.
#   bash scripts/arm64-node.sh --setup                           # fetch Debian's arm64 Node.js once (needs qemu-user-static)
#   bash scripts/arm64-node.sh --cpu cortex-a76 SCRIPT [ARGS…]   # Pi 5 core (dot-product instructions); cortex-a72: Pi 4
# Debian's arm64 packages are unpacked into a folder, not installed: the machine's own apt state is left alone.
set -euo pipefail

root="${HIVEGATE_ARM64_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/hivegate/arm64-node}"
node="$root/sysroot/usr/bin/node"

setup() {
  [[ -x "$node" ]] && return
  command -v qemu-aarch64-static >/dev/null || { echo "qemu-aarch64-static is missing: apt-get install qemu-user-static" >&2; exit 1; }
  local work="$root.partial"
  rm -rf "$work" && mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/sysroot"
  touch "$work/status"
  # A private package index for arm64 alone, beside the machine's own.
  local apt=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64 -o "Dir::State::Lists=$work/lists"
    -o "Dir::Cache=$work/cache" -o "Dir::State::status=$work/status" -o Debug::NoLocking=1)
  # (apt warns that it fetches as root, not as its own user, into these private folders: expected here.)
  apt-get "${apt[@]}" update -qq 2>&1 | { grep -v unsandboxed || true; } >&2
  local packages
  mapfile -t packages < <(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances nodejs | grep -E '^[a-z0-9]' | sort -u)
  (cd "$work/debs" && apt-get "${apt[@]}" download -qq "${packages[@]}") 2>&1 | { grep -v unsandboxed || true; } >&2
  for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/sysroot"; done
  [[ -x "$work/sysroot/usr/bin/node" ]] || { echo "arm64 Node.js did not unpack into $work/sysroot" >&2; exit 1; }
  rm -rf "$root" && mkdir -p "$root" && mv "$work/sysroot" "$root/sysroot" && rm -rf "$work"
  echo "arm64 Node.js $(run cortex-a76 -e 'process.stdout.write(process.version)') ready in $root"
}

# /proc/cpuinfo of two cores of the given CPU. onnxruntime reads it to pick its kernels and crashes on the host's
# x86 one, so each run sees this file instead, bound over the real one in a mount namespace of its own.
cpuinfo() {
  local part variant features="fp asimd evtstrm crc32 cpuid"
  case "$1" in
    cortex-a72) part=0xd08 variant=0x0 ;;
    cortex-a76) part=0xd0b variant=0x4 features="fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp" ;;
    *) echo "unknown CPU $1: cortex-a72 (Raspberry Pi 4) or cortex-a76 (Raspberry Pi 5)" >&2; exit 2 ;;
  esac
  for core in 0 1; do
    printf 'processor\t: %d\nBogoMIPS\t: 108.00\nFeatures\t: %s\nCPU implementer\t: 0x41\nCPU architecture: 8\n' "$core" "$features"
    printf 'CPU variant\t: %s\nCPU part\t: %s\nCPU revision\t: 1\n\n' "$variant" "$part"
  done
}

run() {
  local cpu="$1" info
  shift
  info="$(mktemp)"
  cpuinfo "$cpu" >"$info"
  # Root may make a mount namespace outright; anyone else through a user namespace of their own.
  local unshare=(unshare -m)
  [[ $(id -u) -eq 0 ]] || unshare=(unshare -rm)
  local status=0
  # shellcheck disable=SC2016 # $1 and $@ are the inner shell's
  "${unshare[@]}" sh -c 'mount --bind "$1" /proc/cpuinfo && shift && exec "$@"' sh "$info" \
    qemu-aarch64-static -cpu "$cpu" -L "$root/sysroot" "$node" "$@" || status=$?
  rm -f "$info"
  return "$status"
}

case "${1:-}" in
  --setup) setup ;;
  --cpu)
    [[ $# -ge 3 ]] || { echo "usage: $0 --cpu cortex-a72|cortex-a76 SCRIPT [ARGS…]" >&2; exit 2; }
    [[ -x "$node" ]] || { echo "no arm64 Node.js in $root: run bash scripts/arm64-node.sh --setup" >&2; exit 1; }
    cpu="$2"
    shift 2
    run "$cpu" "$@"
    ;;
  *) echo "usage: $0 --setup | --cpu cortex-a72|cortex-a76 SCRIPT [ARGS…]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Builds the agent bundle a Pi installs offline: the agent, its production dependencies for Linux on arm64 and
# x86-64 (esbuild for tsx, onnxruntime's CPU libraries; better-sqlite3 is rebuilt from its source on the Pi when
# it was built here for another CPU) and install/. Run in the workspace; needs pnpm and the npm registry.
#   bash agent/install/pack.sh                       # -> ./hivegate-agent-VERSION.tar.gz
#   bash agent/install/pack.sh --out FILE.tar.gz
#   bash agent/install/pack.sh --dir DIR             # an unpacked bundle instead
set -euo pipefail

agent_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=$(node -p "require('$agent_dir/package.json').version")
out=''
dir=''
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out=${2:?--out needs a file}; shift ;;
    --dir) dir=${2:?--dir needs a folder}; shift ;;
    *) echo "pack.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ -n $out || -n $dir ]] || out="$PWD/hivegate-agent-$version.tar.gz"

work=''
if [[ -z $dir ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  dir=$work/hivegate-agent
fi
rm -rf "$dir"

# better-sqlite3 builds from source (its prebuilt download needs the internet); node-gyp must use the local
# Node headers. onnxruntime-node's install script fetches GPU libraries: skipped, the CPU provider is bundled.
export npm_config_nodedir="${npm_config_nodedir:-/usr}"
export ONNXRUNTIME_NODE_INSTALL=skip
(cd "$agent_dir/.." && pnpm --filter @hivegate/agent deploy --prod --legacy --os=linux --cpu=arm64 --cpu=x64 --libc=glibc "$dir" >/dev/null)

# onnxruntime-node carries every platform's binaries (~290 MB); a Linux device needs only its own two.
find "$dir/node_modules/.pnpm" -path '*/onnxruntime-node/bin/napi-v*' -mindepth 1 -maxdepth 6 -type d \( -name darwin -o -name win32 \) -prune -exec rm -rf {} +

if [[ -n $out ]]; then
  tar -C "$(dirname "$dir")" -czf "$out" "$(basename "$dir")"
  echo "agent bundle: $out ($(du -h "$out" | cut -f1)); on the device: tar -xzf $(basename "$out") && sudo hivegate-agent/install/install.sh --help"
else
  echo "agent bundle in $dir"
fi

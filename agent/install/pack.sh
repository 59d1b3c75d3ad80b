#!/usr/bin/env bash
# Builds the agent bundle a Pi installs offline: the agent, its production dependencies for Linux on arm64 and
# x86-64 (esbuild for tsx, onnxruntime's CPU libraries; better-sqlite3 is rebuilt from its source on the Pi when
# it was built here for another CPU) and install/. Run in the workspace; needs pnpm and the npm registry.
#   bash agent/install/pack.sh                       # -> ./hivegate-agent-VERSION.tar.gz
#   bash agent/install/pack.sh --out FILE.tar.gz
#   bash agent/install/pack.sh --dir DIR             # an unpacked bundle instead (a new or empty folder, or one
#                                                    # this script made before, which it replaces)
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

# Left in every bundle: the one kind of folder --dir may delete. `--dir /opt` or `--dir .` once emptied that folder.
marker=.hivegate-agent-bundle

work=''
# Set once the folder is ours to delete: a build that fails leaves no half bundle, which a rerun would refuse.
made=''
cleanup() {
  if [[ -n $made && ! -f $made/$marker ]]; then rm -rf "$made"; fi
  if [[ -n $work ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT
if [[ -z $dir ]]; then
  work=$(mktemp -d)
  dir=$work/hivegate-agent
fi
if [[ -e $dir || -L $dir ]]; then
  if [[ -f $dir/$marker && ! -L $dir ]]; then
    rm -rf "$dir"
  elif [[ -d $dir && ! -L $dir && -z $(ls -A "$dir") ]]; then
    rmdir "$dir"
  else
    echo "pack.sh: --dir $dir exists and is not a bundle pack.sh made (it has no $marker): nothing was changed; name a new folder, or empty this one first" >&2
    exit 2
  fi
fi
made=$dir

# better-sqlite3 builds from source (its prebuilt download needs the internet); node-gyp must use the local
# Node headers. onnxruntime-node's install script fetches GPU libraries: skipped, the CPU provider is bundled.
export npm_config_nodedir="${npm_config_nodedir:-/usr}"
export ONNXRUNTIME_NODE_INSTALL=skip
(cd "$agent_dir/.." && pnpm --filter @hivegate/agent deploy --prod --legacy --os=linux --cpu=arm64 --cpu=x64 --libc=glibc "$dir" >/dev/null)
echo "made by agent/install/pack.sh: pack.sh --dir may delete and rebuild this folder" >"$dir/$marker"

# onnxruntime-node carries every platform's binaries (~290 MB); a Linux device needs only its own two.
find "$dir/node_modules/.pnpm" -path '*/onnxruntime-node/bin/napi-v*' -mindepth 1 -maxdepth 6 -type d \( -name darwin -o -name win32 \) -prune -exec rm -rf {} +

if [[ -n $out ]]; then
  tar -C "$(dirname "$dir")" -czf "$out" "$(basename "$dir")"
  echo "agent bundle: $out ($(du -h "$out" | cut -f1)); on the device: tar -xzf $(basename "$out") && sudo hivegate-agent/install/install.sh --help"
else
  echo "agent bundle in $dir"
fi

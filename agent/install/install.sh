#!/usr/bin/env bash
# Installs the HiveGate entrance observer agent as a systemd service on Raspberry Pi OS / Debian 12 (arm64 or x86-64).
#
#   sudo ./install.sh --cloud https://hives.example --token TOKEN --hive 7 --box 3   # install (or repair)
#   sudo ./install.sh --upgrade [--from hivegate-agent-X.tar.gz]                     # new code, same config, restart
#   sudo ./install.sh --uninstall [--purge]                                          # remove (--purge: config, data, user)
#   ./install.sh --dry-run …                                                         # print the plan, change nothing
#   ./install.sh --render-config FILE --cloud URL --hive H --box B [--source S]      # write the config only
#   ./install.sh --render-unit FILE [--prefix DIR] [--config-dir DIR]                # write the systemd unit only
#
# Where the agent comes from: --from (a tarball made by pack.sh, or an unpacked one), else the folder this script
# sits in when that is an unpacked bundle (it has node_modules), else the workspace checkout it sits in (built with
# pnpm). A bundle installs offline; native modules built for another CPU are rebuilt from source.
set -euo pipefail
# Bash 5.2 would read & and \ in ${text//pattern/value} replacements; the values here are taken literally.
shopt -u patsub_replacement 2>/dev/null || true

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

prefix=/opt/hivegate-agent
config_dir=/etc/hivegate
state_dir=/var/lib/hivegate-agent
unit_dir=/etc/systemd/system
bin_link=/usr/local/bin/hivegate-agent
service=hivegate-agent
user=hivegate
node_major_min=20

mode=install
dry_run=0
purge=0
start_service=1
use_nodesource=0
from=''
render_to=''
cloud_url=''
token=''
hive_id=''
box_id=''
source_url=rpicam

# The comment block at the top, to its first line of code (a fixed line range printed `set -euo pipefail` too).
usage() { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
die() {
  echo "install.sh: $*" >&2
  exit 1
}
note() { echo "==> $*"; }
warn() { echo "warning: $*" >&2; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --dry-run) dry_run=1 ;;
    --upgrade) mode=upgrade ;;
    --uninstall) mode=uninstall ;;
    --purge) purge=1 ;;
    --no-start) start_service=0 ;;
    --nodesource) use_nodesource=1 ;;
    --render-config) mode=render; render_to=${2:?--render-config needs a file}; shift ;;
    --render-unit) mode=render-unit; render_to=${2:?--render-unit needs a file}; shift ;;
    --from) from=${2:?--from needs a tarball or folder}; shift ;;
    --cloud) cloud_url=${2:?--cloud needs a URL}; shift ;;
    --token) token=${2:?--token needs a value}; shift ;;
    --hive) hive_id=${2:?--hive needs an id}; shift ;;
    --box) box_id=${2:?--box needs an id}; shift ;;
    --source) source_url=${2:?--source needs a camera}; shift ;;
    --prefix) prefix=${2:?--prefix needs a folder}; shift ;;
    --config-dir) config_dir=${2:?--config-dir needs a folder}; shift ;;
    --unit-dir) unit_dir=${2:?--unit-dir needs a folder}; shift ;;
    --bin-link) bin_link=${2:?--bin-link needs a path}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done

# Every change goes through run: printed (and not done) in a dry run.
run() {
  if [[ $dry_run -eq 1 ]]; then
    printf '+'
    printf ' %q' "$@"
    printf '\n'
  else
    "$@"
  fi
}

have() { command -v "$1" >/dev/null 2>&1; }

# A YAML double-quoted scalar: the values come from the command line and may hold anything.
yaml_string() {
  local value=$1
  value=${value//\\/\\\\}
  value=${value//\"/\\\"}
  printf '"%s"' "$value"
}

render_config() {
  local out=$1 text
  [[ -n $cloud_url ]] || die "--cloud is required for a new configuration"
  [[ -n $hive_id ]] || die "--hive is required for a new configuration"
  [[ -n $box_id ]] || die "--box is required for a new configuration"
  text=$(<"$script_dir/agent.yaml.template")
  text=${text//@HIVE_ID@/$(yaml_string "$hive_id")}
  text=${text//@BOX_ID@/$(yaml_string "$box_id")}
  text=${text//@CLOUD_URL@/$(yaml_string "$cloud_url")}
  text=${text//@SOURCE@/$(yaml_string "$source_url")}
  text=${text//@CONFIG_DIR@/$config_dir}
  text=${text//@STATE_DIR@/$state_dir}
  printf '%s\n' "$text" >"$out"
}

render_unit() {
  local text
  text=$(<"$script_dir/hivegate-agent.service")
  text=${text//@NODE@/$node_bin}
  text=${text//@PREFIX@/$prefix}
  text=${text//@CONFIG_DIR@/$config_dir}
  printf '%s\n' "$text"
}

# The token ends up as a NAME=value line in agent.env: no spaces, quotes or `$`.
if [[ -n $token && ! $token =~ ^[A-Za-z0-9._~+/=-]+$ ]]; then
  die "--token holds characters an API token does not have"
fi

node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# The node the service runs, by the absolute path of the one on PATH that the version check and check-config ran.
# The unit named /usr/bin/node: with Node 20 in /usr/local/bin and Debian's 18 in /usr/bin the service ran 18, and
# where /usr/bin/node did not exist it failed with 203/EXEC.
node_bin=''
resolve_node() {
  node_bin=$(command -v node || true)
  if [[ -z $node_bin && $dry_run -eq 1 && $use_nodesource -eq 1 ]]; then
    node_bin=/usr/bin/node # where NodeSource's nodejs package puts it
    return
  fi
  [[ $node_bin == /* ]] || die "no node on PATH: Node.js >= ${node_major_min} is needed"
  [[ $(node_major "$node_bin") -ge $node_major_min ]] || die "$node_bin is Node.js $("$node_bin" --version), older than ${node_major_min}: put a newer one first on PATH"
  local real
  real=$(readlink -f "$node_bin")
  case $real in
    /home/* | /root/*) die "$node_bin is $real, which the service cannot reach (ProtectHome=yes): install Node.js >= ${node_major_min} for the whole system (NodeSource's package, or --nodesource)" ;;
  esac
}

if [[ $mode == render ]]; then
  render_config "$render_to"
  exit 0
fi
if [[ $mode == render-unit ]]; then
  resolve_node
  render_unit >"$render_to"
  exit 0
fi

if [[ $dry_run -eq 0 && $(id -u) -ne 0 ]]; then
  die "run as root (sudo $0 …), or add --dry-run to see the plan"
fi

apt_install() {
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

ensure_packages() {
  local missing=()
  have ffmpeg || missing+=(ffmpeg)
  if [[ ${#missing[@]} -gt 0 ]]; then
    note "installing ${missing[*]}"
    run apt-get update
    apt_install "${missing[@]}"
  else
    note "ffmpeg: $(command -v ffmpeg)"
  fi
  if have node && [[ $(node_major) -ge $node_major_min ]]; then
    resolve_node
    note "node: $node_bin ($("$node_bin" --version))"
    return
  fi
  # Debian 12 ships Node 18; the agent needs 20 (NodeSource's apt repository, or Raspberry Pi OS's newer package).
  if [[ $use_nodesource -eq 1 ]]; then
    note "installing Node.js ${node_major_min} from NodeSource"
    have curl || apt_install curl ca-certificates
    if [[ $dry_run -eq 1 ]]; then
      echo "+ curl -fsSL https://deb.nodesource.com/setup_${node_major_min}.x | bash -"
    else
      curl -fsSL "https://deb.nodesource.com/setup_${node_major_min}.x" | bash -
    fi
    apt_install nodejs
    resolve_node
  else
    die "Node.js >= ${node_major_min} is needed (found: $(have node && node --version || echo none)).
  Add NodeSource's repository and install it:  curl -fsSL https://deb.nodesource.com/setup_${node_major_min}.x | sudo bash - && sudo apt-get install -y nodejs
  or run this script again with --nodesource to do exactly that."
  fi
}

ensure_user() {
  if id "$user" >/dev/null 2>&1; then
    note "user $user exists"
  else
    note "creating system user $user"
    run useradd --system --user-group --home-dir "$state_dir" --no-create-home --shell /usr/sbin/nologin "$user"
  fi
  local group
  for group in video render; do
    if getent group "$group" >/dev/null 2>&1; then
      run usermod -a -G "$group" "$user"
    fi
  done
}

staging=''
cleanup() {
  if [[ -n $staging && -d $staging ]]; then rm -rf "$staging"; fi
}
trap cleanup EXIT

# Sets bundle to the folder holding the agent bundle (package.json, bin/, src/, node_modules/).
bundle=''
find_bundle() {
  if [[ -n $from ]]; then
    if [[ -d $from ]]; then
      [[ -d $from/node_modules ]] || die "$from has no node_modules: not an agent bundle (make one with install/pack.sh)"
      bundle=$from
      return
    fi
    [[ -f $from ]] || die "--from $from: no such file or folder"
    staging=$(mktemp -d)
    run tar -xzf "$from" -C "$staging"
    bundle=$staging/hivegate-agent
    return
  fi
  local here
  here=$(dirname "$script_dir")
  if [[ -d $here/node_modules && ! -f $here/../pnpm-workspace.yaml ]]; then
    bundle=$here
    return
  fi
  [[ -f $here/../pnpm-workspace.yaml ]] || die "cannot find the agent: pass --from hivegate-agent-VERSION.tar.gz"
  have pnpm || die "building from the workspace needs pnpm (npm install -g pnpm@10), or pass --from a bundle"
  staging=$(mktemp -d)
  note "building the agent bundle from the workspace"
  run bash "$script_dir/pack.sh" --dir "$staging/hivegate-agent"
  bundle=$staging/hivegate-agent
}

# better-sqlite3 is native: a bundle made on another CPU (x86-64 for a Pi) needs it rebuilt here, from the source it
# carries (no download; build-essential and python3 from apt, the Node headers of the node that runs it).
ensure_native_modules() {
  local dir=$1
  if [[ $dry_run -eq 1 ]]; then
    echo "+ (check that better-sqlite3 loads in $dir; rebuild it from source if not)"
    return
  fi
  if (cd "$dir" && "$node_bin" -e "new (require('better-sqlite3'))(':memory:').close()") 2>/dev/null; then
    note "better-sqlite3 loads"
    return
  fi
  note "rebuilding better-sqlite3 for $(uname -m)"
  local missing=()
  have make || missing+=(build-essential)
  have python3 || missing+=(python3)
  [[ ${#missing[@]} -eq 0 ]] || apt_install "${missing[@]}"
  local module
  module=$(cd "$dir" && "$node_bin" -p "require('path').dirname(require.resolve('better-sqlite3/package.json'))")
  # The headers of that node (…/include/node beside …/bin/node), not /usr's: Debian's 18 beside a 20 built it for 18.
  local node_dir
  node_dir=$(dirname "$(dirname "$(readlink -f "$node_bin")")")
  (cd "$module" && npm_config_build_from_source=true npm_config_nodedir="$node_dir" npm run install --foreground-scripts) ||
    die "better-sqlite3 did not build: see the output above"
  (cd "$dir" && "$node_bin" -e "new (require('better-sqlite3'))(':memory:').close()") || die "better-sqlite3 still does not load"
  if ! (cd "$dir" && "$node_bin" -e "require('onnxruntime-node')") 2>/dev/null; then
    warn "onnxruntime-node does not load on $(uname -m): set detector.kind: motion in agent.yaml (the bee model needs it)"
  fi
}

install_code() {
  local source=$1 next="${prefix}.new" previous="${prefix}.old"
  note "installing the agent into $prefix"
  run rm -rf "$next" "$previous"
  run mkdir -p "$(dirname "$prefix")"
  run cp -a "$source" "$next"
  ensure_native_modules "$next"
  # The new code must at least start before it replaces the old.
  if [[ $dry_run -eq 1 ]]; then
    echo "+ $node_bin $next/bin/hivegate-agent.mjs --help"
  else
    "$node_bin" "$next/bin/hivegate-agent.mjs" --help >/dev/null || die "the new agent does not start: $prefix is unchanged"
  fi
  if [[ -d $prefix ]]; then run mv "$prefix" "$previous"; fi
  run mv "$next" "$prefix"
  run rm -rf "$previous"
  run chown -R root:root "$prefix"
  run ln -sfn "$prefix/bin/hivegate-agent.mjs" "$bin_link"
}

install_config() {
  run install -d -m 0750 -o root -g "$user" "$config_dir"
  if [[ -f $config_dir/agent.yaml ]]; then
    note "keeping $config_dir/agent.yaml"
  else
    note "writing $config_dir/agent.yaml"
    if [[ $dry_run -eq 1 ]]; then
      echo "+ (render agent.yaml.template into $config_dir/agent.yaml: hive ${hive_id:-?}, box ${box_id:-?}, cloud ${cloud_url:-?}, source $source_url)"
    else
      render_config "$config_dir/agent.yaml"
      chown root:"$user" "$config_dir/agent.yaml"
      chmod 0640 "$config_dir/agent.yaml"
    fi
  fi
  if [[ -f $config_dir/agent.env ]]; then
    note "keeping $config_dir/agent.env"
    [[ -z $token ]] || warn "--token ignored: $config_dir/agent.env exists (edit it, then: systemctl reload $service)"
  else
    [[ -n $token ]] || warn "no --token: put HIVEGATE_TOKEN=… into $config_dir/agent.env before starting"
    note "writing $config_dir/agent.env"
    if [[ $dry_run -eq 1 ]]; then
      echo "+ (write HIVEGATE_TOKEN to $config_dir/agent.env, mode 0640 root:$user)"
    else
      (umask 027 && printf 'HIVEGATE_TOKEN=%s\n' "$token" >"$config_dir/agent.env")
      chown root:"$user" "$config_dir/agent.env"
    fi
  fi
}

check_config() {
  if [[ $dry_run -eq 1 ]]; then
    echo "+ $node_bin $prefix/bin/hivegate-agent.mjs check-config --config $config_dir/agent.yaml --secrets-file $config_dir/agent.env"
    return
  fi
  "$node_bin" "$prefix/bin/hivegate-agent.mjs" check-config --config "$config_dir/agent.yaml" --secrets-file "$config_dir/agent.env" ||
    die "fix $config_dir/agent.yaml (or agent.env), then run: systemctl restart $service"
}

install_unit() {
  note "installing $unit_dir/$service.service"
  if [[ $dry_run -eq 1 ]]; then
    echo "+ (write $unit_dir/$service.service from hivegate-agent.service: node $node_bin, prefix $prefix, config $config_dir)"
  else
    render_unit >"$unit_dir/$service.service"
    chmod 0644 "$unit_dir/$service.service"
  fi
  run systemctl daemon-reload
}

check_camera() {
  if have rpicam-hello; then
    local cameras
    cameras=$(rpicam-hello --list-cameras 2>&1 || true)
    if grep -q '^[0-9] :' <<<"$cameras"; then
      note "camera: $(grep -m1 '^[0-9] :' <<<"$cameras")"
    else
      warn "rpicam-hello lists no camera: check the ribbon cable and camera_auto_detect in /boot/firmware/config.txt"
    fi
  elif compgen -G '/dev/video*' >/dev/null; then
    note "video devices: $(echo /dev/video*)"
    [[ $source_url != rpicam* ]] || warn "source is rpicam but rpicam-apps is missing: apt-get install rpicam-apps"
  else
    warn "no camera found (no rpicam-hello, no /dev/video*): the agent will keep retrying its source"
  fi
}

start_or_restart() {
  if [[ $start_service -eq 0 ]]; then
    note "not starting (--no-start): systemctl enable --now $service"
    return
  fi
  run systemctl enable "$service"
  run systemctl restart "$service"
  note "running: journalctl -u $service -f"
}

uninstall() {
  note "removing the $service service and $prefix"
  if [[ -f $unit_dir/$service.service ]]; then
    run systemctl disable --now "$service" || true
    run rm -f "$unit_dir/$service.service"
    run systemctl daemon-reload
  fi
  run rm -rf "$prefix" "${prefix}.new" "${prefix}.old"
  if [[ -L $bin_link ]]; then run rm -f "$bin_link"; fi
  if [[ $purge -eq 1 ]]; then
    note "purging configuration, queued data and the $user user"
    run rm -rf "$config_dir" "$state_dir"
    if id "$user" >/dev/null 2>&1; then run userdel "$user"; fi
  else
    note "kept $config_dir and $state_dir (queued records); --purge removes them"
  fi
}

# shellcheck source=/dev/null
system=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown system}")
note "HiveGate agent: $mode on $system ($(uname -m))$([[ $dry_run -eq 1 ]] && echo ', dry run - nothing is changed')"
case "$(uname -m)" in
  aarch64 | x86_64) ;;
  armv7l | armv6l) warn "32-bit ARM: onnxruntime-node has no build for it (use detector.kind: motion), and Node 20 for armv6 is unofficial" ;;
  *) warn "untested CPU $(uname -m)" ;;
esac

case $mode in
  uninstall)
    uninstall
    ;;
  upgrade)
    [[ -d $prefix || $dry_run -eq 1 ]] || die "nothing to upgrade in $prefix: install first"
    ensure_packages
    find_bundle
    install_code "$bundle"
    install_unit
    check_config
    start_or_restart
    ;;
  install)
    ensure_packages
    ensure_user
    find_bundle
    install_code "$bundle"
    install_config
    install_unit
    check_camera
    check_config
    start_or_restart
    ;;
esac
note "done"

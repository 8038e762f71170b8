#!/usr/bin/env bash
# Installs the Debian 12 packages cape needs to build, test, run its demo and `make repro`.
# Idempotent: does nothing when everything is present. As root it installs what
# is missing; otherwise it prints the one apt-get line to run and exits 1.
#   scripts/install-deps.sh           build + test + demo packages
#   scripts/install-deps.sh --check   only report, never install (exit 1 if missing)
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libunwind-dev libssh-dev libssl-dev libcli11-dev libxxhash-dev
  flex bison
  openmpi-bin libopenmpi-dev
  openssh-server openssh-client
  slurmd slurmctld slurm-client munge
  clang libclang-rt-14-dev
  gnuplot-nox iproute2 python3   # make repro: plots, the emulated cluster, the driver
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

[ ${#missing[@]} -eq 0 ] && exit 0

line="apt-get install -y ${missing[*]}"
if [ "${1:-}" = "--check" ] || [ "$(id -u)" != 0 ]; then
  echo "cape: missing Debian packages: ${missing[*]}" >&2
  echo "cape: install them with:  sudo apt-get update && sudo $line" >&2
  exit 1
fi

echo "cape: installing missing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
apt-get install -y -q --no-install-recommends "${missing[@]}" >&2

#!/usr/bin/env bash
# The emulated cluster of `make repro` (paper-repro/README.md): N nodes as Linux network
# namespaces, each joined to one bridge by a veth pair, links limited with tc like the papers'
# LAN (001 Sect. V, 002 Sect. 5, 000 Sect. 4: 100 Mb/s Ethernet). Root only. Addresses exist
# only inside the namespaces and on the bridge (10.77.S.0/24, S from the cluster's id).
#
#   cluster.sh up ID N [--link 100mbit|1gbit|none]   make nodes ID-0 .. ID-(N-1); prints the state dir
#   cluster.sh exec ID K CMD...                       run CMD in node K (pinned to its core if it has one)
#   cluster.sh ip ID K                                node K's address
#   cluster.sh down ID                                remove everything `up` made (also after a crash)
#   cluster.sh check ID                               exit 0 when every piece of ID exists
#
# ID: 1-200 (the subnet's third byte and a part of every name, so that clusters of
# concurrent runs do not meet). Names: netns capeID-K, bridge cbrID, veth cvID-K / inside eth0.
# Cores: node K is pinned to core K when the machine has at least N cores (taskset), else not
# pinned; `up` records which in the state dir (ID/pinning) for the report.
set -euo pipefail

die() { echo "cluster.sh: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "must run as root (network namespaces, veth, tc)"
cmd=${1:-}; shift || true
id=${1:-}; shift || true
[[ "$id" =~ ^[0-9]+$ ]] && [ "$id" -ge 1 ] && [ "$id" -le 200 ] || die "ID must be 1..200, got '${id}'"
state=/run/cape-cluster/$id
br=cbr$id
ns() { echo "cape$id-$1"; }
veth() { echo "cv$id-$1"; }

case "$cmd" in
up)
  n=${1:-}; shift || true
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "N must be 1..64"
  link=none
  if [ "${1:-}" = --link ]; then link=${2:-}; shift 2 || die "--link wants a rate"; fi
  case "$link" in 100mbit|1gbit|none) ;; *) die "--link must be 100mbit, 1gbit or none, got '$link'";; esac
  [ -e "$state" ] && die "cluster $id exists ($state); run: $0 down $id"
  mkdir -p "$state"
  echo "$n" > "$state/nodes"
  echo "$link" > "$state/link"
  cores=$(nproc)
  if [ "$cores" -ge "$n" ]; then echo pinned > "$state/pinning"; else echo "not pinned ($n nodes, $cores cores)" > "$state/pinning"; fi
  trap '"$0" down '"$id"' >/dev/null 2>&1 || true' ERR
  ip link add "$br" type bridge
  ip addr add "10.77.$id.254/24" dev "$br"
  ip link set "$br" up
  for ((k = 0; k < n; k++)); do
    ip netns add "$(ns $k)"
    ip link add "$(veth $k)" type veth peer name "cvp$id-$k"
    ip link set "cvp$id-$k" netns "$(ns $k)"
    ip -n "$(ns $k)" link set "cvp$id-$k" name eth0
    ip -n "$(ns $k)" addr add "10.77.$id.$((k + 1))/24" dev eth0
    ip -n "$(ns $k)" link set lo up
    ip -n "$(ns $k)" link set eth0 up
    ip link set "$(veth $k)" master "$br"
    ip link set "$(veth $k)" up
    if [ "$link" != none ]; then
      # Both directions: the node's sending side (inside) and its receiving side (the bridge port).
      tc -n "$(ns $k)" qdisc add dev eth0 root tbf rate "$link" burst 256kb latency 400ms
      tc qdisc add dev "$(veth $k)" root tbf rate "$link" burst 256kb latency 400ms
    fi
  done
  echo "$state"
  ;;
exec)
  k=${1:-}; shift || true
  [ -e "$state/nodes" ] || die "no cluster $id (run: $0 up $id N)"
  n=$(cat "$state/nodes")
  [[ "$k" =~ ^[0-9]+$ ]] && [ "$k" -lt "$n" ] || die "node must be 0..$((n - 1))"
  if [ "$(cat "$state/pinning")" = pinned ]; then
    exec ip netns exec "$(ns $k)" taskset -c "$k" "$@"
  fi
  exec ip netns exec "$(ns $k)" "$@"
  ;;
ip)
  echo "10.77.$id.$((${1:?node} + 1))"
  ;;
check)
  [ -e "$state/nodes" ] || exit 1
  n=$(cat "$state/nodes")
  ip link show "$br" >/dev/null 2>&1 || exit 1
  for ((k = 0; k < n; k++)); do
    ip netns exec "$(ns $k)" true 2>/dev/null || exit 1
    ip link show "$(veth $k)" >/dev/null 2>&1 || exit 1
  done
  ;;
down)
  # Everything named after ID, whether or not the state survived.
  for nsn in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^cape$id-[0-9]+$" || true); do
    ip netns del "$nsn" || true
  done
  for v in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^cv$id-[0-9]+$" || true); do
    ip link del "$v" 2>/dev/null || true
  done
  ip link del "$br" 2>/dev/null || true
  rm -rf "$state"
  ;;
*)
  die "usage: $0 up|exec|ip|check|down ID ..."
  ;;
esac

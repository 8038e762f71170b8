#!/usr/bin/env bash
# OpenMPI's "rsh agent" for the emulated cluster (cluster.sh): mpirun calls it as
# `netns-agent.sh [-options] HOST COMMAND...` to start its daemon on HOST; HOST is a node's
# address 10.77.ID.(K+1), and the daemon starts in that node's namespace (pinned as cluster.sh
# exec pins). mpirun --mca plm_rsh_agent paper-repro/netns-agent.sh (paper-repro/run.py).
set -euo pipefail
while [ "${1:-}" != "${1#-}" ]; do shift; done
host=$1; shift
IFS=. read -r a b id k <<< "$host"
[ "$a.$b" = 10.77 ] || { echo "netns-agent.sh: $host is not a node of an emulated cluster" >&2; exit 2; }
# The daemons share /tmp and the host name: each gets its own session directory, or two of
# them race to make the same one ("mkdir ... File exists", orte_session_dir failed).
tmp=/tmp/cape-mpi-$id-$((k - 1))
mkdir -p "$tmp"
export OMPI_MCA_orte_tmpdir_base=$tmp
exec "$(dirname "$0")/cluster.sh" exec "$id" "$((k - 1))" sh -c "$*"

#!/bin/sh
# OpenMPI's rsh agent (plm_rsh_agent) for hosts made of network namespaces (hosts.py): mpirun
# calls it as ssh, "mpi_agent.sh HOST COMMAND...", with HOST one of the hosts' addresses
# (SUBNET.K); it runs COMMAND on host K (its namespace HOSTS_PREFIX-hK, its host name hostK)
# through a shell, as sshd would.
set -eu
host=$1
shift
k=${host##*.}
case $k in
  ''|*[!0-9]*) echo "mpi_agent.sh: '$host' is not a host's address" >&2; exit 255 ;;
esac
exec ip netns exec "${HOSTS_PREFIX:?}-h$k" unshare --uts sh -c "hostname host$k && $*"

#!/bin/sh
# OpenMPI's rsh agent (plm_rsh_agent) for hosts made of network namespaces (hosts.py): mpirun
# calls it as ssh, "mpi_agent.sh HOST COMMAND...", with HOST one of the hosts' addresses
# (SUBNET.K); it runs COMMAND on host K (its namespace HOSTS_PREFIX-hK, its host name hostK,
# the hosts' /etc/hosts HOSTS_ETC_HOSTS: Hosts.agent_environment()) through a shell, as sshd
# would, entering the host as Hosts.command does.
set -eu
host=$1
shift
k=${host##*.}
case $k in
  ''|*[!0-9]*) echo "mpi_agent.sh: '$host' is not a host's address" >&2; exit 255 ;;
esac
exec nsenter "--net=/var/run/netns/${HOSTS_PREFIX:?}-h$k" unshare --uts --mount \
  --propagation private sh -c "hostname host$k && mount --bind '${HOSTS_ETC_HOSTS:?}' /etc/hosts && $*"

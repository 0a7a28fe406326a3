#!/bin/sh
# ExecStart helper for edge-heartbeat@.service: runs `edgectl heartbeat` for the unit's instance
# name, which is the pool, or the pool and a checker name joined by "_":
#
#   edge-heartbeat@fra-1.service         edgectl heartbeat fra-1                  health/fra-1
#   edge-heartbeat@fra-1_site-a.service  edgectl heartbeat fra-1 --checker site-a health/fra-1/site-a
#
# Usage: heartbeat-instance.sh INSTANCE NODE EDGECTL [ARGS...]; it execs
# `NODE EDGECTL heartbeat POOL [--checker CHECKER] ARGS...`. Pool and checker names are DNS labels,
# which never hold "_", so the first "_" splits them; edgectl checks both and exits 1 naming a bad
# one. "_" rather than ":" because the instance name is also part of the unit's user name
# (User=edge-heartbeat-%i), where ":" is not allowed.
set -eu
if [ $# -lt 3 ]; then
  echo "heartbeat-instance.sh: usage: heartbeat-instance.sh INSTANCE NODE EDGECTL [ARGS...]" >&2
  exit 2
fi
instance=$1
node=$2
edgectl=$3
shift 3
case "$instance" in
  *_*) exec "$node" "$edgectl" heartbeat "${instance%%_*}" --checker "${instance#*_}" "$@" ;;
  *) exec "$node" "$edgectl" heartbeat "$instance" "$@" ;;
esac

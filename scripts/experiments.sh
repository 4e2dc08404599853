#!/usr/bin/env bash
# experiments.sh NAME: run one experiment on the namespace testbed with real
# sockets; each writes NAME.csv, NAME.md and NAME.png under EXP_OUT (default
# docs/results) and removes everything it started. `make experiments` runs
# the default set (about 38 minutes); soak (30 minutes) runs only by name.
#   goodput   goodput against offered load, 0.25-10 x C, accept-bound and
#             behind nginx: no shedding, a fixed threshold, shedd; the model
#   classes   four classes at 3 x C: strict priority against floors
#   recovery  retrying clients, a spike to 4 x C and back: no shedding, shedd
#             without and with its ramp, a restart in the middle of a ramp
#   knee      p50/p99 latency against utilisation beside M/M/c
#   fairness  one heavy source beside 100 light ones in a shedding class,
#             1-50 x its fair share, with and without per-source fairness
#   flood     legitimate clients under a spoofed SYN flood (scripts/flood.sh)
#   proxy     nginx and HAProxy in front of an upstream (scripts/proxy.sh)
#   keepalive a crowd of keep-alive clients that comes and stays, through nginx:
#             no shedding, the SYN limit alone, the connection limit and recall
#   soak      30 minutes of calm and overload, a flood, SIGHUP reloads
#   scale     the simulations at the scale of real hosts: 1 k-1 M new conn/s,
#             1-128 CPUs, 10-1 M sources a window, 1-64 listeners, 1-8 ports (no
#             testbed; writes scale-*.csv, one a table, scale.md, scale.png)
set -euo pipefail
cd "$(dirname "$0")/.."

case ${1:-} in
goodput | classes | recovery | knee | fairness | soak | scale | keepalive) exec "scripts/exp/$1.sh" ;;
flood) exec scripts/flood.sh ;;
proxy) exec scripts/proxy.sh ;;
*)
	echo "experiments.sh: unknown experiment '${1:-}' (goodput, classes, recovery, knee, fairness, flood, proxy, keepalive, soak, scale)" >&2
	exit 2
	;;
esac

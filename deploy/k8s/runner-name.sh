#!/bin/sh
# runner-name.sh NODE: the runner name for a Kubernetes node. A runner name
# is 1..16 of [a-z0-9] (docs/runner.md) and part of every sandbox id; node
# names are DNS names of up to 253 characters. A node name that already
# fits is the name; any other is its first 8 letters and digits followed by
# 8 hex digits of its SHA-256: stable for the node (a runner restarted there
# keeps its name) and distinct between nodes (two names alike but for what
# the rule drops still differ). The runner DaemonSet runs this (ConfigMap
# sandbox-runner-name); run it yourself to name a node's certificate:
#   deploy/certs.sh runner DIR "$(deploy/k8s/runner-name.sh NODE)"
set -eu
[ $# = 1 ] && [ -n "$1" ] || { echo "usage: runner-name.sh NODE" >&2; exit 2; }
kept=$(printf %s "$1" | tr -cd 'a-z0-9')
if [ "$kept" = "$1" ] && [ ${#kept} -le 16 ]; then
	echo "$kept"
else
	echo "$(printf %s "$kept" | cut -c1-8)$(printf %s "$1" | sha256sum | cut -c1-8)"
fi

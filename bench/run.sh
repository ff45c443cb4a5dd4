#!/bin/bash
# Runs every benchmark script bench/<name>.sh; each prints its figures and
# the ratio against a baseline it measures in the same run.
set -u
cd "$(dirname "$0")/.."
rc=0
for b in bench/*.sh; do
	# not itself: it would run every benchmark again, for ever
	[ -x "$b" ] && [ "$b" != bench/run.sh ] || continue
	echo "== $(basename "$b" .sh)"
	"$b" || rc=1
done
exit $rc

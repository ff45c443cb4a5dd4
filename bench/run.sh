#!/bin/bash
# Runs every benchmark script bench/<name>.sh; each prints its figures and
# the ratio against a baseline it measures in the same run, and one line a
# figure for the closing table:
#   figure: <name>|<value>|<unit>|<goal or ->     (goal: "< 2", ">= 0.5", ...)
# The table lists every figure against its goal: met or missed (a busy
# shared machine can miss one; the run still succeeds), or "-" without one;
# a goal's figure that could not be measured ("n/a") is missed. Each
# benchmark's line in the table carries the machine's load (1-minute
# average) when it began and how long it took, since figures of a shared
# machine mean little without them; the whole run's time has its goal
# (15 minutes).
set -u
cd "$(dirname "$0")/.."
out=$(mktemp /tmp/sbx-bench.XXXXXX)
trap 'rm -f "$out"' EXIT
rc=0
start=$(date +%s)
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at the start"
for b in bench/*.sh; do
	# not itself: it would run every benchmark again, for ever
	[ -x "$b" ] && [ "$b" != bench/run.sh ] || continue
	load=$(cut -d' ' -f1 /proc/loadavg) t0=$(date +%s)
	echo "== $(basename "$b" .sh) (load $load)"
	"$b" 2>&1 | tee -a "$out"
	[ "${PIPESTATUS[0]}" = 0 ] || { rc=1; echo "bench: $(basename "$b" .sh) failed" >>"$out"; }
	echo "figure: machine load at the start of $(basename "$b" .sh) ($(($(date +%s) - t0)) s)|$load|load|-" >>"$out"
done
echo "figure: make bench wall time|$(($(date +%s) - start))|s|< 900" >>"$out"

echo
echo "== figures"
sed -n 's/^figure: //p' "$out" | awk -F'|' '
function verdict(v, g,    op, n) {
	if (g == "-" || g == "") return "-"
	op = g; sub(/ *[-+0-9.].*$/, "", op); n = g; sub(/^[<>=! ]*/, "", n)
	if (v !~ /^-?[0-9.]+$/) return "missed"
	if (op == "<")  return v + 0 <  n + 0 ? "met" : "missed"
	if (op == "<=") return v + 0 <= n + 0 ? "met" : "missed"
	if (op == ">")  return v + 0 >  n + 0 ? "met" : "missed"
	if (op == ">=") return v + 0 >= n + 0 ? "met" : "missed"
	return "?"
}
{ name[NR] = $1; val[NR] = $2; unit[NR] = $3; goal[NR] = $4; w = length($1); if (w > nw) nw = w }
END {
	if (nw < 6) nw = 6
	printf "%-*s  %10s  %-6s  %-8s  %s\n", nw, "figure", "value", "unit", "goal", "verdict"
	for (i = 1; i <= NR; i++) {
		r = verdict(val[i], goal[i]); count[r]++
		printf "%-*s  %10s  %-6s  %-8s  %s\n", nw, name[i], val[i], unit[i], goal[i], r
	}
	printf "%d figures: %d met, %d missed, %d without a goal\n", NR, count["met"], count["missed"], count["-"]
	for (i = 1; i <= NR; i++)
		if (verdict(val[i], goal[i]) == "missed")
			printf "MISSED: %s: %s %s, goal %s\n", name[i], val[i], unit[i], goal[i]
}'
grep -E '^(SKIP|bench: .* failed)' "$out"
exit $rc

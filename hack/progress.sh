#!/usr/bin/env bash
# progress.sh PHASE COMMAND [ARG...]: runs COMMAND as one phase of make test
# (or make demo), saying when the phase starts and ends and, while it runs,
# printing a line every minute, so that no phase is silent for longer.
# Exits with COMMAND's exit status.
set -uo pipefail
phase=$1
shift
echo "== $phase"
start=$SECONDS
(
	# sleep's output goes nowhere: killed with this loop, it holds no pipe.
	while sleep 60 </dev/null >/dev/null 2>&1; do
		echo "   $phase: still running ($(((SECONDS - start) / 60)) min)"
	done
) &
tick=$!
trap 'kill "$tick" 2>/dev/null' EXIT
"$@"
rc=$?
if [ "$rc" -eq 0 ]; then
	echo "== $phase: done in $((SECONDS - start))s"
else
	echo "== $phase: FAILED (exit $rc) after $((SECONDS - start))s"
fi
exit "$rc"

#!/usr/bin/env bash
# progress.sh PHASE COMMAND [ARG...]: runs COMMAND as one phase of make test
# (or make demo), saying when the phase starts and ends and, while it runs,
# printing a line every minute, so that no phase is silent for longer.
# Exits with COMMAND's exit status. With PROGRESS_LOG set (make test sets
# it), appends "PHASE<TAB>seconds<TAB>exit status" to that file for the
# table that ends make test (hack/testreport summary).
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
if [ -n "${PROGRESS_LOG:-}" ]; then
	printf '%s\t%d\t%d\n' "$phase" "$((SECONDS - start))" "$rc" >>"$PROGRESS_LOG"
fi
if [ "$rc" -eq 0 ]; then
	echo "== $phase: done in $((SECONDS - start))s"
else
	echo "== $phase: FAILED (exit $rc) after $((SECONDS - start))s"
fi
exit "$rc"

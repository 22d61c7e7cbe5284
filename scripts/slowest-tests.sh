#!/bin/sh
# The suite's slowest tests: runs what `make test` runs (both modules, one
# throwaway cluster, the same TEST_PARALLEL) with go test -json and lists
# the 20 slowest top-level tests and the 10 slowest packages. The figures
# depend on the machine's load; use them to find where the wall time goes,
# not as a bound. docs/testing.md records a run.
#   scripts/slowest-tests.sh              # run the suite, then list
#   scripts/slowest-tests.sh run.json     # list from a saved go test -json output
#   SLOWEST_N=40 scripts/slowest-tests.sh
#   TEST_PARALLEL='-p 2 -parallel 2' scripts/slowest-tests.sh   # go test's defaults on 2 cores
set -eu
cd "$(dirname "$0")/.."
n=${SLOWEST_N:-20}
if [ $# -ge 1 ]; then
	go run ./scripts/slowtests -n "$n" <"$1"
	exit
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
set -- make -s test TEST_FLAGS=-json
if [ -n "${TEST_PARALLEL:-}" ]; then
	set -- "$@" "TEST_PARALLEL=$TEST_PARALLEL"
fi
start=$(date +%s)
"$@" >"$out" || status=$?
echo "wall time $(($(date +%s) - start))s ($*), load average $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./scripts/slowtests -n "$n" <"$out"
exit "$status"

#!/bin/sh
# The suite's slowest tests: runs what `make test` runs (both modules, one
# throwaway cluster) with go test -json and lists the 20 slowest top-level
# tests and the 10 slowest packages. The figures depend on the machine's
# load; use them to find where the wall time goes, not as a bound.
#   scripts/slowest-tests.sh              # run the suite, then list
#   scripts/slowest-tests.sh run.json     # list from a saved go test -json output
#   SLOWEST_N=40 scripts/slowest-tests.sh
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
scripts/pg run -- sh -c 'go test -count=1 -json ./... ; cd bench && go test -count=1 -json ./...' >"$out" || status=$?
go run ./scripts/slowtests -n "$n" <"$out"
exit "$status"

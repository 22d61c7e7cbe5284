#!/bin/sh
# make cyclo: no function of non-test code over cyclomatic complexity 15
# (gocyclo -over 15) except those in scripts/cyclo-allow.txt, each with its
# reason. The list only shrinks: a listed function that is no longer over
# 15 fails the check too, until its line is removed. A decision that makes
# a function long goes into a pure function with a table test
# (internal/sequence/tick_decide_test.go is the model).
#   scripts/cyclo.sh        # exit 1 with the offending functions
set -eu
cd "$(dirname "$0")/.."
limit=15
allow=scripts/cyclo-allow.txt
gocyclo=$(command -v gocyclo || echo "$(go env GOPATH)/bin/gocyclo")
if [ ! -x "$gocyclo" ]; then
	echo "cyclo: gocyclo not found; install it with: GOFLAGS= go install github.com/fzipp/gocyclo/cmd/gocyclo@v0.6.0" >&2
	exit 2
fi
over=$(mktemp)
trap 'rm -f "$over"' EXIT
# "18 sequence (*laneBook).waitReady internal/sequence/lanes.go:122:1"
"$gocyclo" -over "$limit" -ignore '_test\.go$' . | sort -rn >"$over"
awk -v limit="$limit" -v allowfile="$allow" '
	BEGIN {
		while ((getline line < allowfile) > 0) {
			if (line ~ /^[ \t]*(#|$)/) continue
			split(line, f, /[ \t]+/)
			allowed[f[1] " " f[2]] = 1
		}
	}
	{
		file = $4; sub(/:[0-9]+:[0-9]+$/, "", file)
		key = file " " $3
		if (key in allowed) { seen[key] = 1; next }
		print "cyclo: " $4 " " $3 " has cyclomatic complexity " $1 " (over " limit "): extract its decisions into pure functions with table tests"
		bad = 1
	}
	END {
		for (key in allowed) if (!(key in seen)) {
			print "cyclo: " key " is no longer over " limit ": remove its line from " allowfile
			bad = 1
		}
		exit bad
	}
' "$over"

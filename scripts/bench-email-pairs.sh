#!/usr/bin/env bash
# Interleaved pairs of `bench email` for two builds, order alternating per
# pair; one JSON line per run, prefixed with the pair number and the build.
#
#   scripts/pg run -- scripts/bench-email-pairs.sh OLD_BINARY NEW_BINARY [PAIRS] [-- bench email flags]
#
# Build OLD with e.g. `git archive <commit> | tar -x -C /tmp/old && (cd
# /tmp/old && go build -o /tmp/old/bin/rindactl ./cmd/rindactl)`. Since
# issue 41 `rindactl bench` runs the rindabench beside it: build
# ./cmd/rindabench into the same directory (make build does), or pass the
# rindabench binaries themselves.
set -euo pipefail
old=${1:?usage: bench-email-pairs.sh OLD_BINARY NEW_BINARY [PAIRS] [-- flags]}
new=${2:?usage: bench-email-pairs.sh OLD_BINARY NEW_BINARY [PAIRS] [-- flags]}
pairs=${3:-5}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = "--" ] && shift
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(--steps 5000 --mailboxes 18 --smtp-delay 5ms)
for i in $(seq 1 "$pairs"); do
	if [ $((i % 2)) -eq 0 ]; then order=(old new); else order=(new old); fi
	for b in "${order[@]}"; do
		bin=$old
		[ "$b" = new ] && bin=$new
		echo "$i $b $("$bin" bench email --max-load 0 "${flags[@]}" --output json 2>/dev/null | tr -d '\n')"
	done
done

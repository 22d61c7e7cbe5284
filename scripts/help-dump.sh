#!/bin/sh
# Prints `--help` of every rindactl command, depth first, each under a
# "=== rindactl PATH" line, so two builds can be compared:
#   scripts/help-dump.sh            # the tree at HEAD vs main, as a diff
#   scripts/help-dump.sh BINARY     # one build's dump on stdout
# The diff must be empty unless a commit names a deliberate change.
set -eu

dump() { # dump BINARY [PATH...]
	bin=$1; shift
	echo "=== rindactl $*"
	"$bin" "$@" --help 2>&1
	# Subcommands are the indented names under "Available Commands:".
	"$bin" "$@" --help 2>/dev/null | awk '/^Available Commands:/{on=1; next} on && /^$/{exit} on{print $1}' |
		while read -r sub; do
			case $sub in help|completion) continue ;; esac
			dump "$bin" "$@" "$sub"
		done
}

if [ $# -ge 1 ]; then
	dump "$1"
	exit 0
fi

base=${HELP_DUMP_BASE:-main}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(git rev-parse --show-toplevel)
git -C "$root" archive "$base" | tar -x -C "$tmp" --one-top-level=base
(cd "$tmp/base" && go build -o "$tmp/rindactl-base" ./cmd/rindactl)
(cd "$root" && go build -o "$tmp/rindactl-head" ./cmd/rindactl)
dump "$tmp/rindactl-base" >"$tmp/base.txt"
dump "$tmp/rindactl-head" >"$tmp/head.txt"
if diff -u --label "$base" --label "worktree" "$tmp/base.txt" "$tmp/head.txt"; then
	echo "help-dump: --help of $(grep -c '^=== ' "$tmp/head.txt") commands identical to $base" >&2
fi

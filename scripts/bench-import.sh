#!/usr/bin/env bash
# The import figure of docs/benchmarks.md: `rindactl import leads` of a
# generated CSV (scripts/gen-leads-csv.sh) into the database in DATABASE_URL
# under the default timeouts, with its wall time and peak RSS from
# /usr/bin/time -v. Then the same file again (every line an update).
#   scripts/pg run -- scripts/bench-import.sh            # 2,000,000 rows
#   BENCH_IMPORT_ROWS=200000 scripts/pg run -- scripts/bench-import.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?set DATABASE_URL, or run: scripts/pg run -- scripts/bench-import.sh}"
rows=${BENCH_IMPORT_ROWS:-2000000}
bin=bin/rindactl
make -s --no-print-directory build >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/gen-leads-csv.sh "$rows" > "$work/leads.csv"
"$bin" migrate >/dev/null
echo "file: $rows rows, $(du -m "$work/leads.csv" | cut -f1) MB"
for run in first again; do
	/usr/bin/time -v "$bin" import leads --workspace "bench-import" "$work/leads.csv" >"$work/out" 2>"$work/time"
	echo "$run: $(cat "$work/out")"
	grep -E "Elapsed \(wall clock\)|Maximum resident set size" "$work/time" | sed 's/^\s*/  /'
done

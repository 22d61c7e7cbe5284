#!/usr/bin/env bash
# `make bench`: the figures of docs/benchmarks.md, on the database in
# DATABASE_URL (make bench starts a throwaway cluster with scripts/pg).
#
# A shared 2-core machine drifts by tens of percent within minutes, so every
# comparison runs as BENCH_PAIRS interleaved pairs — the reference, then the
# subject, back to back — and reports the median of the per-pair ratios with
# their min and max (bin/rindapeers pairs). Each pair runs, in order:
#   claim:  the raw-SQL floor (1 and 4 clients; the better one is the
#           reference), rindactl's claim pipeline, then River (bench/, its
#           own module) at each BENCH_RIVER_PEERS entry, WORKERS:JOBS;
#   email:  rindactl bench email (the tick, then a bare go-mail loop, same
#           process) and the email SQL floor; then `bench email` again with
#           the SMTP server taking each BENCH_SMTP_DELAYS entry per message
#           (BENCH_DELAY_STEPS steps);
#   storm:  the incident replay (issue 26): rindactl bench storm alone for
#           BENCH_STORM_SECONDS (Postgres CPU per provider call of a hot
#           enrich tick), then rindactl bench incident --pairs 1 at each
#           BENCH_STORM entry, DELAY:STEPS (email alone, then beside the
#           storm: its own interleaved pair).
# Then, once each: the scale line (bench claim at each BENCH_SCALE size,
# with its peak RSS; 10,000 rows for the RSS ratio) and `status --overdue`
# over BENCH_OVERDUE leads and as many enrollments.
#   BENCH_PAIRS=5 BENCH_ROWS=200000 BENCH_RIVER_PEERS="4:20000 100:200000" \
#   BENCH_STEPS=30339 BENCH_SMTP_DELAYS="5ms 50ms" BENCH_DELAY_STEPS=5000 \
#   BENCH_SCALE="100000 1000000" BENCH_OVERDUE=1000000 \
#   BENCH_STORM="20ms:5000 0ms:20000" BENCH_STORM_SECONDS=20 scripts/bench.sh
# Add 5000000 to BENCH_SCALE for the 5M line (loading takes minutes); set
# BENCH_SCALE, BENCH_OVERDUE or BENCH_STORM empty to skip those.
# Last, issue 30's two: `bench history` (a year of history beside a fresh
# schema, before and after prune; the short form by default,
# BENCH_HISTORY_LONG=1 for the issue's year: 20M sends, 10M ledger rows, 1M
# events, which takes long) and `bench width` (BENCH_WIDTHS processes at
# once, BENCH_WIDTH_WINDOW each, mailboxes capped at BENCH_WIDTH_CAP a day,
# 50 by default: a cap makes every claim lock what it counts); set BENCH_HISTORY=0 or BENCH_WIDTHS empty
# to skip them.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?set DATABASE_URL, or run: scripts/pg run -- scripts/bench.sh}"
pairs=${BENCH_PAIRS:-5}
rows=${BENCH_ROWS:-200000}
river_peers=${BENCH_RIVER_PEERS-4:$((rows / 10)) 100:$rows}
steps=${BENCH_STEPS:-30339}
delays=${BENCH_SMTP_DELAYS-5ms 50ms}
delay_steps=${BENCH_DELAY_STEPS:-5000}
scale=${BENCH_SCALE-100000 1000000}
overdue=${BENCH_OVERDUE-1000000}
storm=${BENCH_STORM-20ms:5000 0ms:20000}
storm_seconds=${BENCH_STORM_SECONDS:-20}
history=${BENCH_HISTORY:-1}
history_long=${BENCH_HISTORY_LONG:-0}
widths=${BENCH_WIDTHS-1,2,4,8,16}
width_window=${BENCH_WIDTH_WINDOW:-15s}
width_cap=${BENCH_WIDTH_CAP:-50}
for v in "BENCH_PAIRS:$pairs" "BENCH_ROWS:$rows" "BENCH_STEPS:$steps" "BENCH_DELAY_STEPS:$delay_steps" "BENCH_STORM_SECONDS:$storm_seconds"; do
	[[ ${v#*:} =~ ^[1-9][0-9]*$ ]] || { echo "bench: invalid ${v%%:*} '${v#*:}': use a whole number of at least 1" >&2; exit 2; }
done
for p in $river_peers; do
	[[ $p =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] || { echo "bench: invalid BENCH_RIVER_PEERS entry '$p': use WORKERS:JOBS, e.g. 100:200000" >&2; exit 2; }
done
for p in $storm; do
	[[ $p =~ ^[0-9]+(ms|s):[1-9][0-9]*$ ]] || { echo "bench: invalid BENCH_STORM entry '$p': use SMTP_DELAY:STEPS, e.g. 20ms:5000" >&2; exit 2; }
done
# Figures count only from a quiet machine (docs/benchmarks.md): the run
# refuses to start over BENCH_MAX_LOAD (1.5; 0 to run anyway, the figures
# then void) and says its load before and after. Its own commands run at
# --max-load 0: each starts right after the last, busy with the run itself.
max_load=${BENCH_MAX_LOAD:-1.5}
[[ $max_load =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench: invalid BENCH_MAX_LOAD '$max_load': use a load average such as 1.5, or 0 to run at any load" >&2; exit 2; }
read -r load_before _ </proc/loadavg
if awk -v l="$load_before" -v m="$max_load" 'BEGIN { exit !(m > 0 && l >= m) }'; then
	echo "bench: the load average is $load_before, over BENCH_MAX_LOAD $max_load: a figure from a busy machine is noise; stop what runs beside the bench and run it again, or set BENCH_MAX_LOAD=0 (the figures are then void)" >&2
	exit 1
fi
echo "machine: load average $load_before before the run (figures count only under 1.5)"
bin=bin/rindabench # demo and bench (cmd/rindabench); make build builds it beside rindactl
make -s --no-print-directory build # cached: cheap, and never a stale binary
(cd bench && go build -o ../bin/rindapeers .)

if [ ! -x /usr/bin/time ]; then
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends time >/dev/null
	else
		echo "bench: /usr/bin/time is missing; install it with: sudo apt-get install -y time" >&2
		exit 1
	fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"; read -r l _ </proc/loadavg; echo "machine: load average $l after the run, $load_before before"' EXIT

# field NAME reads a number from one JSON document on stdin, rounded; "?"
# when the document does not have it. fieldf keeps the decimals.
field() { fieldf "$1" | awk '{ if ($1 == "?") print; else printf "%.0f\n", $1 }'; }
fieldf() { tr -d '\n' | sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p" | awk '{ print $1 } END { if (NR == 0) print "?" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "?" || b == "?" || b == 0) print "?"; else printf "%.2f", a / b }'; }
# pair FILE SUBJECT REFERENCE records one pair (skipped when a figure is
# missing: the server is not local).
pair() { [ "$2" = "?" ] || [ "$3" = "?" ] || echo "$2 $3" >>"$work/$1"; }
# summary LABEL FILE TARGET: the pairs' median, min and max ratio, each
# pair's ratio, and TARGET (e.g. ">= 0.70") with whether the median meets it.
summary() {
	local s med lo hi met=""
	[ -s "$work/$2" ] || { printf '%-44s (no pairs: figure not available here)\n' "$1"; return; }
	s=$(bin/rindapeers pairs <"$work/$2" 2>&1) || { printf '%-44s %s\n' "$1" "$s"; return; }
	med=$(fieldf median <<<"$s") lo=$(fieldf min <<<"$s") hi=$(fieldf max <<<"$s")
	if [ -n "$3" ]; then
		met=$(awk -v m="$med" -v op="${3%% *}" -v t="${3#* }" 'BEGIN { ok = (op == ">=") ? m >= t : m <= t; print ok ? "met" : "NOT met" }')
		met="target $3: $met"
	fi
	printf '%-44s median %5.2f  min %5.2f  max %5.2f  %s\n' "$1" "$med" "$lo" "$hi" "$met"
	printf '%-44s %s\n' "" "per pair: $(sed -n 's/.*"ratios":\[\([^]]*\)\].*/\1/p' <<<"$s" | tr ',' '\n' | awk '{ printf "%s%.2f", (NR > 1 ? " · " : ""), $1 }')"
}
# busy JSON: how many cores a run kept busy, from its rate and CPU per row
# (this process's, when given, and postgres's).
busy() {
	awk -v r="$(fieldf rows_per_sec <<<"$1")" -v c="$(fieldf cpu_us_per_row <<<"$1")" -v p="$(fieldf postgres_cpu_us_per_row <<<"$1")" \
		'BEGIN { if (p == "?") print "?"; else printf "%.2f", r * ((c == "?" ? 0 : c) + p) / 1e6 }'
}
# each FILE [COLUMN]: that column of a pairs file, one figure per pair;
# without COLUMN, both as "subject/reference".
each() {
	awk -v c="${2:-0}" '{ printf "%s", (NR > 1 ? " · " : "")
		if (c) printf "%.0f", $c; else printf "%.0f/%.0f", $1, $2 }' "$work/$1"
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "postgres: $(psql "$DATABASE_URL" -XAtc 'SHOW server_version'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit: $(git describe --always --dirty 2>/dev/null || echo unknown); $pairs pairs; started $(date -u '+%Y-%m-%d %H:%M UTC')"
echo

ceiling=()
for i in $(seq "$pairs"); do
	echo "pair $i/$pairs: claim floor (1, 4 clients), claim pipeline, River ($river_peers)" >&2
	f1=$(scripts/bench-floor.sh "$rows" 1)
	f4=$(scripts/bench-floor.sh "$rows" 4)
	out=$($bin bench claim --max-load 0 --rows "$rows" --output json)
	P=$(fieldf rows_per_sec <<<"$out")
	F=$(awk -v a="$(fieldf rows_per_sec <<<"$f1")" -v b="$(fieldf rows_per_sec <<<"$f4")" 'BEGIN { print (a > b) ? a : b }')
	pair claim_floor "$P" "$F"
	pair claim_floors "$(fieldf rows_per_sec <<<"$f1")" "$(fieldf rows_per_sec <<<"$f4")"
	pair claim_floors_cpu "$(fieldf postgres_cpu_us_per_row <<<"$f1")" "$(fieldf postgres_cpu_us_per_row <<<"$f4")"
	pair claim_cpu "$(fieldf cpu_us_per_row <<<"$out")" "$(fieldf postgres_cpu_us_per_row <<<"$out")"
	pair claim_busy "$(busy "$out")" "$(busy "$f4")"
	progress="rindactl $(field rows_per_sec <<<"$out"), floor $(field rows_per_sec <<<"$f1")/$(field rows_per_sec <<<"$f4")"
	for p in $river_peers; do
		r=$(bin/rindapeers river --workers "${p%%:*}" --jobs "${p#*:}")
		pair "claim_river_${p%%:*}" "$P" "$(fieldf rows_per_sec <<<"$r")"
		pair "river_cpu_${p%%:*}" "$(fieldf cpu_us_per_row <<<"$r")" "$(fieldf postgres_cpu_us_per_row <<<"$r")"
		progress+=", River ${p%%:*} $(field rows_per_sec <<<"$r")"
	done
	echo "pair $i/$pairs: rows/s $progress" >&2

	echo "pair $i/$pairs: email tick + bare loop, email floor, delays ($delays)" >&2
	out=$($bin bench email --max-load 0 --steps "$steps" --mailboxes 18 --output json)
	ef=$(scripts/bench-email-floor.sh "$steps" 18 1)
	# The same floor committing 'sending' one row per mailbox per round, as
	# the tick does to keep a crash's "delivery unknown" to a message or two
	# per mailbox.
	efr=$(scripts/bench-email-floor.sh "$steps" 18 1 18)
	pair email_bare "$(fieldf sends_per_sec <<<"$out")" "$(fieldf bare_sends_per_sec <<<"$out")"
	pair email_pgcpu "$(fieldf postgres_cpu_us_per_send <<<"$out")" "$(fieldf postgres_cpu_us_per_send <<<"$ef")"
	pair email_pgcpu_rounds "$(fieldf postgres_cpu_us_per_send <<<"$out")" "$(fieldf postgres_cpu_us_per_send <<<"$efr")"
	pair email_cpu "$(fieldf tick_cpu_us_per_send <<<"$out")" "$(fieldf bare_cpu_us_per_send <<<"$out")"
	# The email ceiling: the ratio a tick would reach if it cost no CPU
	# beyond the bare loop's and the floor's Postgres work, every core busy.
	ceiling+=("$(awk -v cores="$(nproc)" -v n="$steps" -v t="$(fieldf bare_seconds <<<"$out")" \
		-v b="$(fieldf bare_cpu_us_per_send <<<"$out")" -v f="$(fieldf postgres_cpu_us_per_send <<<"$ef")" \
		'BEGIN { if (b == "?" || f == "?") print "?"; else printf "%.2f", cores * t * 1e6 / (n * (b + f)) }')")
	progress="tick/bare $(ratio "$(fieldf sends_per_sec <<<"$out")" "$(fieldf bare_sends_per_sec <<<"$out")"), postgres µs per send tick $(field postgres_cpu_us_per_send <<<"$out") floor $(field postgres_cpu_us_per_send <<<"$ef") (rounds of 18: $(field postgres_cpu_us_per_send <<<"$efr"))"
	for d in $delays; do
		out=$($bin bench email --max-load 0 --steps "$delay_steps" --mailboxes 18 --smtp-delay "$d" --output json)
		pair "email_delay_$d" "$(fieldf sends_per_sec <<<"$out")" "$(fieldf bare_sends_per_sec <<<"$out")"
		progress+=", tick/bare at $d $(ratio "$(fieldf sends_per_sec <<<"$out")" "$(fieldf bare_sends_per_sec <<<"$out")")"
	done
	echo "pair $i/$pairs: $progress" >&2

	if [ -n "$storm" ]; then
		echo "pair $i/$pairs: enrichment storm alone (${storm_seconds}s), then email alone / beside it ($storm)" >&2
		out=$($bin bench storm --max-load 0 --duration "${storm_seconds}s" --output json)
		pair storm_cpu "$(fieldf postgres_cpu_us_per_call <<<"$out")" "$(fieldf calls_per_sec <<<"$out")"
		progress="storm $(field calls_per_sec <<<"$out") calls/s, postgres $(field postgres_cpu_us_per_call <<<"$out") µs per call"
		for e in $storm; do
			out=$($bin bench incident --max-load 0 --pairs 1 --smtp-delay "${e%%:*}" --steps "${e#*:}" --output json)
			pair "storm_${e%%:*}" "$(fieldf storm_sends_per_sec <<<"$out")" "$(fieldf alone_sends_per_sec <<<"$out")"
			progress+=", email at ${e%%:*} beside/alone $(field storm_sends_per_sec <<<"$out")/$(field alone_sends_per_sec <<<"$out")"
		done
		echo "pair $i/$pairs: $progress" >&2
	fi
done

echo "claim pipeline vs the raw-SQL floor and River, $rows rows (batch 100, concurrency 4); ratios of rows/s"
summary "rindactl / best floor (1 or 4 clients)" claim_floor ">= 0.70"
printf '%-44s %s\n' "  rindactl rows/s" "$(each claim_floor 1)"
printf '%-44s %s\n' "  best floor rows/s" "$(each claim_floor 2)"
printf '%-44s %s\n' "  floor 1 / 4 clients rows/s" "$(each claim_floors)"
for p in $river_peers; do
	summary "rindactl / River, ${p%%:*} workers (${p#*:} jobs)" "claim_river_${p%%:*}" ">= 1.50"
	printf '%-44s %s\n' "  River ${p%%:*} workers jobs/s" "$(each "claim_river_${p%%:*}" 2)"
done
printf '%-44s %s\n' "cpu µs per row: rindactl / its postgres" "$(each claim_cpu)"
printf '%-44s %s\n' "  floor 1 / 4 clients, postgres" "$(each claim_floors_cpu)"
for p in $river_peers; do
	printf '%-44s %s\n' "  River ${p%%:*} workers / its postgres" "$(each "river_cpu_${p%%:*}")"
done
printf '%-44s %s\n' "cores busy: rindactl+postgres / floor 4 pg" "$(awk '{ printf "%s%.2f/%.2f", (NR > 1 ? " · " : ""), $1, $2 }' "$work/claim_busy")"
echo
echo "email, $steps steps over 18 mailboxes"
summary "(a) postgres cpu per send: tick / floor" email_pgcpu "<= 1.30"
printf '%-44s %s\n' "  tick postgres µs per send" "$(each email_pgcpu 1)"
printf '%-44s %s\n' "  floor postgres µs per send" "$(each email_pgcpu 2)"
summary "  tick / floor, 'sending' in rounds of 18" email_pgcpu_rounds ""
printf '%-44s %s\n' "  that floor's postgres µs per send" "$(each email_pgcpu_rounds 2)"
for d in $delays; do
	summary "(b) tick / bare loop, server takes $d" "email_delay_$d" ">= 0.90"
	printf '%-44s %s\n' "  tick / bare sends/s ($delay_steps steps)" "$(each email_delay_$d)"
done
summary "(c) tick / bare loop, server at once" email_bare ""
printf '%-44s %s\n' "  tick / bare sends/s" "$(each email_bare)"
printf '%-44s %s\n' "  rindactl cpu µs per send: tick / bare" "$(each email_cpu)"
printf '%-44s %s\n' "  email ceiling at the floor (each pair)" "$(IFS=/; echo "${ceiling[*]}" | sed 's|/| · |g')"
echo

if [ -n "$storm" ]; then
	echo "email beside the incident's enrichment storm (enrich tick --batch 1000 --concurrency 25 in a loop, Findymail out of credits, Hunter at 40 ms, buckets off, 18 mailboxes); ratios of sends/s"
	for e in $storm; do
		target=""
		case ${e%%:*} in 20ms) target=">= 0.90" ;; 0ms | 0s) target=">= 0.60" ;; esac
		summary "beside / alone, SMTP ${e%%:*} (${e#*:} steps)" "storm_${e%%:*}" "$target"
		printf '%-44s %s\n' "  beside / alone sends/s" "$(each "storm_${e%%:*}")"
	done
	printf '%-44s %s\n' "postgres µs per provider call (storm alone)" "$(each storm_cpu 1)"
	printf '%-44s %s\n' "  storm calls/s" "$(each storm_cpu 2)"
	echo
fi

# claim_rss N: one `bench claim --rows N` under /usr/bin/time; prints its
# JSON and then its peak RSS (KiB) on the last line.
claim_rss() { /usr/bin/time -f '%M' "$bin" bench claim --max-load 0 --rows "$1" --output json 2>&1 | tr -d '\n'; echo; }
rss_of() { sed -n 's/.*}\([0-9]*\)$/\1/p'; }
echo "scale line and peak memory (one run each)" >&2
M10K=$(claim_rss 10000 | rss_of)
M1M=""
if [ -n "$scale" ]; then
	echo "scale: claim pipeline by due leads (one run each)"
	for n in $scale; do
		echo "scale: bench claim --rows $n" >&2
		out=$(claim_rss "$n")
		[ "$n" = 1000000 ] && M1M=$(rss_of <<<"$out")
		printf '%-44s %8.0f rows/s  cpu µs per row %s + postgres %s  peak RSS %s KiB\n' "  $n due leads" \
			"$(fieldf rows_per_sec <<<"$out")" "$(field cpu_us_per_row <<<"$out")" "$(field postgres_cpu_us_per_row <<<"$out")" "$(rss_of <<<"$out")"
	done
fi
[ -n "$M1M" ] || M1M=$(claim_rss 1000000 | rss_of)
printf '%-44s %s KiB / %s KiB = %s  target <= 1.10\n' "peak RSS 1M / 10k due rows" "$M1M" "$M10K" "$(ratio "$M1M" "$M10K")"
if [ -n "$overdue" ]; then
	echo "scale: status --overdue over $overdue leads and enrollments" >&2
	out=$(scripts/bench-overdue.sh "$overdue" "$overdue" 3)
	printf '%-44s median %.2f s  (runs %s s)  target < 1 s\n' "status --overdue, $overdue leads / enrollments" \
		"$(fieldf median_seconds <<<"$out")" "$(sed -n 's/.*"seconds":\[\([^]]*\)\].*/\1/p' <<<"$out" | sed 's/,/ · /g')"
fi

if [ "$history" != 0 ]; then
	args=()
	if [ "$history_long" = 1 ]; then
		args=(--sequences 5000000 --calls 10000000 --events 1000000 --tick-runs 2000000)
	fi
	echo "history: bench history ${args[*]}" >&2
	echo
	echo "history (issue 30): $bin bench history --max-load 0 ${args[*]}"
	$bin bench history --max-load 0 "${args[@]}"
fi
if [ -n "$widths" ]; then
	echo "width: bench width --widths $widths --window $width_window --daily-cap $width_cap" >&2
	echo
	echo "width (issue 30): $bin bench width --max-load 0 --widths $widths --window $width_window --daily-cap $width_cap"
	$bin bench width --max-load 0 --widths "$widths" --window "$width_window" --daily-cap "$width_cap"
fi

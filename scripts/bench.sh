#!/usr/bin/env bash
# `make bench`: the figures of docs/benchmarks.md, on the database in
# DATABASE_URL (make bench starts a throwaway cluster with scripts/pg).
# Each throughput is the median of BENCH_RUNS runs, interleaved, because a
# shared 2-core machine is noisy. Each run also measures the email SQL
# floor (scripts/bench-email-floor.sh) and from it the email ceiling: the
# ratio a tick would reach if it cost no CPU beyond the bare loop's and the
# floor's Postgres work, with every core busy. Then one email run per
# BENCH_SMTP_DELAYS entry: the same drain against a server that takes that
# long to accept each message, as a real provider does.
#   BENCH_ROWS=200000 BENCH_STEPS=30339 BENCH_RUNS=3 BENCH_SMTP_DELAYS="1ms 5ms" scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?set DATABASE_URL, or run: scripts/pg run -- scripts/bench.sh}"
rows=${BENCH_ROWS:-200000}
steps=${BENCH_STEPS:-30339}
runs=${BENCH_RUNS:-3}
delays=${BENCH_SMTP_DELAYS-1ms 5ms}
bin=bin/rindactl
make -s build # cached: cheap, and never a stale binary

if [ ! -x /usr/bin/time ]; then
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends time >/dev/null
	else
		echo "bench: /usr/bin/time is missing; install it with: sudo apt-get install -y time" >&2
		exit 1
	fi
fi

# field NAME reads a number from one JSON document on stdin, rounded; "?"
# when the document does not have it.
field() { fieldf "$1" | awk '{ if ($1 == "?") print; else printf "%.0f\n", $1 }'; }
fieldf() { tr -d '\n' | sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p" | awk '{ print $1 } END { if (NR == 0) print "?" }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "postgres: $(psql "$DATABASE_URL" -XAtc 'SHOW server_version'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

pipe=() floor1=() floor4=() email=() bare=() cpu_pipe=() cpu_floor=() cpu_email=() efloor=() ceiling=()
for i in $(seq "$runs"); do
	echo "run $i/$runs: claim pipeline, floor (1 and 4 clients), email drain, email floor" >&2
	out=$($bin bench claim --rows "$rows" --output json)
	pipe+=("$(field rows_per_sec <<<"$out")")
	cpu_pipe+=("$(field cpu_us_per_row <<<"$out")+$(field postgres_cpu_us_per_row <<<"$out")")
	floor1+=("$(scripts/bench-floor.sh "$rows" 1 | field rows_per_sec)")
	out=$(scripts/bench-floor.sh "$rows" 4)
	floor4+=("$(field rows_per_sec <<<"$out")")
	cpu_floor+=("$(field postgres_cpu_us_per_row <<<"$out")")
	out=$($bin bench email --steps "$steps" --mailboxes 18 --output json)
	email+=("$(field sends_per_sec <<<"$out")")
	bare+=("$(field bare_sends_per_sec <<<"$out")")
	cpu_email+=("$(field tick_cpu_us_per_send <<<"$out")+$(field postgres_cpu_us_per_send <<<"$out") / $(field bare_cpu_us_per_send <<<"$out");")
	floor_out=$(scripts/bench-email-floor.sh "$steps" 18 1)
	efloor+=("$(field sends_per_sec <<<"$floor_out")/s,$(field postgres_cpu_us_per_send <<<"$floor_out")µs")
	ceiling+=("$(awk -v cores="$(nproc)" -v n="$steps" -v t="$(fieldf bare_seconds <<<"$out")" \
		-v b="$(fieldf bare_cpu_us_per_send <<<"$out")" -v f="$(fieldf postgres_cpu_us_per_send <<<"$floor_out")" \
		'BEGIN { if (b == "?" || f == "?") print "?"; else printf "%.2f", cores * t * 1e6 / (n * (b + f)) }')")
done
delayed=()
for d in $delays; do
	echo "email drain with the SMTP server taking $d per message" >&2
	out=$($bin bench email --steps "$steps" --mailboxes 18 --smtp-delay "$d" --output json)
	delayed+=("$(printf '%-34s %10s          (tick %s/s, bare %s/s)' "email / bare, server takes $d" \
		"$(ratio "$(field sends_per_sec <<<"$out")" "$(field bare_sends_per_sec <<<"$out")")" \
		"$(field sends_per_sec <<<"$out")" "$(field bare_sends_per_sec <<<"$out")")")
done
P=$(printf '%s\n' "${pipe[@]}" | median)
F1=$(printf '%s\n' "${floor1[@]}" | median)
F4=$(printf '%s\n' "${floor4[@]}" | median)
F=$(awk -v a="$F1" -v b="$F4" 'BEGIN { print (a > b) ? a : b }')
E=$(printf '%s\n' "${email[@]}" | median)
B=$(printf '%s\n' "${bare[@]}" | median)

echo "peak memory: bench claim over 10,000 and 1,000,000 due rows" >&2
rss() { /usr/bin/time -v "$bin" bench claim --rows "$1" 2>&1 >/dev/null | sed -n 's/.*Maximum resident set size (kbytes): //p'; }
M10K=$(rss 10000)
M1M=$(rss 1000000)

printf '%-34s %10.0f rows/s   (runs: %s)\n' "claim pipeline (batch 100, conc 4)" "$P" "${pipe[*]}"
printf '%-34s %10.0f rows/s   (runs: %s)\n' "raw-SQL floor, 1 client" "$F1" "${floor1[*]}"
printf '%-34s %10.0f rows/s   (runs: %s)\n' "raw-SQL floor, 4 clients" "$F4" "${floor4[*]}"
printf '%-34s %10s          target >= 0.70\n' "pipeline / best floor" "$(ratio "$P" "$F")"
printf '%-34s %s\n' "cpu per row (µs, each run)" "pipeline rindactl+postgres: ${cpu_pipe[*]}; floor (4 clients) postgres: ${cpu_floor[*]}"
printf '%-34s %10.0f sends/s  (runs: %s)\n' "email tick, $steps steps / 18 mb" "$E" "${email[*]}"
printf '%-34s %10.0f sends/s  (runs: %s)\n' "bare go-mail loop" "$B" "${bare[*]}"
printf '%-34s %10s          target >= 0.80\n' "email tick / bare go-mail" "$(ratio "$E" "$B")"
printf '%-34s %s\n' "cpu per send (µs, each run)" "tick+postgres / bare loop: ${cpu_email[*]}"
printf '%-34s %s\n' "email SQL floor, 1 client" "sends/s,postgres cpu per send (each run): ${efloor[*]}"
printf '%-34s %s\n' "email ceiling at the floor" "(each run) ${ceiling[*]}"
for line in "${delayed[@]}"; do printf '%s\n' "$line"; done
printf '%-34s %10s KiB\n' "peak RSS, 10,000 due rows" "$M10K"
printf '%-34s %10s KiB\n' "peak RSS, 1,000,000 due rows" "$M1M"
printf '%-34s %10s          target <= 1.10\n' "peak RSS ratio 1M / 10k" "$(ratio "$M1M" "$M10K")"

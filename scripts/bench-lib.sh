# Shared by the raw-SQL floors (scripts/bench-floor.sh,
# scripts/bench-email-floor.sh); source it, do not run it.
#
# floor_setup NAME: checks pgbench, builds bin/rindactl, creates a scratch
# schema migrated by rindactl and dropped on exit; sets $pgbench, $schema,
# $url (DATABASE_URL with search_path set to the schema), $pm (the local
# postmaster's pid, empty when the server is elsewhere) and $work (a
# temporary directory removed on exit).
floor_setup() {
	: "${DATABASE_URL:?set DATABASE_URL (make bench provides a throwaway cluster)}"
	local pgbin sep
	pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	pgbench=${pgbin:+$pgbin/}pgbench
	command -v "$pgbench" >/dev/null || { echo "$1: pgbench not found; apt-get install -y postgresql-contrib (or postgresql)" >&2; exit 1; }
	make -s --no-print-directory build >&2 # cached: cheap, and never a stale binary
	schema=rindactl_floor_$$
	work=$(mktemp -d)
	trap floor_cleanup EXIT
	psql "$DATABASE_URL" -qX -v ON_ERROR_STOP=1 -c "CREATE SCHEMA $schema"
	sep='?'
	[[ $DATABASE_URL == *\?* ]] && sep='&'
	url="${DATABASE_URL}${sep}options=-csearch_path%3D${schema}"
	bin/rindactl migrate --database-url "$url" >/dev/null
	pm=$(postmaster)
}

# floor_count SCRIPT NAME VALUE exits with a one-line error unless VALUE is
# a whole number of at least 1.
floor_count() {
	[[ $3 =~ ^[1-9][0-9]*$ ]] || { echo "$1: invalid $2 '$3': use a whole number of at least 1" >&2; exit 2; }
}

floor_cleanup() {
	psql "$DATABASE_URL" -qX -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
	rm -rf "$work"
}

# postmaster prints the pid of the local postmaster serving DATABASE_URL
# (the parent of a backend, read while its session is open), or nothing
# when the server is not on this machine.
postmaster() {
	local backend pm=""
	coproc PSQL { psql "$DATABASE_URL" -XAtq; }
	echo 'SELECT pg_backend_pid();' >&"${PSQL[1]}"
	read -r backend <&"${PSQL[0]}"
	if [ -r "/proc/$backend/stat" ] && [ "$(awk '{ print $2 }' "/proc/$backend/stat")" = "(postgres)" ]; then
		pm=$(awk '{ print $4 }' "/proc/$backend/stat")
	fi
	echo '\q' >&"${PSQL[1]}"
	wait "$PSQL_PID" 2>/dev/null || true
	echo "$pm"
}

# pgcpu PM prints the CPU ticks (1/100 s) of the cluster whose postmaster
# is PM: the postmaster (with its ended backends, through cutime/cstime)
# and its live backends. Other clusters on the machine do not count: they
# start and stop during a run. Empty when PM is empty or not running.
pgcpu() {
	local f
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] || return 0
	f=$(grep -ls '^[0-9]* (postgres) ' /proc/[0-9]*/stat || true)
	# A backend may end between grep and cat: cat skips it, awk still sums.
	# shellcheck disable=SC2086
	{ cat $f 2>/dev/null || true; } | awk -v pm="$1" '$1 == pm || $4 == pm { t += $14 + $15 + $16 + $17 } END { print t }'
}

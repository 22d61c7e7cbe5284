# Shared by the raw-SQL floors (scripts/bench-floor.sh,
# scripts/bench-email-floor.sh); source it, do not run it.
#
# floor_setup NAME: checks pgbench, builds bin/rindactl, creates a scratch
# schema migrated by rindactl and dropped on exit; sets $pgbench, $schema,
# $url (DATABASE_URL with search_path set to the schema) and $work (a
# temporary directory removed on exit).
floor_setup() {
	: "${DATABASE_URL:?set DATABASE_URL (make bench provides a throwaway cluster)}"
	local pgbin sep
	pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	pgbench=${pgbin:+$pgbin/}pgbench
	command -v "$pgbench" >/dev/null || { echo "$1: pgbench not found; apt-get install -y postgresql-contrib (or postgresql)" >&2; exit 1; }
	make -s build # cached: cheap, and never a stale binary
	schema=rindactl_floor_$$
	work=$(mktemp -d)
	trap floor_cleanup EXIT
	psql "$DATABASE_URL" -qX -v ON_ERROR_STOP=1 -c "CREATE SCHEMA $schema"
	sep='?'
	[[ $DATABASE_URL == *\?* ]] && sep='&'
	url="${DATABASE_URL}${sep}options=-csearch_path%3D${schema}"
	bin/rindactl migrate --database-url "$url" >/dev/null
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

# pgcpu prints the CPU ticks (1/100 s) of every postgres process, counting
# ended backends through the postmaster's cutime/cstime; empty when none is
# visible here.
pgcpu() {
	local f
	f=$(grep -ls '^[0-9]* (postgres) ' /proc/[0-9]*/stat || true)
	[ -n "$f" ] || return 0
	# A backend may end between grep and cat: cat skips it, awk still sums.
	# shellcheck disable=SC2086
	{ cat $f 2>/dev/null || true; } | awk '{ t += $14 + $15 + $16 + $17 } END { print t }'
}

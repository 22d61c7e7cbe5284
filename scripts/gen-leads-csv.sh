#!/usr/bin/env bash
# Writes a lead CSV of N rows to stdout, for the import measurement in
# docs/benchmarks.md (scripts/bench-import.sh): every row has an external_id,
# a name and a company_domain; every other row an email; a quarter a zone.
# 2,000,000 rows weigh about 115 MB.
#   scripts/gen-leads-csv.sh 2000000 > /tmp/leads-2m.csv
set -euo pipefail
n=${1:?usage: scripts/gen-leads-csv.sh ROWS}
awk -v n="$n" 'BEGIN {
	print "external_id,first_name,last_name,company_domain,email,timezone"
	for (i = 1; i <= n; i++) {
		email = (i % 2 == 0) ? "first" i "@company" (i % 50000) ".example" : ""
		tz = (i % 4 == 0) ? "Europe/Paris" : ""
		printf "crm-%d,First%d,Last%d,company%d.example,%s,%s\n", i, i, i, i % 50000, email, tz
	}
}'

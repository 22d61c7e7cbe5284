#!/usr/bin/env bash
# Two cells on this machine (docs/scaling.md): two throwaway Postgres
# clusters, each with its own workspaces and ticks (`rindactl run`), one
# workspace moved from one cell to the other between two rounds; exits 0
# when each workspace is in one cell and every step was sent once. Takes
# about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s --no-print-directory build
exec go run ./scripts/cells "$@"

#!/usr/bin/env bash
# `make demo`: replay the incident end to end. rindactl demo (which runs
# bin/rindabench, built beside it by make build) starts its own
# throwaway Postgres (or a scratch database on $DATABASE_URL's server) and
# in-process stand-ins, and removes everything when it ends. Extra
# arguments go to the demo: scripts/demo.sh --leads 86000 --overdue 30339
set -euo pipefail
cd "$(dirname "$0")/.."
exec bin/rindactl demo "$@"

#!/usr/bin/env bash
# `make demo` until the incident replay lands: start a throwaway Postgres,
# migrate it, check it, show its status, and remove it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/pg run -- bash -c 'bin/rindactl migrate && bin/rindactl doctor && bin/rindactl status'

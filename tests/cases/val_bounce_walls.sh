#!/usr/bin/env bash
# test-cost: 43 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# Undamped sphere bouncing between two walls: energy bounded, no drift (003 section 3.2). Checks in val_bounce_walls.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_bounce_walls.py "$tmp"

#!/usr/bin/env bash
# Periodic box without gravity: momentum conserved, energy bookkeeping closes. Checks in val_periodic_gas.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_periodic_gas.py "$tmp"

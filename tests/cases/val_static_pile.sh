#!/usr/bin/env bash
# Static pile on a floor: floor reaction = total weight. Checks in val_static_pile.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_static_pile.py "$tmp"

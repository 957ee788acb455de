#!/usr/bin/env bash
# Hertz impact: contact duration vs Hertz's formula 001 eq. (50). Checks in val_impact_hertz.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_impact_hertz.py "$tmp"

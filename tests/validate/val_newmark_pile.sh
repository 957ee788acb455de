#!/usr/bin/env bash
# test-timeout: 3600
# newmark: static pile of stiff glass spheres at dt = 50x the explicit critical dt (issue 5).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/validate/val_newmark_pile.py "$tmp"

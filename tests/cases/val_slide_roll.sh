#!/usr/bin/env bash
# Sphere launched sliding on a frictional floor: pure rolling at 5/7 v0 at t = 2 v0/(7 mu g). Checks in val_slide_roll.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_slide_roll.py "$tmp"

#!/usr/bin/env bash
# 000 example 3.3: a block pushed by a ramped force at three heights: stick, Coulomb limits,
# toppling. Checks in poly_push.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/poly_push.py "$tmp"

#!/usr/bin/env bash
# 000 example 3.2: a pile of ten cubes comes to rest; the ground reaction equals the weight.
# Checks in poly_pile.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/poly_pile.py "$tmp"

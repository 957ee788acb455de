#!/usr/bin/env bash
# 000 example 3.4: a tetrapod on the ground twisted by a ramped moment; the reactive friction
# moment saturates at the Coulomb limit. Checks in poly_tetrapod_twist.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/poly_tetrapod_twist.py "$tmp"

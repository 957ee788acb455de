#!/usr/bin/env bash
# test-cost: 18 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# 000 example 3.1: a cube falling on the ground in four orientations (vertex, edge, face,
# tilted), energy conservation and no spurious rotation; initial overlaps refused by the
# barrier law. Checks in poly_cube_fall.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/poly_cube_fall.py "$tmp"

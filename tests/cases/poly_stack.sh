#!/usr/bin/env bash
# A stack of three cubes at rest with law barrier_hybrid (zeta 0.7, explicit verlet): the ground
# carries the weight at every sample (no period-2 oscillation of the dashpots) and no cube
# creeps. Checks in poly_stack.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/poly_stack.py "$tmp"

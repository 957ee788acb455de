#!/usr/bin/env bash
# Gauss-Seidel vs Jacobi sweeps of the trapezoid fixed point on a column of spheres (001
# Remark 5): Gauss-Seidel must need fewer sweeps. Checks in val_trap_gs.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_trap_gs.py "$tmp"

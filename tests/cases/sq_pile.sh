#!/usr/bin/env bash
# A small pile of superquadrics and spheres settling in a box: superquadric contacts of every
# kind, equilibrium, no failed solve, VTK surfaces of the superquadrics read back with VTK,
# and the configuration errors of the shape. Checks in sq_pile.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/sq_pile.py "$tmp"

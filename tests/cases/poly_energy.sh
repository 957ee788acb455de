#!/usr/bin/env bash
# Energy of law barrier_hybrid between polyhedra: two cubes colliding in general poses (energy
# conserved without friction, dissipation booked exactly with it) and a cube sliding to rest
# on a slab (stopping distance, dissipated = initial kinetic energy). Checks in poly_energy.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/poly_energy.py "$tmp"

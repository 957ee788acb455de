#!/usr/bin/env bash
# test-cost: 52 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# A sphere bouncing between two walls for 250 undamped collisions with the variational
# integrator (003 section 3.2, Fig. 9): energy loss of the second-order scheme at tc/32 and
# tc/160 against velocity Verlet's energy fluctuation. Checks in val_variational_walls.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_variational_walls.py "$tmp"

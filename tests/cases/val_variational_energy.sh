#!/usr/bin/env bash
# Energy bookkeeping of the variational integrator in a short damped run with rejected steps:
# the `dissipated` counter is monotone, e_total + dissipated is conserved, and a sphere that
# starts sliding on the floor dissipates 2/7 of its kinetic energy before it rolls.
# Checks in val_variational_energy.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM PY
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_variational_energy.py "$tmp"

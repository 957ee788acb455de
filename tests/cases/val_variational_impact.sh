#!/usr/bin/env bash
# test-cost: 18 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# Two-particle impact with the variational integrator (003 section 3.1): against the
# analytic damped oscillator (003 eq. (33)-(34)) and against velocity Verlet (003 Fig. 7).
# Checks in val_variational_impact.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_variational_impact.py "$tmp"

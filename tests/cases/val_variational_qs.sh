#!/usr/bin/env bash
# Quasi-static mode of the variational integrator: a Hertzian column under a piston and a
# Hookean column under gravity, against closed-form equilibria. Checks in val_variational_qs.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_variational_qs.py "$tmp"

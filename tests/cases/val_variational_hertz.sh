#!/usr/bin/env bash
# Hertzian impact with the variational integrator: contact duration against Hertz's formula,
# quadratic convergence of Newton, Jacobian variants and PETSc options, rejected steps.
# Checks in val_variational_hertz.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_variational_hertz.py "$tmp"

#!/usr/bin/env bash
# newmark (src/integrators/newmark.c): the hand-written consistent Jacobian of 000 section
# 2.6.2 against PETSc's finite-difference Jacobian (-snes_test_jacobian), and Newton's quadratic
# convergence (-snes_monitor). Checks in val_newmark_jacobian.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_newmark_jacobian.py "$tmp"

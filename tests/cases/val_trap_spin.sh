#!/usr/bin/env bash
# 001 example 5.1: a spinning sphere on a flat surface, integrator trapezoid (phi = 0.5) with the
# rolling spring of 001 eq. (25)-(36). Checks in val_trap_spin.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_trap_spin.py "$tmp"

#!/usr/bin/env bash
# Order of the generalized trapezoidal rule (001 eq. (40)-(45)) on a Hertz impact of two spheres:
# phi = 0.5 second order, phi = 0 and 1 first order. Checks in val_trap_order.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_trap_order.py "$tmp"

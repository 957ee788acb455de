#!/usr/bin/env bash
# 001 example 5.2: three spheres rolling toward each other on a plane, integrator trapezoid with
# the rolling spring (001 eq. (25)-(36)). Checks in val_trap_three.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_trap_three.py "$tmp"

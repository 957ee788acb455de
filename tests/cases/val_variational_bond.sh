#!/usr/bin/env bash
# Bonded pair hit by a third particle, integrator variational (003 section 3.3): the bond
# survives, momentum is conserved, the bond force oscillates at the bond's frequency, and the
# bond is in the VTK contact network. Checks in val_variational_bond.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM PY
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_variational_bond.py "$tmp"

#!/usr/bin/env bash
# newmark's Coulomb and onset secants (src/integrators/newmark.c DemNmCycleWatch,
# DemNmSlipSecant): a stiff glass sphere sliding on a floor at dt = 50 explicit critical dt
# reaches rolling at 5/7 of its initial speed (analytic), with and without the secants.
# Checks in newmark_secant.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/newmark_secant.py "$tmp"

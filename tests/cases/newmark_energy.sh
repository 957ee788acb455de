#!/usr/bin/env bash
# newmark must not gain energy in impacts (issue 5; src/integrators/newmark.c DemNmRelease and
# the dashpot bookkeeping): a sphere on a floor at dt a sizeable fraction of the contact time
# and far above it, and the 4-sphere stiff pile settles. Checks in newmark_energy.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/newmark_energy.py "$tmp"

#!/usr/bin/env bash
# Blocky superquadrics (002's piling body: a = b = 2 mm, c = 1 mm, n = 4; and n = 10) at rest
# and sliding on an incline (gravity tilted), on a plane and on the flat face of a fixed
# superquadric; a body held by three contacts at rest (force and torque balance). Checks in
# sq_incline.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/sq_incline.py "$tmp"

#!/usr/bin/env bash
# Cylinder-wall impact (002 eq. (41)-(42), Kodam et al.): post-impact angular and translational
# velocity of a superquadric cylinder hitting a plane at 5..85 degrees (verlet; trapezoid and cd at
# 15, 45, 75 degrees). Checks in sq_cylinder_impact.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/sq_cylinder_impact.py "$tmp"

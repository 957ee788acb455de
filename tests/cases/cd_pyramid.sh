#!/usr/bin/env bash
# Cannonball pyramid (004 section 8.2-8.3), 5 spheres per base edge, uniform Hooke:
# compatible CD vs mmdem's own penalty DEM (verlet), floor reactions within 1e-4; classic
# CD (APGD, PGS) off by more than 5 %. Checks in cd_pyramid.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/cd_pyramid.py "$tmp" 5 hooke 1e-4 0.05

#!/usr/bin/env bash
# test-timeout: 3600
# Cannonball pyramid of 004 section 8.2 at full size (20 spheres per base edge, 2870 spheres),
# for uniform Hooke, uniform Hertz and two-species Hooke (E1/E0 = 5): compatible CD vs
# mmdem's own penalty DEM (verlet) through the floor reactions (004 Table 1), within 1e-4;
# classic CD (APGD, PGS) reported, off by more than 5 %. Checks in tests/cases/cd_pyramid.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for law in hooke hertz hooke2; do
  "$PY" tests/cases/cd_pyramid.py "$tmp" 20 $law 1e-4 0.05
done

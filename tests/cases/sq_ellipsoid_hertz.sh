#!/usr/bin/env bash
# Two ellipsoids pressed face to face: normal force vs overlap against Hertz with the
# Gaussian- (and mean-) curvature radius of 002 eq. (38)-(40). Checks in sq_ellipsoid_hertz.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/sq_ellipsoid_hertz.py "$tmp"

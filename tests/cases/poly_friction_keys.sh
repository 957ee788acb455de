#!/usr/bin/env bash
# Friction history of barrier_hybrid across changes of feature key (a cube's corners crossing
# the diagonal of a slab's face under a swinging load) and no creep on an incline below the
# friction angle. Checks in poly_friction_keys.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/poly_friction_keys.py "$tmp"

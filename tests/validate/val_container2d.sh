#!/usr/bin/env bash
# test-timeout: 3600
# 001 example 5.3 (config/container2d.yaml): 230 spheres dropped into a container in 2D, with and
# without rotational degrees of freedom, four random fillings. Checks in val_container2d.py;
# `val_container2d.py DIR --plot docs/img/container2d_ke.png` also writes the energy plot.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/validate/val_container2d.py "$tmp"

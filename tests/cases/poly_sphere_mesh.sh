#!/usr/bin/env bash
# Sphere-polyhedron and polyhedron-mesh contacts at rest (000_c57329b1a40312e0.txt sections
# 2.4 and 3.2): a sphere resting on a fixed cube, a cube resting on a mesh wall and on a plane.
# Checks in poly_sphere_mesh.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/poly_sphere_mesh.py "$tmp"

#!/usr/bin/env bash
# test-cost: 30 (seconds in a CI run; tests/run.sh starts the costly scripts first)
# Feature-level Verlet lists of sphere/polyhedron, polyhedron/mesh and sphere/mesh pairs
# (000_c57329b1a40312e0.txt section 2.5) give the same contacts as the full candidate search
# (-poly_feature_lists 0): bitwise-equal results on tests/cases/poly_mesh_lists.yaml (cubes, a
# tetrapod and spheres in a Gmsh funnel) and on the small hopper (spheres in a mesh funnel, law
# hooke). About 15 s of CPU. Checks in poly_mesh_lists.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/poly_mesh_lists.py "$tmp"

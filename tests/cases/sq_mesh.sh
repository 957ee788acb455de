#!/usr/bin/env bash
# Superquadric against mesh walls (src/shapes/superquadric_mesh.c): a superquadric at rest on a
# tilted triangulated plate (face contacts across internal edges) against the same run on a plane
# wall, and on the ridge of a roof-shaped mesh (edge contact). Checks in sq_mesh.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
if [ -n "${KEEP:-}" ]; then tmp=$KEEP; mkdir -p "$tmp"; else tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; fi
"$PY" tests/cases/sq_mesh.py "$tmp"

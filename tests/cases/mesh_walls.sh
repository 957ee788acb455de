#!/usr/bin/env bash
# Mesh walls (issue 6 part 5): a sphere resting on a mesh floor (reaction = weight), rolling over
# internal mesh edges without a bump, the wall surface in VTK, configuration errors with
# file:line:col. Checks in mesh_walls.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mesh_walls.py "$tmp"

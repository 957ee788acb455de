#!/usr/bin/env bash
# a mesh wall on 1 and 2 MPI ranks: beads sliding across ranks on a meshed floor keep their friction history (mpi_mesh.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_mesh.py "$tmp"

#!/usr/bin/env bash
# polyhedra on 1 and 2 MPI ranks: a falling pile and a cube sliding across the cut plane (mpi_poly.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_poly.py "$tmp"

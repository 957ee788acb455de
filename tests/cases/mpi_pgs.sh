#!/usr/bin/env bash
# cd (pgs) on 1 and 2 MPI ranks: the block-Jacobi + Gauss-Seidel hybrid agrees within the LCP tolerance (mpi_implicit.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_implicit.py "$tmp" pgs

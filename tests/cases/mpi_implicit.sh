#!/usr/bin/env bash
# trapezoid on 1 and 2 MPI ranks agrees (round-off with jacobi sweeps, tol with gauss_seidel; mpi_implicit.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_implicit.py "$tmp" trapezoid

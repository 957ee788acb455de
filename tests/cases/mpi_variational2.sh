#!/usr/bin/env bash
# variational on 1 and 2 MPI ranks: dynamic with sbaij (alpha 0) and matrix_free, quasi-static matrix_free (mpi_variational.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_variational.py "$tmp" sbaij matrix_free qs_matrix_free

#!/usr/bin/env bash
# cd (apgd) on 1 and 2 MPI ranks agrees within 1e-8, with identical iteration counts (warm starts migrate with their pairs; mpi_implicit.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_implicit.py "$tmp" cd

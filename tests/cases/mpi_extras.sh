#!/usr/bin/env bash
# Loads, bonds and output.track on 1 and 2 MPI ranks agree within 1e-8 (mpi_extras.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_extras.py "$tmp"

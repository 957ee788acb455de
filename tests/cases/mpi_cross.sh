#!/usr/bin/env bash
# Bodies crossing rank and periodic boundaries on 2 ranks: none lost, momentum kept (mpi_cross.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_cross.py "$tmp"

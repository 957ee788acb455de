#!/usr/bin/env bash
# Checkpoints restart on 1 or 2 ranks, whatever rank count wrote them, to the same result (mpi_checkpoint.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_checkpoint.py "$tmp"

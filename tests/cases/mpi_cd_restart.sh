#!/usr/bin/env bash
# cd warm starts in a 2-rank checkpoint: restarts on 2 and 1 ranks take the same APGD iterations (mpi_cd_restart.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
case $MMDEM in /*) ;; *) MMDEM=$PWD/$MMDEM ;; esac
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/mpi_cd_restart.py "$tmp"

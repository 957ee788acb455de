#!/usr/bin/env bash
# newmark's cycle freeze (src/integrators/newmark.c DemNmFreezeWatch, key freeze_cycles): the
# first impacts of benchmarks/stiff_pile's N = 100 pour with and without it. Checks in
# newmark_freeze.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/newmark_freeze.py "$tmp"

#!/usr/bin/env bash
# newmark's Jacobian pattern (src/integrators/newmark.c DemNmJacobianPattern, key
# jacobian_pattern): its size against an independent count, and the same solution with the
# near pattern and the list's. Checks in newmark_pattern.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/newmark_pattern.py "$tmp"

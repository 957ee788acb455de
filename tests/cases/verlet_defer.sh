#!/usr/bin/env bash
# verlet's deferred second kick changes no value (checks in verlet_defer.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/verlet_defer.py "$tmp"

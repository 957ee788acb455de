#!/usr/bin/env bash
# The fused sphere kernel's uniform-mass and uniform-radius blocks change no value (checks in fused_uniform.py).
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/fused_uniform.py "$tmp"

#!/usr/bin/env bash
# The fused sphere kernels of law hooke give the forces of the generic pipeline. Checks in fused_kernel.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/fused_kernel.py "$tmp"

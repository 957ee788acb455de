#!/usr/bin/env bash
# newmark night-owl contacts (000 section 2.6.3): detected, counted and re-solved.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_newmark_nightowl.py "$tmp"

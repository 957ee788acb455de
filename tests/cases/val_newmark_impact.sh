#!/usr/bin/env bash
# newmark vs verlet on two-sphere head-on impacts (Hooke and Hertz): restitution and contact
# duration at dt = tc/20 against verlet at tc/160 (issue 5). Checks in val_newmark_impact.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_newmark_impact.py "$tmp"

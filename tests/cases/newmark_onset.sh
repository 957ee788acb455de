#!/usr/bin/env bash
# newmark's onset transform (src/integrators/newmark.c DemNmOnsetScale, key onset_transform):
# first-contact steps of a stiff sphere on a floor that cycled open/closed without it. Checks
# in newmark_onset.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/newmark_onset.py "$tmp"

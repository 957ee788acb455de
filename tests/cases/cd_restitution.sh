#!/usr/bin/env bash
# Restitution variant of contact dynamics (004 section 4.3): rebound e_n within 1 %.
# Checks in cd_restitution.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/cd_restitution.py "$tmp"

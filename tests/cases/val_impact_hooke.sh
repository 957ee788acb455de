#!/usr/bin/env bash
# Two-sphere head-on Hookean impact vs the analytic damped oscillator (003 section 3.1,
# eq. (32)-(34)); restitution vs exp(-pi zeta / sqrt(1 - zeta^2)). Checks in val_impact_hooke.py.
set -u
cd "$(dirname "$0")/../.."
: "${MMDEM:=build/mmdem}" "${PY:=/usr/bin/python3}"
export MMDEM
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" tests/cases/val_impact_hooke.py "$tmp"

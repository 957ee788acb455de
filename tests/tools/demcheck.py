"""demcheck.py - small helpers for the validation case scripts (tests/cases/val_*.py).

Python here has no numpy: csv and math only. A case script imports this module, runs mmdem
with run(), reads its CSV output with read_csv() and reports with check() / ok() / not_ok(),
which print the TAP-like lines the test runner counts ("ok - NAME", "not ok - NAME: detail").

Every check compares a number from mmdem's output against an independent value (an analytic
formula evaluated here, a paper's value, or a conservation law), never against an earlier run.
"""
import csv
import math
import os
import subprocess
import sys

MMDEM = os.environ.get("MMDEM", "build/mmdem")
G = 9.81

failures = 0


# the stiff glass beads of the newmark cases (r = 1 mm, E = 63 GPa as 000's piles) with
# Hertz-Mindlin: the materials, contact and shapes blocks of a run description (then bodies,
# then FLOOR)
GLASS_BEADS = """materials:
  glass: {density: 2500, youngs_modulus: 63.0e9, poisson_ratio: 0.22, restitution: 0.3, friction: 0.5}
contact:
  - {pair: default, law: hertz_mindlin}
shapes:
  bead: {type: sphere, radius: 0.001}
"""
FLOOR = """walls:
  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], material: glass, name: floor}
"""


def ok(name, detail=""):
    print("ok - %s%s" % (name, (": " + detail) if detail else ""))
    sys.stdout.flush()


def not_ok(name, detail):
    global failures
    failures += 1
    print("not ok - %s: %s" % (name, detail))
    sys.stdout.flush()


def check(name, err, tol, detail=""):
    """ok when err <= tol (err is an error measure >= 0; NaN fails)."""
    text = "error %.3e (tolerance %.1e)%s" % (err, tol, ("; " + detail) if detail else "")
    if err <= tol:
        ok(name, text)
        return True
    not_ok(name, text)
    return False


def fmt(x):
    """a float for the YAML or --set: repr round-trips exactly"""
    return repr(float(x))


def run(name, yaml, outdir, sets=(), log=None):
    """runs `mmdem run yaml --out outdir --set k=v ...`; on failure prints one not-ok line
    (with the tail of the log) and returns False."""
    cmd = [MMDEM, "run", yaml, "--out", outdir, "--quiet"]
    for k, v in sets:
        cmd += ["--set", "%s=%s" % (k, v)]
    log = log or (outdir.rstrip("/") + ".log")
    with open(log, "w") as fp:
        try:
            rc = subprocess.call(cmd, stdout=fp, stderr=subprocess.STDOUT, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            not_ok(name, "cannot run %s: %s" % (MMDEM, e))
            return False
    if rc != 0:
        with open(log) as fp:
            tail = " | ".join(l.strip() for l in fp.readlines()[-6:])
        not_ok(name, "mmdem run exited with status %d: %s" % (rc, tail))
        return False
    return True


def read_csv(path):
    """rows of a CSV file as dicts; numeric fields become floats"""
    rows = []
    with open(path, newline="") as fp:
        for r in csv.DictReader(fp):
            d = {}
            for k, v in r.items():
                try:
                    d[k] = float(v)
                except (TypeError, ValueError):
                    d[k] = v
            rows.append(d)
    return rows


def col(rows, name):
    return [r[name] for r in rows]


def sphere_mass(density, radius):
    return 4.0 / 3.0 * math.pi * radius ** 3 * density


def sphere_inertia(density, radius):
    return 0.4 * sphere_mass(density, radius) * radius ** 2


def finish():
    """exit status 0: the script could run (failures are reported as not-ok lines)"""
    sys.exit(0)

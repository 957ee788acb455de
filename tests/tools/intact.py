#!/usr/bin/python3
"""intact.py NAME DIR [NBODIES] - checks that the output directory of a run that stopped (a
failure or a signal) holds only whole files, readable by their readers:
  - thermo.csv, walls.csv, track.csv: every row has the header's number of fields, the file
    ends with a newline, steps never decrease;
  - bodies_final.csv: whole, NBODIES rows when given;
  - vtk/*.pvd: every listed dataset exists; every .vtp is read by VTK's XML reader without an
    error (tests/tools/vtk_read.py), with the positions and data it announces;
  - no temporary file (*.tmp) anywhere.
Prints "ok - NAME: ..." or "not ok - NAME: ..." lines. Run with /usr/bin/python3 (python3-vtk9).
"""
import csv
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vtk_read  # noqa: E402


def check(name, what, cond, detail=""):
    print(("ok - %s: %s" % (name, what)) if cond else ("not ok - %s: %s: %s" % (name, what, detail)))


def whole_csv(path):
    text = open(path).read()
    if not text.endswith("\n"):
        return False, "no newline at the end"
    rows = list(csv.reader(text.splitlines()))
    n = len(rows[0])
    bad = [i + 1 for i, r in enumerate(rows) if len(r) != n]
    if bad:
        return False, "rows with another field count: lines %s" % bad[:5]
    steps = [int(r[0]) for r in rows[1:]] if rows[0][0] == "step" else []
    if any(b < a for a, b in zip(steps, steps[1:])):
        return False, "steps decrease"
    return True, "%d rows" % (len(rows) - 1)


def main():
    name, out = sys.argv[1], sys.argv[2]
    nbodies = int(sys.argv[3]) if len(sys.argv) > 3 else None
    for f in ("thermo.csv", "walls.csv", "track.csv", "bodies_final.csv"):
        p = os.path.join(out, f)
        if not os.path.exists(p):
            if f in ("thermo.csv", "bodies_final.csv"):
                check(name, f + " exists", False, "missing")
            continue
        good, detail = whole_csv(p)
        check(name, "%s whole (%s)" % (f, detail), good, detail)
    if nbodies is not None and os.path.exists(os.path.join(out, "bodies_final.csv")):
        rows = open(os.path.join(out, "bodies_final.csv")).read().splitlines()
        check(name, "bodies_final.csv has %d bodies" % nbodies, len(rows) == nbodies + 1, "%d rows" % (len(rows) - 1))
    tmp = [p for p in glob.glob(os.path.join(out, "**"), recursive=True) if p.endswith(".tmp")]
    check(name, "no temporary files", not tmp, " ".join(tmp))
    pvds = sorted(glob.glob(os.path.join(out, "vtk", "*.pvd")))
    for pvd in pvds:
        try:
            d = vtk_read.read_pvd(pvd)
        except SystemExit:
            check(name, "%s readable" % pvd, False, "see stderr")
            continue
        missing = [s["file"] for s in d["datasets"] if not s["exists"]]
        check(name, "%s: %d datasets, all present" % (os.path.basename(pvd), len(d["datasets"])), not missing and d["datasets"], " ".join(missing))
    vtps = sorted(glob.glob(os.path.join(out, "vtk", "*.vtp")))
    bad = []
    for v in vtps:
        try:
            d = vtk_read.read_polydata(v)
            if len(d["xyz"]) != 3 * d["points"]:
                bad.append(v)
        except SystemExit:
            bad.append(v)
    check(name, "%d VTK files read by VTK without an error" % len(vtps), vtps and not bad, " ".join(bad))


if __name__ == "__main__":
    main()

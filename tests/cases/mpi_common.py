"""mpi_common.py - helpers of the MPI case scripts (tests/cases/mpi_*.py): runs mmdem on
n ranks through mpirun (as root: --allow-run-as-root; oversubscribed machines: yield when
idle), compares two runs' bodies_final.csv and thermo.csv."""
import math
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1",
           MMDEM_DECOMP_VERBOSE="1")


def run(name, nranks, args, log):
    """mmdem ARGS on nranks ranks (1: without mpirun); output to log; returns (ok, text)"""
    cmd = [dc.MMDEM] + list(args)
    if nranks > 1:
        cmd = ["mpirun", "--allow-run-as-root", "-n", str(nranks)] + cmd
    with open(log, "w") as fp:
        try:
            rc = subprocess.call(cmd, stdout=fp, stderr=subprocess.STDOUT, timeout=600, env=ENV)
        except (OSError, subprocess.TimeoutExpired) as e:
            dc.not_ok(name, "cannot run %s: %s" % (" ".join(cmd), e))
            return False, ""
    text = open(log).read()
    if rc != 0:
        dc.not_ok(name, "exit status %d: %s" % (rc, " | ".join(text.strip().splitlines()[-6:])))
        return False, text
    return True, text


def bodies(path):
    return {int(r["id"]): r for r in dc.read_csv(path)}


def max_pos_diff(a, b, L, periodic):
    """largest coordinate difference of the bodies of a and b (periodic minimum image)"""
    worst = 0.0
    for k in a:
        for d, c in enumerate("xyz"):
            e = abs(a[k][c] - b[k][c])
            if periodic[d]:
                e = min(e, abs(e - L[d]))
            worst = max(worst, e)
    return worst


def thermo_diff(ta, tb, cols=("ke_trans", "ke_rot", "pe_contact", "dissipated", "e_balance")):
    """(largest relative difference of the energy columns, rows whose contact counts differ)"""
    worst, badrows = 0.0, []
    for ra, rb in zip(ta, tb):
        for c in cols:
            s = max(abs(ra[c]), abs(rb[c]), 1e-300)
            worst = max(worst, abs(ra[c] - rb[c]) / s)
        if ra["contacts"] != rb["contacts"]:
            badrows.append(int(ra["step"]))
    return worst, badrows


def decomp_counts(log):
    """(owned per rank at the start, bodies migrated away summed over the ranks, periodic wraps
    summed) from the MMDEM_DECOMP_VERBOSE lines of a decomposed run's log"""
    own, mig, wraps = [], 0, 0
    for l in log.splitlines():
        w = l.split()
        if l.startswith("decomp: rank ") and " owns " in l:
            own.append(int(w[4]))
        if l.startswith("decomp: rank ") and " migrated away" in l:
            mig += int(w[5])
            wraps += int(w[9])
    return own, mig, wraps


def compare(name, d1, d2, L, periodic, tol, n):
    """the checks of a run on 1 rank (output d1) against one on several (d2): the same ids,
    positions within tol of the largest box size (periodic minimum image), the same thermo
    rows with identical contact counts and energies within tol relative"""
    b1, b2 = bodies(d1 + "/bodies_final.csv"), bodies(d2 + "/bodies_final.csv")
    n2 = len(dc.read_csv(d2 + "/bodies_final.csv"))
    if sorted(b1) == sorted(b2) == list(range(n)) and n2 == n:
        dc.ok(name + ": ids", "the same %d ids on 1 and 2 ranks, none twice" % n)
    else:
        dc.not_ok(name + ": ids", "1 rank %d ids, 2 ranks %d rows / %d ids" % (len(b1), n2, len(b2)))
        return
    dx = max_pos_diff(b1, b2, L, periodic)
    dc.check(name + ": positions 1 vs 2 ranks", dx / max(L), tol, "max |dx| = %.3e m" % dx)
    t1, t2 = dc.read_csv(d1 + "/thermo.csv"), dc.read_csv(d2 + "/thermo.csv")
    if [r["step"] for r in t1] != [r["step"] for r in t2] or len(t1) < 5:
        dc.not_ok(name + ": thermo rows", "%d rows on 1 rank, %d on 2 (or other steps)" % (len(t1), len(t2)))
        return
    de, bad = thermo_diff(t1, t2)
    if not bad and max(r["contacts"] for r in t1) > 0:
        dc.ok(name + ": contact counts", "identical in all %d rows (up to %d contacts)" % (len(t1), max(r["contacts"] for r in t1)))
    else:
        dc.not_ok(name + ": contact counts", "differ at steps %s (or no contact at all)" % bad[:10])
    dc.check(name + ": energies 1 vs 2 ranks", de, tol, "largest relative difference of ke, pe_contact, dissipated, e_balance over %d rows" % len(t1))


def cross_rank_contacts(tag, d1, bodies_csv, log2, L, N, end):
    """check `tag: contacts across ranks`: contacts of the 1-rank run's (d1) last VTK frame
    between bodies (gid < N, positions from bodies_csv) that the 2-rank run's final cut planes
    along x (its decomp verbose line, in log2) put on different ranks"""
    import glob
    import vtk
    cuts = None
    for l in log2.splitlines():
        if "cut planes x:" in l:
            cuts = [float(c) for c in l.split("cut planes x:")[1].split("y:")[0].split()]
    frames = sorted(glob.glob(d1 + "/vtk/contacts_*.vtp"))
    if not cuts or len(cuts) != 3 or not frames:
        dc.not_ok(tag + ": contacts across ranks", "no cut planes (%s) or contact frame" % cuts)
        return
    r = vtk.vtkXMLPolyDataReader()
    r.SetFileName(frames[-1])
    r.Update()
    cd = r.GetOutput().GetCellData()
    a, b = cd.GetArray("a"), cd.GetArray("b")
    bb = bodies(bodies_csv)

    def rank(i):
        return 0 if bb[i]["x"] % L[0] < cuts[1] else 1
    pairs = [(int(a.GetTuple1(k)), int(b.GetTuple1(k))) for k in range(cd.GetNumberOfTuples())]
    cross = [p for p in pairs if p[0] < N and p[1] < N and rank(p[0]) != rank(p[1])]
    if cross:
        dc.ok(tag + ": contacts across ranks", "%d of the %d contacts at t = %g s join bodies of different ranks" % (len(cross), len(pairs), end))
    else:
        dc.not_ok(tag + ": contacts across ranks", "none of the %d contacts at t = %g s" % (len(pairs), end))

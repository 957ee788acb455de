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

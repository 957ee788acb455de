"""verlet's deferred second kick (src/integrators/verlet.c, DemVerletMayDefer): on a step after
which nothing reads the state (no thermo row, VTK frame, checkpoint or last step), on one
process with the AVX-512 or AVX2 vector passes, the step's second half kick waits for the next step's first
pass, which then does both kicks and the drift over each body in turn. Reordering the passes
this way must change no value: each body's operations, and the order of the power sums that
book the dissipation, are those of the two passes of an undeferred step. Checked against runs
in which no kick is deferred, an independent computation of the same scheme:

  1. MMDEM_NO_DEFER=1 (every step completes its kick): bodies_final.csv and every thermo.csv
     row (wall_s aside) bitwise the same;
  2. thermo_every 1 (no step is idle, so none is deferred) against thermo_every 100: the same
     final bodies, and the same values in the rows of the common steps;
  3. a run stopped by a signal at an idle step (MMDEM_DEBUG_SIGNAL_STEP, not a thermo step):
     the checkpoint holds the step's end (the deferred kick done before it is written,
     ops->sync), so that the run restarted from it ends bitwise as the uninterrupted one;
  4. the run exercises the scheme: it dissipates energy (collisions, friction) and the
     bookkeeping closes (max |e_balance(t) - e_balance(0)| <= 1e-3 of the initial energy, as
     fused_kernel.py's closure check at this dt).

The AVX2 copy of the pass (four bodies at a time) is checked as in 1. with MMDEM_ISA=avx2.
Where the processor has neither AVX-512 nor AVX2+FMA nothing is deferred and the checks compare
two undeferred runs (reported in the ok line).
The bodies are fused_kernel.py's: 200 spheres (r = 0.8 .. 1.1 mm) with random velocities and
spins over a floor, periodic in x and y; 197 of them for the scalar tail past the last group of
eight.
"""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc
import sphere_gas as gas

tmp = sys.argv[1]
yaml = os.path.join(here, "fused_kernel.yaml")
rows = gas.rows()
write_bodies, energy = gas.write_bodies, gas.energy


def strip(rs):
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in rs]


def text(path):
    with open(path) as fp:
        return fp.read()


def run(tag, out, sets, env=None, restart=None):
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        if restart is None:
            return dc.run(tag, yaml, out, sets)
        cmd = [os.environ["MMDEM"], "run", yaml, "--out", out, "--quiet", "--restart", restart]
        for k, v in sets:
            cmd += ["--set", "%s=%s" % (k, v)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            dc.not_ok(tag, "exit %d: %s" % (p.returncode, (p.stdout + p.stderr)[-400:]))
            return False
        return True
    finally:
        os.environ.clear()
        os.environ.update(saved)


hdr = subprocess.run([os.environ["MMDEM"], "check", yaml, "--set", "bodies.0.file=" + write_bodies(os.path.join(tmp, "b.csv"), rows)],
                     capture_output=True, text=True).stdout
v4 = "AVX-512 sphere contacts and verlet" in hdr
deferring = v4 or "AVX2+FMA" in hdr
note = "kicks deferred (%s passes)" % ("AVX-512" if v4 else "AVX2") if deferring else "no vector passes here: nothing deferred, two undeferred runs compared"
for nb in (200, 197):
    bodies = write_bodies(os.path.join(tmp, "bodies%d.csv" % nb), rows[:nb])
    base = [("bodies.0.file", bodies)]
    tag = "verlet deferred kick (%d bodies)" % nb
    A, B, C = (os.path.join(tmp, "%s%d" % (s, nb)) for s in ("A", "B", "C"))
    if not (run(tag + " default", A, base) and run(tag + " MMDEM_NO_DEFER=1", B, base, {"MMDEM_NO_DEFER": "1"})
            and run(tag + " thermo_every 1", C, base + [("output.thermo_every", "1")])):
        continue
    ta, tb, tc = (dc.read_csv(os.path.join(d, "thermo.csv")) for d in (A, B, C))
    same = text(os.path.join(A, "bodies_final.csv")) == text(os.path.join(B, "bodies_final.csv")) and strip(ta) == strip(tb)
    (dc.ok if same else dc.not_ok)(tag + ": against MMDEM_NO_DEFER=1, bodies_final.csv and thermo.csv bitwise the same", note if same else "differ")
    common = {r["step"]: r for r in strip(ta)}
    rows_c = [r for r in strip(tc) if r["step"] in common]
    same = text(os.path.join(A, "bodies_final.csv")) == text(os.path.join(C, "bodies_final.csv")) and rows_c == [common[r["step"]] for r in rows_c] and len(rows_c) == len(ta)
    (dc.ok if same else dc.not_ok)(tag + ": against thermo_every 1 (no idle step), final bodies and the %d common thermo rows bitwise the same" % len(ta), "" if same else "differ")
    E0 = energy(rows[:nb])
    eb = max(abs(r["e_balance"] - ta[0]["e_balance"]) for r in ta) / E0
    dc.check(tag + ": bookkeeping closes, max |e_balance(t) - e_balance(0)| / E0", eb, 1e-3, "dissipated %.2f of E0" % (ta[-1]["dissipated"] / E0))
    if ta[-1]["dissipated"] < 0.1 * E0:
        dc.not_ok(tag + ": the run dissipates", "dissipated %.3g of E0" % (ta[-1]["dissipated"] / E0))
    # 3. stopped by SIGTERM after step 1234 (an idle step: thermo rows every 100), restarted
    D, R = os.path.join(tmp, "D%d" % nb), os.path.join(tmp, "R%d" % nb)
    p = subprocess.run([os.environ["MMDEM"], "run", yaml, "--out", D, "--quiet", "--set", "bodies.0.file=" + bodies],
                       env=dict(os.environ, MMDEM_DEBUG_SIGNAL_STEP="1234"), capture_output=True, text=True)
    ck = os.path.join(D, "checkpoints", "step-1234.ckpt")
    if p.returncode == 0 or not os.path.exists(ck):
        dc.not_ok(tag + ": a signal at idle step 1234 writes a checkpoint", "exit %d, %s" % (p.returncode, (p.stdout + p.stderr)[-300:]))
        continue
    if run(tag + " restart", R, base, restart=ck):
        same = text(os.path.join(A, "bodies_final.csv")) == text(os.path.join(R, "bodies_final.csv"))
        (dc.ok if same else dc.not_ok)(tag + ": stopped by a signal at idle step 1234 and restarted, bodies_final.csv bitwise the uninterrupted run's", "" if same else "differ")
# 5. the AVX2 copy of the fused pass (four bodies at a time; where the processor has AVX-512
# too, forced with MMDEM_ISA=avx2) against the same copy undeferred
if "AVX2+FMA" not in hdr:
    dc.ok("verlet deferred kick, AVX2 passes # SKIP: the processor has no AVX2+FMA (or MMDEM_ISA=generic is set)")
else:
    for nb in (200, 197):
        bodies = os.path.join(tmp, "bodies%d.csv" % nb)
        tag = "verlet deferred kick, MMDEM_ISA=avx2 (%d bodies)" % nb
        E, F = os.path.join(tmp, "E%d" % nb), os.path.join(tmp, "F%d" % nb)
        if run(tag, E, [("bodies.0.file", bodies)], {"MMDEM_ISA": "avx2"}) and \
           run(tag + " MMDEM_NO_DEFER=1", F, [("bodies.0.file", bodies)], {"MMDEM_ISA": "avx2", "MMDEM_NO_DEFER": "1"}):
            same = text(os.path.join(E, "bodies_final.csv")) == text(os.path.join(F, "bodies_final.csv")) and \
                strip(dc.read_csv(os.path.join(E, "thermo.csv"))) == strip(dc.read_csv(os.path.join(F, "thermo.csv")))
            (dc.ok if same else dc.not_ok)(tag + ": against MMDEM_NO_DEFER=1, bodies_final.csv and thermo.csv bitwise the same", "" if same else "differ")
dc.finish()

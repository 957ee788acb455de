"""Contact dynamics, restitution variant (004_66a055dbe6238b20.txt section 4.3).

A sphere (r = 1 cm) falls from a height h = 5 cm (centre at 6 cm) onto a floor plane;
integrator cd with `restitution: true`, dt = 1e-4 s. With the Newtonian restitution law
e_n = -dv_out / dv_in, the CD step that closes the contact replaces Phi/dt by e_n B v^t, so
the rebound velocity is e_n times the approach velocity, e_n the materials' restitution.

Checks, for e_n = 0.5 and 0.8 (materials.steel.restitution):
  impact speed  |v_in| vs sqrt(2 g h): within 1 % (free fall under semi-implicit Euler)
  restitution   v_out / |v_in| (track.csv, the steps before and after the impact): within 1 %
  apex          sqrt(h_out / h_in) of the first rebound: within 1 % of e_n
  no penetration  the sphere's lowest point never goes below the floor by more than 1e-9 r
and, without restitution (plastic contact, 004 eq. (16)): the sphere lands on the floor
within two steps of its fastest approach and stays there (|v_z| < 1e-9 m/s,
|gap| < 1e-9 r).
"""
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
sys.dont_write_bytecode = True
import demcheck as dc

tmp = sys.argv[1]
yaml = os.path.join(here, "cd_restitution.yaml")
R, Z0, G = 0.01, 0.06, 9.81
H = Z0 - R


def track(out):
    rows = dc.read_csv(os.path.join(out, "track.csv"))
    return [r["time"] for r in rows], [r["z"] for r in rows], [r["vz"] for r in rows]


for e in (0.5, 0.8):
    tag = "cd restitution e = %g" % e
    out = os.path.join(tmp, "e%g" % e)
    if not dc.run(tag, yaml, out, sets=[("materials.steel.restitution", dc.fmt(e))]):
        continue
    t, z, vz = track(out)
    i = min(range(len(vz)), key=lambda k: vz[k])     # last step before the impact
    vin, vout = -vz[i], vz[i + 1]
    dc.check(tag + ": impact speed vs sqrt(2 g h)", abs(vin / math.sqrt(2 * G * H) - 1), 1e-2,
             "|v_in| = %.6f m/s, sqrt(2 g h) = %.6f m/s" % (vin, math.sqrt(2 * G * H)))
    dc.check(tag + ": rebound v_out / |v_in| vs e_n", abs(vout / vin / e - 1), 1e-2,
             "v_out / |v_in| = %.6f" % (vout / vin))
    # apex of the first rebound: highest point before the second impact
    k2 = i + 1
    while k2 + 1 < len(z) and not (vz[k2] < 0 and vz[k2 + 1] > 0):
        k2 += 1
    hout = max(z[i + 1:k2 + 1]) - R
    dc.check(tag + ": rebound apex sqrt(h_out / h_in) vs e_n", abs(math.sqrt(hout / H) / e - 1), 1e-2,
             "h_out = %.6g m, h_in = %.6g m" % (hout, H))
    dc.check(tag + ": no penetration of the floor, max(R - z) / R", max(0.0, max(R - zz for zz in z)) / R, 1e-9)

tag = "cd plastic (no restitution)"
out = os.path.join(tmp, "plastic")
if dc.run(tag, yaml, out, sets=[("integrator.restitution", "false")]):
    t, z, vz = track(out)
    i = min(range(len(vz)), key=lambda k: vz[k])
    # the closing step lands exactly on the floor (Phi^t/dt term of 004 eq. (16)) with the
    # velocity -Phi^t/dt that closes the gap; from the next step on it must rest there
    k = next((j for j in range(i, len(z)) if abs(z[j] - R) <= 1e-9 * R), len(z))
    dc.check(tag + ": lands within two steps of the impact", max(0, k - (i + 2)), 0,
             "touching from step %d, last approaching step %d" % (k, i))
    if k < len(z):
        dc.check(tag + ": at rest on the floor after landing, max |v_z|", max(abs(v) for v in vz[k + 1:]), 1e-9)
        dc.check(tag + ": stays on the floor, max |z - R| / R", max(abs(zz - R) for zz in z[k:]) / R, 1e-9)
dc.finish()

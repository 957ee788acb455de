"""static_ab.py - bench.py's static window (CPU time of runs of 1000 and 6000 steps from a settled bed
bed_nN.csv in DIR, difference / 5000 steps / mean contacts) ROUNDS times, alternating builds.
usage: static_ab.py N ROUNDS DIR TAG=MMDEM [TAG=MMDEM ...]   (run it under the timing rule)"""
import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import bench
n, rounds, d0 = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
builds = dict(a.split("=") for a in sys.argv[4:])
res = {k: [] for k in builds}
for r in range(rounds):
    for tag, mm in builds.items():
        d = os.path.join(d0, "ab_n%d_%s_%d" % (n, tag, r)); os.makedirs(d, exist_ok=True)
        bed = os.path.join(d0, "bed_n%d.csv" % n)
        c0, r0, _ = bench.run(mm, d, "s1000", n, bed, 1000, 100)
        c1, r1, t1 = bench.run(mm, d, "s6000", n, bed, 6000, 100)
        us = 1e6 * (c1 - c0) / 5000 / bench.mean_contacts(r1, 1000, 6000)
        res[tag].append(us)
        print("n = %d round %d %s: static %.3f us per contact pair per step (loadavg %s)" % (n, r, tag, us, open("/proc/loadavg").read().strip()), flush=True)
for tag, v in res.items():
    s = sorted(v)
    print("n = %d %s: min %.3f median %.3f over %d: %s" % (n, tag, s[0], s[len(s) // 2], len(v), " ".join("%.3f" % x for x in v)))

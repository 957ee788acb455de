#!/usr/bin/env python3
"""
benchmarks/stream/roofline.py - the roofline-style estimate of `make bench` (issue 11): the
bytes a particle-step of the explicit sphere path moves through memory, times mmdem's
particle-steps per second (benchmarks/settle results.json, CPU-time rates), against the
bandwidth stream.c measured (triad). Usage: roofline.py RESULTS_JSON STREAM_OUTPUT

Bytes per particle-step (doubles 8 B, PetscInt 4 B), counted once per pass over the arrays
as if nothing stayed in cache between passes (an upper bound of the traffic; a working set
that fits in the last-level cache moves less). The passes of a step as of session 17 (the
force reset, the rebuild check and the finite check are inside verlet's first pass; the
second half kick of a step that writes no output is deferred into the next step's first
pass, which reads the same arrays: verlet.c DemVerletMayDefer; the benchmarks' timed steps
are such steps but for one in thermo_every):
  last step's second half kick + first half kick + drift + reset (verlet.c, isotropic
      bodies): reads x v w f t fd td (7 x 24), q 32, x0 24, inv_I 24, inv_m 8, m 8,
      flags 4; writes x v w f t fd td q                                               468
  (a separate second half kick, before session 17 and on output steps: reads v w f t fd td
      (6 x 24), inv_I 24, inv_m 8; writes v w 48: 224 more)
  pair filter and blocked contact loop (hooke_fused.c), one pass chunk by chunk (512
      candidate pairs filtered, then their contacts): x radius v w inv_m of every body 88,
      f t fd td read and written 192; per candidate pair a b 8 and the last-step byte
      read and written 2; per contact the history read and written 64 (the touch list and
      the second read of a, b stay in the first-level cache)     280 + 10 / pair + 64 / contact
  (image shift indices, read only for the pairs across a periodic side, not counted)
"""
import json
import re
import sys

BODY = 468 + 280  # + 224 on the steps with output (the undeferred second kick)
PAIR = 10
CONTACT = 64
PAIRS_PER_CONTACT = {"lattice": None, "bed": 4.39 / 2.31}  # bed-64k: 4.39 pairs and 2.31 contacts per body (callgrind counts, session 12; bed-8k 4.4 / 2.33)
PAIRS_LATTICE = 3.0                                            # lattice at 1.1 d: 3 pairs per body in the half list, no contact


def main():
    res = json.load(open(sys.argv[1]))
    txt = open(sys.argv[2]).read()
    m = re.search(r"triad\s+([0-9.]+) GB/s", txt)
    if not m:
        sys.exit("roofline: no triad bandwidth in %s" % sys.argv[2])
    bw = float(m.group(1)) * 1e9
    print("roofline: bytes per particle-step (upper bound, benchmarks/stream/roofline.py) x mmdem rate (CPU) vs triad %.2f GB/s" % (bw / 1e9))
    for r in res.get("rows", []):
        rate = r.get("mmdem_rate_cpu") or r.get("mmdem_rate")
        if not rate:
            continue
        c = r.get("mmdem_contacts_per_particle") or 0.0
        pairs = PAIRS_LATTICE if r["case"].startswith("lattice") else c * PAIRS_PER_CONTACT["bed"]
        b = BODY + PAIR * pairs + CONTACT * c
        print("  %-12s %6.0f B/particle-step x %.3g particle-steps/s = %5.2f GB/s = %4.0f %% of triad"
              % (r["case"], b, rate, b * rate / 1e9, 100 * b * rate / bw))
    print("  (above 100 %: the passes are served from cache, the case is not bound by memory bandwidth;"
          " below: the fraction of the bandwidth roof the explicit path reaches)")


main()

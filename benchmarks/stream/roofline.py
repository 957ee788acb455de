#!/usr/bin/env python3
"""
benchmarks/stream/roofline.py - the roofline-style estimate of `make bench` (issue 11): the
bytes a particle-step of the explicit sphere path moves through memory, times mmdem's
particle-steps per second (benchmarks/settle results.json, CPU-time rates), against the
bandwidth stream.c measured (triad). Usage: roofline.py RESULTS_JSON STREAM_OUTPUT

Bytes per particle-step (doubles 8 B, PetscInt 4 B), counted once per pass over the arrays
as if nothing stayed in cache between passes (an upper bound of the traffic; a working set
that fits in the last-level cache moves less):
  first half kick + drift (verlet.c): reads f t fd td inv_I I (6 x 24), inv_m 8, flags 4;
      reads and writes v w x (3 x 48) and q (64)                                 364
  forces zeroed with gravity (forces.c): reads m inv_m 16; writes f t fd td 96    112
  rebuild check (neighbour.c): reads x x0                                          48
  second half kick (verlet.c): reads f t fd td inv_I (5 x 24), inv_m 8;
      reads and writes v w (2 x 48)                                               224
  pair filter, per candidate pair: a b shiftidx 12, touch list 4                  16 / pair
  per contact: history read and write 64, touch and last-step lists 8             72 / contact
  (the gathers of x v w radius inv_m and the scatters of f t fd td per contact hit the
  arrays of the passes above; counted there)
"""
import json
import re
import sys

BODY = 364 + 112 + 48 + 224
PAIR = 16
CONTACT = 72
PAIRS_PER_CONTACT = {"lattice": None, "bed": 4.4 / 2.33}   # bed-8k: 4.4 pairs and 2.33 contacts per body (callgrind counts)
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

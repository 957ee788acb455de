/*
  fuzz_csv.c - libFuzzer target: the input is a bodies file (`file:` of a body set: a header
  naming x, y, z and optionally vx..wz, qw..qz, radius, then rows of numbers), read through a
  fixed run description and set up as `mmdem check` does. Seeds: tests/fuzz/corpus/csv.
*/
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static DemFuzzFile yaml, csv;
  static int         ready = 0;

  if (!ready) {
    char text[1024];
    if (DemFuzzInit() || DemFuzzFileOpen(&yaml, "fuzz_csv.yaml") || DemFuzzFileOpen(&csv, "fuzz_csv.csv")) abort();
    snprintf(text, sizeof(text),
             "name: fuzzcsv\n"
             "materials: {glass: {density: 2500, youngs_modulus: 1.0e7}}\n"
             "contact: [{pair: default, law: hertz_mindlin}]\n"
             "shapes: {bead: {type: sphere, radius: 0.001}}\n"
             "bodies: [{shape: bead, material: glass, file: %s}]\n"
             "walls: [{type: plane, point: [0, 0, -1], normal: [0, 0, 1], material: glass}]\n"
             "integrator: {type: verlet, dt: auto}\n"
             "run: {steps: 1}\n",
             csv.path);
    if (DemFuzzFileSet(&yaml, text, strlen(text))) abort();
    ready = 1;
  }
  if (size > (1 << 20)) return 0;
  if (DemFuzzFileSet(&csv, data, size)) abort();
  DemFuzzCheckConfig(yaml.path);
  return 0;
}

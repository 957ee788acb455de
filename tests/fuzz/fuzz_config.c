/*
  fuzz_config.c - libFuzzer target: the input is a run description (YAML). It goes through
  DemConfigLoad, DemSimSetFromConfig and DemSimSetUp, as `mmdem check FILE` does, from an
  in-memory file. Seeds: tests/fuzz/corpus/config; dictionary: tests/fuzz/config.dict.
*/
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static DemFuzzFile f;
  static int         ready = 0;

  if (!ready) {
    if (DemFuzzInit() || DemFuzzFileOpen(&f, "fuzz_config.yaml")) abort();
    ready = 1;
  }
  if (size > (1 << 20)) return 0;
  if (DemFuzzFileSet(&f, data, size)) abort();
  DemFuzzCheckConfig(f.path);
  return 0;
}

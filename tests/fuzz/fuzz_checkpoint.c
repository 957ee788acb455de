/*
  fuzz_checkpoint.c - libFuzzer target: the input is a checkpoint file for a fixed run
  description (8 beads with friction history, a periodic direction, a floor). The harness
  rewrites the header's sizes and checksums to match the input, so that the fuzzer reaches the
  section parser behind them (checksum mismatches have their own test in checkpoint.sh); an
  input the restart accepts is restored and stepped 3 times. Seeds: tests/fuzz/corpus/checkpoint
  (checkpoints of this description, made by tests/fuzz/run.sh).
*/
#include "fuzz_common.h"

static const char fuzz_ckpt_yaml[] = "name: fuzzckpt\n"
                                     "domain: {lo: [0, 0, 0], hi: [0.01, 0.01, 0.02], periodic: [true, false, false]}\n"
                                     "gravity: [0, 0, -9.81]\n"
                                     "materials: {glass: {density: 2500, youngs_modulus: 5.0e6, friction: 0.5, restitution: 0.5}}\n"
                                     "contact: [{pair: default, law: hertz_mindlin}]\n"
                                     "shapes: {bead: {type: sphere, radius: 0.001}}\n"
                                     "bodies: [{shape: bead, material: glass, velocity: [0.1, 0, -0.1],\n"
                                     "          lattice: {lo: [0.001, 0.004, 0.0011], hi: [0.0085, 0.0065, 0.0035], spacing: 0.0025}}]\n"
                                     "walls: [{type: plane, point: [0, 0, 0], normal: [0, 0, 1], material: glass}]\n"
                                     "integrator: {type: verlet, dt: auto}\n"
                                     "run: {steps: 40}\n"
                                     "output: {thermo_every: 10, checkpoint_every: 10}\n";

static uint32_t FuzzCrc32(const unsigned char *p, size_t n)
{
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int j = 0; j < 8; j++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

/* FUZZ_CKPT_SEEDS=DIR: run the description into DIR (checkpoints every 10 steps: the seeds
   of tests/fuzz/run.sh) and exit */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  const char *dir = getenv("FUZZ_CKPT_SEEDS");
  DemFuzzFile yaml;
  DemNode     root = NULL;
  DemSim      sim  = NULL;

  if (!dir) return 0;
  if (DemFuzzInit() || DemFuzzFileOpen(&yaml, "fuzz_ckpt.yaml") || DemFuzzFileSet(&yaml, fuzz_ckpt_yaml, strlen(fuzz_ckpt_yaml))) abort();
  if (DemConfigLoad(yaml.path, &root) || DemSimCreate(PETSC_COMM_SELF, &sim) || DemSimSetOutputDir(sim, dir)) abort();
  sim->out.quiet = PETSC_TRUE;
  if (DemSimSetFromConfig(sim, root) || DemSimRun(sim) || DemSimDestroy(&sim) || DemConfigDestroy(&root)) abort();
  exit(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static DemFuzzFile yaml, ck;
  static int         ready = 0;
  unsigned char     *buf;
  DemNode            root = NULL;
  DemSim             sim  = NULL;
  PetscErrorCode     ierr;

  if (!ready) {
    if (DemFuzzInit() || DemFuzzFileOpen(&yaml, "fuzz_ckpt.yaml") || DemFuzzFileOpen(&ck, "fuzz.ckpt")) abort();
    if (DemFuzzFileSet(&yaml, fuzz_ckpt_yaml, strlen(fuzz_ckpt_yaml))) abort();
    ready = 1;
  }
  if (size > (4 << 20)) return 0;
  buf = (unsigned char *)malloc(size + 1);
  memcpy(buf, data, size);
  if (size >= 48) { /* sizes and checksums made right */
    uint64_t psize = size - 48;
    uint32_t c;
    memcpy(buf + 16, &psize, 8);
    c = FuzzCrc32(buf + 48, size - 48), memcpy(buf + 24, &c, 4);
    c = FuzzCrc32(buf, 44), memcpy(buf + 44, &c, 4);
  }
  if (DemFuzzFileSet(&ck, buf, size)) abort();
  free(buf);
  DemSetLastError("%s", "");
  ierr = DemConfigLoad(yaml.path, &root);
  if (!ierr) ierr = DemSimCreate(PETSC_COMM_SELF, &sim);
  if (!ierr) {
    sim->out.quiet = PETSC_TRUE;
    ierr           = DemSimSetFromConfig(sim, root);
    if (!ierr) ierr = DemSimSetUp(sim);
    if (!ierr) ierr = DemSimSetRestart(sim, ck.path);
    if (!ierr) ierr = DemCheckpointRestore_Private(sim); /* checks the whole file, then applies it */
    for (int k = 0; !ierr && k < 3; k++) {
      DemStepInfo info;
      ierr = DemIntegratorStep(sim->integ, sim, sim->dt, &info);
      if (!ierr) sim->step++;
    }
  }
  (void)DemSimDestroy(&sim);
  (void)DemConfigDestroy(&root);
  return 0;
}

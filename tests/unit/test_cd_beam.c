/*
  test_cd_beam.c - the indeterminately supported beam of 004_66a055dbe6238b20.txt section 8.1
  (Figures 1-5) under the `cd` integrator (src/integrators/cd.c, cd_compat.c).

  Setup (planar, domain.dimension 2, gravity -y): a rigid platform of length L = 0.2 m and
  weight w = 10 N rests on three fixed spherical supports (radius r = 0.01 m) centred at
  x = 0, L/2, L on one line; it is dropped from 1 % of a radius above them and run until it
  has settled. The platform is modelled as one rigid body whose underside is a plane: a
  `plane` wall (normal -y, its point the platform's centre of mass at x = L/2) made mobile
  here by giving the wall body a mass w/g and the inertia of a slender beam m L^2/12. The
  sphere/plane collider then yields the three contacts with normal +-y and lever arms
  x_i - L/2 from the platform's centre, so B couples the platform's vertical translation and
  its rotation about z, exactly the two equilibrium equations of a rigid beam on three
  supports (one degree of indeterminacy). The plane is infinite, but only the three supports
  are below it, and the platform's length enters only through its inertia, which does not
  affect the static forces.

  The supports are listed middle first (bodies 0, 1, 2 at x = L/2, 0, L), so the natural
  contact order of PGS visits the middle contact first.

  Checks (forces at the end, sim->cf.fn per support):
    compatible CD, uniform stiffness:           10/3, 10/3, 10/3 within 1e-6 N (004 8.1.1)
    compatible CD, middle contact 3x as stiff:  2, 6, 2 within 1e-6 N (004 8.1.2); the
        stiffness ratio comes from the hooke laws of the material pairs (kn 1e6 vs 3e6 N/m)
    PGS, middle contact first (natural order):  0, 10, 0 within 1e-6 N (004 Figure 1(b))
    PGS, reversed order: a different distribution (max difference > 1 N) that still carries
        the weight (004 Figure 1(a): PGS depends on the contact order); random order
        (seed 3): carries the weight and balances the moment (distribution reported)
    APGD without compatibility: carries the weight, symmetric; the distribution is reported
    penalty DEM (`verlet`, hooke, critically damped), both stiffness cases: the same
        analytic values within 1e-6 N (004 Figure 4), an independent check of the setup
    every case: the platform is at rest (|v| < 1e-9 m/s) and sum of forces = w within 1e-9 N
*/
#include "demimpl.h"
#include "dem_test.h"
#include <unistd.h>

static char dir[256];

static const char *beam_yaml =
  "name: beam\n"
  "domain: {lo: [-0.05, -0.05, -0.05], hi: [0.25, 0.1, 0.05], dimension: 2}\n"
  "gravity: [0, -9.81, 0]\n"
  "materials:\n"
  "  plate: {density: 1000, restitution: 0.5}\n"
  "  soft: {density: 1000}\n"
  "  stiff: {density: 1000}\n"
  "contact:\n"
  "  - {pair: [plate, stiff], law: hooke, params: {kn: 3.0e6, gamma_n: 4000}}\n"
  "  - {pair: default, law: hooke, params: {kn: 1.0e6, gamma_n: 4000}}\n"
  "shapes:\n"
  "  post: {type: sphere, radius: 0.01}\n"
  "bodies:\n"
  "  - {shape: post, material: soft, fixed: true, list: [{x: [0.1, 0, 0]}]}\n"
  "  - {shape: post, material: soft, fixed: true, list: [{x: [0, 0, 0]}, {x: [0.2, 0, 0]}]}\n"
  "walls:\n"
  "  - {type: plane, point: [0.1, 0.0101, 0], normal: [0, -1, 0], material: plate, name: platform}\n"
  "integrator: {type: cd, dt: 1.0e-3}\n"
  "run: {end_time: 0.1}\n";

#define L_BEAM 0.2
#define W_BEAM 10.0

/* runs the beam with the given --set assignments; force on each support by its x (0, L/2, L) */
static PetscErrorCode RunBeam(const char *tag, const char *const sets[], PetscReal F[3], PetscReal *vplat)
{
  char          path[512], out[512];
  DemNode       root;
  DemSim        sim;
  DemBodyStore *bs;
  FILE         *fp;
  PetscInt      w;
  PetscReal     m = W_BEAM / 9.81, I = m * L_BEAM * L_BEAM / 12;

  PetscFunctionBegin;
  snprintf(path, sizeof(path), "%s/beam.yaml", dir);
  snprintf(out, sizeof(out), "%s/%s", dir, tag);
  fp = fopen(path, "w");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
  fputs(beam_yaml, fp);
  fclose(fp);
  PetscCall(DemConfigLoad(path, &root));
  for (PetscInt k = 0; sets && sets[k]; k++) PetscCall(DemConfigSet(root, sets[k]));
  PetscCall(DemSimCreate(PETSC_COMM_WORLD, &sim));
  PetscCall(DemSimSetFromConfig(sim, root));
  PetscCall(DemSimSetOutputDir(sim, out));
  sim->out.quiet = PETSC_TRUE;
  /* the platform: the plane wall becomes a rigid body of weight W_BEAM */
  PetscCall(DemSimGetBodies(sim, &bs));
  w = sim->walls[0].body;
  bs->m[w]     = m;
  bs->inv_m[w] = 1.0 / m;
  for (int d = 0; d < 3; d++) bs->I[3 * w + d] = I, bs->inv_I[3 * w + d] = 1.0 / I;
  bs->flags[w] &= ~(unsigned)DEM_FIXED;
  PetscCall(DemSimRun(sim));
  F[0] = F[1] = F[2] = -1;
  for (PetscInt c = 0; c < sim->cl.n; c++) {
    PetscInt a = sim->cl.a[c] == w ? sim->cl.b[c] : sim->cl.a[c];
    PetscInt k = (PetscInt)PetscFloorReal(bs->x[3 * a] / (0.5 * L_BEAM) + 0.5);
    if (k >= 0 && k < 3) F[k] = sim->cf.fn[c];
  }
  *vplat = PetscSqrtReal(bs->v[3 * w] * bs->v[3 * w] + bs->v[3 * w + 1] * bs->v[3 * w + 1]) + 0.5 * L_BEAM * PetscAbsReal(bs->w[3 * w + 2]);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# %-22s forces at x = 0, L/2, L: %.10f %.10f %.10f N (platform speed %.3g m/s)\n", tag, (double)F[0], (double)F[1], (double)F[2], (double)*vplat));
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void CheckForces(const char *tag, const PetscReal F[3], const PetscReal ref[3], PetscReal tol, PetscReal v)
{
  char name[256];
  for (int k = 0; k < 3; k++) {
    snprintf(name, sizeof(name), "beam %s: force on the support at x = %s", tag, k == 0 ? "0" : (k == 1 ? "L/2" : "L"));
    DEM_CHECK_ABS(name, F[k], ref[k], tol);
  }
  snprintf(name, sizeof(name), "beam %s: the supports carry the weight", tag);
  DEM_CHECK_ABS(name, F[0] + F[1] + F[2], W_BEAM, 1e-9);
  snprintf(name, sizeof(name), "beam %s: platform at rest", tag);
  DEM_CHECK(name, v < 1e-9, "platform speed %g m/s", (double)v);
}

int main(int argc, char **argv)
{
  PetscReal       F[3], G[3], v, d = 0;
  const PetscReal third[3] = {W_BEAM / 3, W_BEAM / 3, W_BEAM / 3}, stiff[3] = {2, 6, 2}, mid[3] = {0, W_BEAM, 0};
  const char     *compat[]     = {"integrator.compatible=true", NULL};
  const char     *compat3[]    = {"integrator.compatible=true", "bodies.0.material=stiff", NULL};
  const char     *pgs_nat[]    = {"integrator.solver=pgs", "integrator.order=natural", NULL};
  const char     *pgs_rev[]    = {"integrator.solver=pgs", "integrator.order=reversed", NULL};
  const char     *apgd[]       = {"integrator.solver=apgd", NULL};
  const char     *pgs_rnd[]    = {"integrator.solver=pgs", "integrator.order=random", "integrator.seed=3", NULL};
  const char     *pgs_compat[] = {"integrator.solver=pgs", "integrator.compatible=true", NULL};
  const char     *dem[]        = {"integrator.type=verlet", "integrator.dt=5e-5", "run.end_time=1.0", NULL};
  const char     *dem3[]       = {"integrator.type=verlet", "integrator.dt=5e-5", "run.end_time=1.0", "bodies.0.material=stiff", NULL};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  snprintf(dir, sizeof(dir), "/tmp/test_cd_beam.XXXXXX");
  if (!mkdtemp(dir)) {
    printf("not ok - mkdtemp\n");
    return 1;
  }
  PetscCall(RunBeam("compatible-uniform", compat, F, &v));
  CheckForces("compatible CD (APGD), uniform stiffness, 004 8.1.1", F, third, 1e-6, v);
  PetscCall(RunBeam("compatible-pgs", pgs_compat, F, &v));
  CheckForces("compatible CD (PGS), uniform stiffness", F, third, 1e-6, v);
  PetscCall(RunBeam("compatible-stiff-middle", compat3, F, &v));
  CheckForces("compatible CD, middle stiffness 3, 004 8.1.2", F, stiff, 1e-6, v);
  PetscCall(RunBeam("pgs-natural", pgs_nat, F, &v));
  CheckForces("PGS middle contact first, 004 Fig. 1(b)", F, mid, 1e-6, v);
  PetscCall(RunBeam("pgs-reversed", pgs_rev, G, &v));
  for (int k = 0; k < 3; k++) d = PetscMax(d, PetscAbsReal(F[k] - G[k]));
  DEM_CHECK("beam PGS: reversed contact order gives a different distribution (004 Fig. 1)", d > 1.0, "max difference %g N", (double)d);
  DEM_CHECK_ABS("beam PGS reversed: the supports carry the weight", G[0] + G[1] + G[2], W_BEAM, 1e-9);
  PetscCall(RunBeam("pgs-random", pgs_rnd, G, &v));
  DEM_CHECK_ABS("beam PGS random order (seed 3): the supports carry the weight", G[0] + G[1] + G[2], W_BEAM, 1e-9);
  DEM_CHECK_ABS("beam PGS random order: moment balance about the middle, f(0) = f(L)", G[0], G[2], 1e-9);
  PetscCall(RunBeam("apgd", apgd, F, &v));
  DEM_CHECK_ABS("beam APGD: the supports carry the weight", F[0] + F[1] + F[2], W_BEAM, 1e-9);
  DEM_CHECK_ABS("beam APGD: symmetric distribution", F[0], F[2], 1e-9);
  PetscCall(RunBeam("dem-uniform", dem, F, &v));
  for (int k = 0; k < 3; k++) {
    char name[128];
    snprintf(name, sizeof(name), "beam DEM reference, uniform: force at support %d", k);
    DEM_CHECK_ABS(name, F[k], third[k], 1e-6);
  }
  PetscCall(RunBeam("dem-stiff-middle", dem3, F, &v));
  for (int k = 0; k < 3; k++) {
    char name[128];
    snprintf(name, sizeof(name), "beam DEM reference, middle stiffness 3: force at support %d", k);
    DEM_CHECK_ABS(name, F[k], stiff[k], 1e-6);
  }
  {
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd)) printf("# could not remove %s\n", dir);
  }
  PetscCall(PetscFinalize());
  return dem_test_failed;
}

/*
  test_trapezoid.c - unit tests of the integrator `trapezoid` (src/integrators/trapezoid.c),
  the field forces (src/core/fields.c) and the rolling spring (src/contact/rolling_spring.h).
  Every expected value is computed here by hand, from closed forms or from conservation laws:

  1. phi = 0 is forward Euler (001 eq. (42), (45) with phi = 0): two steps of a sphere pressed
     into a floor (Hertz, 001 eq. (19)-(20), no damping, no friction) against x1 = x0 + h v0,
     v1 = v0 + h f(x0)/m with f written out here, and the orientation against the Rodrigues
     vector h w0 composed twice by 001 eq. (11) (eq. (47)), converted to a quaternion by hand.
  2. A torque-free body with three different principal inertias (set in the store after set-up):
     the world angular momentum stays constant to the iteration tolerance, and the kinetic
     energy 1/2 w.L to second order in h (the drift falls about 4x when h halves).
  3. Drag, 001 eq. (15), on a free sphere: the trapezoidal rule gives exactly
     v(n) = v0 ((1 - a)/(1 + a))^n, a = c h / (2 m); verlet and trapezoid both close the energy
     balance (kinetic + dissipated) to round-off, since the drag is in the dissipative arrays.
  4. Near-field (Mie) forces, 001 eq. (16)-(18): 40 spheres in a cloud, forces from
     DemForcesCompute against a brute-force sum over all pairs written here, and the potential
     against a Simpson quadrature of the force from d to the cut-off.
  5. Rolling spring (rolling_spring.h): a rolling sphere slides by O(alpha^2) only, a
     translation slides by its tangential part, the return mapping caps |Ft| at mu_d fn, and
     the energy loss of a stiffening spring at rest is -1/2 (kt - kt_old) |s|^2.
  6. Gauss-Seidel and Jacobi sweeps converge to the same step (tight tol) on a cluster of
     touching spheres; a step far beyond the fixed-point's reach is rejected with the state
     left as it was and dt_next = dt / 2.
*/
#include "demimpl.h"
#include "dem_test.h"
#include "dem_test_sim.h"
#include "../../src/contact/rolling_spring.h"
#include <string.h>
#include <unistd.h>

static char dir[256];

/* one accepted step, as run.c does: a rejected step is retried with the smaller dt */
static PetscErrorCode Step(DemSim sim, DemStepInfo *info)
{
  PetscFunctionBegin;
  for (;;) {
    PetscCall(DemIntegratorStep(sim->integ, sim, sim->dt, info));
    if (info->accepted) break;
    sim->dt = info->dt_next;
    sim->rejected++;
  }
  if (info->dt_next > 0) sim->dt = info->dt_next;
  sim->step++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- 1. forward Euler ---- */
static const char *euler_yaml = "name: euler\n"
                                "gravity: [0, 0, -9.81]\n"
                                "materials:\n"
                                "  g: {density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25, restitution: 1.0, friction: 0.0}\n"
                                "contact:\n"
                                "  - {pair: default, law: hertz_mindlin}\n"
                                "shapes:\n"
                                "  b: {type: sphere, radius: 0.01}\n"
                                "bodies:\n"
                                "  - {shape: b, material: g, list: [{x: [0.001, 0.002, 0.0099], v: [0.1, 0.05, -0.2], w: [3, -2, 5]}]}\n"
                                "walls:\n"
                                "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], material: g}\n"
                                "integrator: {type: trapezoid, dt: 1.0e-5, phi: 0}\n"
                                "run: {steps: 2}\n";

/* Hertz force of the sphere on the floor plus gravity, z component (001 eq. (19)-(20)) */
static PetscReal EulerForceZ(PetscReal z)
{
  const PetscReal r = 0.01, E = 1e7, nu = 0.25, m = 2500 * 4.0 / 3.0 * PETSC_PI * r * r * r;
  const PetscReal Es = E * E / (E * (1 - nu * nu) + E * (1 - nu * nu)), d = r - z;
  return -m * 9.81 + (d > 0 ? 4.0 / 3.0 * Es * PetscSqrtReal(r) * d * PetscSqrtReal(d) : 0);
}

/* quaternion of a Rodrigues vector alpha = 2 tan(theta/2) e, by hand: (cos, sin e) */
static void HandQuat(const PetscReal a[3], PetscReal q[4])
{
  PetscReal an = PetscSqrtReal(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]), th = 2 * PetscAtanReal(0.5 * an);
  q[0] = PetscCosReal(0.5 * th);
  for (int k = 0; k < 3; k++) q[k + 1] = an > 0 ? PetscSinReal(0.5 * th) * a[k] / an : 0;
}

static PetscErrorCode TestEuler(void)
{
  DemSim          sim;
  DemNode         root;
  DemStepInfo     info;
  DemBodyStore   *bs;
  const PetscReal h = 1e-5, r = 0.01, m = 2500 * 4.0 / 3.0 * PETSC_PI * r * r * r;
  PetscReal       x[3] = {0.001, 0.002, 0.0099}, v[3] = {0.1, 0.05, -0.2}, w[3] = {3, -2, 5}, x1[3], v1[3], x2[3], v2[3];
  PetscReal       a[3], a12[3], s, q1[4], q2[4], e = 0;

  PetscFunctionBegin;
  PetscCall(DemTestMakeSim(dir, "euler", euler_yaml, NULL, &sim, &root));
  bs = &sim->bodies;
  DEM_CHECK_REL("euler: force at t = 0 is gravity + Hertz (001 eq. (19))", bs->f[2], EulerForceZ(x[2]), 1e-12);
  for (int k = 0; k < 3; k++) {
    x1[k] = x[k] + h * v[k];
    v1[k] = v[k] + h * (k == 2 ? EulerForceZ(x[2]) : 0) / m;
  }
  for (int k = 0; k < 3; k++) {
    x2[k] = x1[k] + h * v1[k];
    v2[k] = v1[k] + h * (k == 2 ? EulerForceZ(x1[2]) : 0) / m;
  }
  for (int k = 0; k < 3; k++) a[k] = h * w[k];
  HandQuat(a, q1);
  /* eq. (11): alpha_{1+2} = 4 / (4 - a.a) (a + a - 1/2 a x a) = 8 a / (4 - a.a) */
  s = 4.0 / (4.0 - (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]));
  for (int k = 0; k < 3; k++) a12[k] = s * 2 * a[k];
  HandQuat(a12, q2);
  PetscCall(Step(sim, &info));
  for (int k = 0; k < 3; k++) e = PetscMax(e, PetscMax(PetscAbsReal(bs->x[k] - x1[k]) / r, PetscAbsReal(bs->v[k] - v1[k]) / 0.2));
  DEM_CHECK("euler step 1: x1 = x0 + h v0, v1 = v0 + h f(x0)/m", e < 1e-13, "max relative difference %g", (double)e);
  e = 0;
  for (int k = 0; k < 4; k++) e = PetscMax(e, PetscAbsReal(bs->q[k] - q1[k]));
  DEM_CHECK("euler step 1: q1 = q(alpha = h w0) (eq. (45), (47))", e < 1e-14, "max difference %g", (double)e);
  DEM_CHECK("euler step 1: w unchanged without torque", PetscAbsReal(bs->w[0] - 3) + PetscAbsReal(bs->w[1] + 2) + PetscAbsReal(bs->w[2] - 5) < 1e-13, "w = %g %g %g", (double)bs->w[0], (double)bs->w[1], (double)bs->w[2]);
  DEM_CHECK("euler step 1: one update, no iteration", info.iterations == 1, "%" PetscInt_FMT, info.iterations);
  PetscCall(Step(sim, &info));
  e = 0;
  for (int k = 0; k < 3; k++) e = PetscMax(e, PetscMax(PetscAbsReal(bs->x[k] - x2[k]) / r, PetscAbsReal(bs->v[k] - v2[k]) / 0.2));
  DEM_CHECK("euler step 2: x2 = x1 + h v1, v2 = v1 + h f(x1)/m", e < 1e-13, "max relative difference %g", (double)e);
  e = 0;
  for (int k = 0; k < 4; k++) e = PetscMax(e, PetscAbsReal(bs->q[k] - q2[k]));
  DEM_CHECK("euler step 2: q2 = q(alpha12), alpha12 by Rodrigues' composition eq. (11)", e < 1e-14, "max difference %g", (double)e);
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- 2. torque-free asymmetric body ---- */
static const char *free_yaml = "name: free\n"
                               "domain: {lo: [-1, -1, -1], hi: [1, 1, 1]}\n"
                               "gravity: [0, 0, 0]\n"
                               "materials:\n"
                               "  g: {density: 1000, youngs_modulus: 1.0e7}\n"
                               "contact:\n"
                               "  - {pair: default, law: hertz_mindlin}\n"
                               "shapes:\n"
                               "  b: {type: sphere, radius: 0.1}\n"
                               "bodies:\n"
                               "  - {shape: b, material: g, list: [{x: [0, 0, 0], w: [0.4, 3.0, 0.2], q: [0.9, 0.1, -0.3, 0.2]}]}\n"
                               "integrator: {type: trapezoid, dt: 1.0e-3, tol: 1.0e-11}\n"
                               "run: {end_time: 4}\n";

static void WorldL(DemBodyStore *bs, PetscReal L[3], PetscReal *ke)
{
  PetscReal wb[3], lb[3];
  DemQuatRotateInv(bs->q, bs->w, wb);
  for (int k = 0; k < 3; k++) lb[k] = bs->I[k] * wb[k];
  DemQuatRotate(bs->q, lb, L);
  *ke = 0.5 * (wb[0] * lb[0] + wb[1] * lb[1] + wb[2] * lb[2]);
}

static PetscErrorCode RunFree(PetscReal h, PetscReal *dL, PetscReal *dE)
{
  DemSim        sim;
  DemNode       root;
  DemStepInfo   info;
  DemBodyStore *bs;
  char          set[64];
  const char   *sets[] = {set, NULL};
  PetscReal     L0[3], E0, L[3], E, Lm;

  PetscFunctionBegin;
  snprintf(set, sizeof(set), "integrator.dt=%.17g", (double)h);
  PetscCall(DemTestMakeSim(dir, "free", free_yaml, sets, &sim, &root));
  bs = &sim->bodies;
  /* principal inertias 1 : 2 : 3 (the store's I is the body frame's) */
  for (int k = 0; k < 3; k++) {
    bs->I[k] *= (k + 1);
    bs->inv_I[k] = 1.0 / bs->I[k];
  }
  WorldL(bs, L0, &E0);
  Lm = PetscSqrtReal(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
  *dL = *dE = 0;
  for (PetscInt n = 0; n < (PetscInt)(2.0 / h + 0.5); n++) {
    PetscCall(Step(sim, &info));
    WorldL(bs, L, &E);
    for (int k = 0; k < 3; k++) *dL = PetscMax(*dL, PetscAbsReal(L[k] - L0[k]) / Lm);
    *dE = PetscMax(*dE, PetscAbsReal(E - E0) / E0);
  }
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestFreeRotation(void)
{
  PetscReal dL1, dE1, dL2, dE2;

  PetscFunctionBegin;
  PetscCall(RunFree(2e-3, &dL1, &dE1));
  PetscCall(RunFree(1e-3, &dL2, &dE2));
  DEM_CHECK("free rotation, inertia 1:2:3: world angular momentum constant (eq. (42) on L)", dL1 < 1e-10 && dL2 < 1e-10, "max relative change %g, %g", (double)dL1, (double)dL2);
  DEM_CHECK("free rotation: kinetic energy drift small (h w = 6e-3)", dE1 < 1e-4, "max relative change %g", (double)dE1);
  DEM_CHECK("free rotation: energy drift second order (ratio h -> h/2 in [3, 5])", dE1 / dE2 > 3 && dE1 / dE2 < 5, "drift %g -> %g, ratio %g", (double)dE1, (double)dE2, (double)(dE1 / dE2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- 3. drag ---- */
static const char *drag_yaml = "name: drag\n"
                               "domain: {lo: [-1, -1, -1], hi: [1, 1, 1]}\n"
                               "gravity: [0, 0, 0]\n"
                               "materials:\n"
                               "  g: {density: 1000, youngs_modulus: 1.0e7}\n"
                               "contact:\n"
                               "  - {pair: default, law: hertz_mindlin}\n"
                               "fields:\n"
                               "  drag: {c_fluid: 2.0, fluid_velocity: [0.1, 0, 0]}\n"
                               "shapes:\n"
                               "  b: {type: sphere, radius: 0.1}\n"
                               "bodies:\n"
                               "  - {shape: b, material: g, list: [{x: [0, 0, 0], v: [0.5, -0.3, 0.2]}]}\n"
                               "integrator: {type: trapezoid, dt: 1.0e-2, tol: 1.0e-12}\n"
                               "run: {steps: 200}\n";

static PetscErrorCode TestDrag(const char *integ)
{
  DemSim          sim;
  DemNode         root;
  DemStepInfo     info;
  DemBodyStore   *bs;
  char            set[64], name[160];
  const char     *sets[] = {set, NULL};
  const PetscReal c = 2.0, u[3] = {0.1, 0, 0}, v0[3] = {0.5, -0.3, 0.2}, h = 1e-2;
  PetscReal       m, g, e = 0, ke0, ke, emax = 0, f0;
  const PetscInt  N = 200;

  PetscFunctionBegin;
  if (!strcmp(integ, "trapezoid")) snprintf(set, sizeof(set), "integrator.phi=0.5");
  else snprintf(set, sizeof(set), "integrator={type: %s, dt: 1.0e-2}", integ);
  PetscCall(DemTestMakeSim(dir, "drag", drag_yaml, sets, &sim, &root));
  bs  = &sim->bodies;
  m   = bs->m[0];
  ke0 = 0.5 * m * (0.25 + 0.09 + 0.04);
  f0  = bs->f[0] * bs->f[0] + bs->f[1] * bs->f[1] + bs->f[2] * bs->f[2];
  /* verlet changes the kinetic energy by h/2 (F(n) + F(n+1)).v(n+1/2) plus the telescoping
     h^2/(8 m) (|F(n+1)|^2 - |F(n)|^2) (verlet.c): that term is part of its invariant */
  for (PetscInt n = 0; n < N; n++) {
    PetscReal tel = 0;
    PetscCall(Step(sim, &info));
    ke = 0.5 * m * (bs->v[0] * bs->v[0] + bs->v[1] * bs->v[1] + bs->v[2] * bs->v[2]);
    if (strcmp(integ, "trapezoid")) tel = h * h / (8 * m) * (bs->f[0] * bs->f[0] + bs->f[1] * bs->f[1] + bs->f[2] * bs->f[2] - f0);
    emax = PetscMax(emax, PetscAbsReal(ke + sim->dissipated - tel - ke0));
  }
  if (!strcmp(integ, "trapezoid")) {
    g = PetscPowReal((1 - c * h / (2 * m)) / (1 + c * h / (2 * m)), N);
    for (int k = 0; k < 3; k++) e = PetscMax(e, PetscAbsReal(bs->v[k] - (u[k] + (v0[k] - u[k]) * g)));
    DEM_CHECK("drag (001 eq. (15)), trapezoid: v(n) = u + (v0 - u) ((1 - a)/(1 + a))^n", e < 1e-12, "max difference %g m/s", (double)e);
  }
  snprintf(name, sizeof(name), "drag, %s: kinetic energy + dissipated constant (drag in the dissipative arrays)%s", integ, strcmp(integ, "trapezoid") ? ", up to verlet's telescoping term" : "");
  DEM_CHECK(name, emax < 1e-12 * ke0, "max |ke + dissipated - ke0| = %g J of %g J", (double)emax, (double)ke0);
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- 4. Mie forces ---- */
#define MIE_K1 2.0e-3
#define MIE_L1 2.0
#define MIE_K2 1.0e-6
#define MIE_L2 6.0
#define MIE_RC 0.25

static const char *mie_yaml = "name: mie\n"
                              "domain: {lo: [0, 0, 0], hi: [1, 1, 1]}\n"
                              "gravity: [0, 0, 0]\n"
                              "materials:\n"
                              "  g: {density: 1000, youngs_modulus: 1.0e7}\n"
                              "contact:\n"
                              "  - {pair: default, law: hertz_mindlin}\n"
                              "fields:\n"
                              "  mie: {kappa1: 2.0e-3, lambda1: 2, kappa2: 1.0e-6, lambda2: 6, cutoff: 0.25}\n"
                              "shapes:\n"
                              "  b: {type: sphere, radius: 0.02}\n"
                              "bodies:\n"
                              "  - {shape: b, material: g, random: {count: 40, region: {lo: [0, 0, 0], hi: [0.6, 0.6, 0.6]}, seed: 3}}\n"
                              "integrator: {type: trapezoid, dt: 1.0e-3}\n"
                              "run: {steps: 1}\n";

static PetscReal MieF(PetscReal d)
{
  return MIE_K1 * PetscPowReal(d, -MIE_L1) - MIE_K2 * PetscPowReal(d, -MIE_L2);
}

static PetscErrorCode TestMie(void)
{
  DemSim        sim;
  DemNode       root;
  DemBodyStore *bs;
  PetscReal     f[3 * 40], pe = 0, e = 0, fm = 0;
  PetscInt      np = 0;

  PetscFunctionBegin;
  PetscCall(DemTestMakeSim(dir, "mie", mie_yaml, NULL, &sim, &root));
  bs = &sim->bodies;
  PetscCall(PetscArrayzero(f, 3 * 40));
  for (PetscInt i = 0; i < 40; i++)
    for (PetscInt j = i + 1; j < 40; j++) {
      PetscReal dx[3], d;
      for (int k = 0; k < 3; k++) dx[k] = bs->x[3 * j + k] - bs->x[3 * i + k];
      d = PetscSqrtReal(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]);
      if (d >= MIE_RC) continue;
      np++;
      for (int k = 0; k < 3; k++) {
        f[3 * i + k] += MieF(d) * dx[k] / d; /* eq. (17)-(18): n_ij from i to j */
        f[3 * j + k] -= MieF(d) * dx[k] / d;
      }
      { /* U(d) = -int_d^rc F, Simpson with 2000 intervals */
        const PetscInt M = 2000;
        PetscReal      hs = (MIE_RC - d) / M, s = MieF(d) + MieF(MIE_RC);
        for (PetscInt k = 1; k < M; k++) s += (k % 2 ? 4 : 2) * MieF(d + k * hs);
        pe -= s * hs / 3;
      }
    }
  for (PetscInt k = 0; k < 3 * 40; k++) {
    e  = PetscMax(e, PetscAbsReal(bs->f[k] - f[k]));
    fm = PetscMax(fm, PetscAbsReal(f[k]));
  }
  DEM_CHECK("mie: the cloud has pairs inside the cut-off", np > 20, "%" PetscInt_FMT " pairs", np);
  DEM_CHECK("mie (001 eq. (16)-(18)): cell-grid forces = brute-force sum over all pairs", e <= 1e-12 * fm, "max difference %g N (largest force %g N)", (double)e, (double)fm);
  DEM_CHECK_REL("mie: potential = -int_d^rc F (Simpson), summed over the pairs, in pe_contact", sim->pe_contact, pe, 1e-9);
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- 5. rolling spring ---- */
static void TestRollingSpring(void)
{
  const PetscReal n[3] = {0, 0, 1}, r = 0.2, ra[3] = {0, 0, -r}, rb[3] = {0, 0, 0};
  const PetscReal th = 0.01, a = 2 * PetscTanReal(0.5 * th);
  PetscReal       dxa[3] = {r * PetscSinReal(th), 0, 0}, aa[3] = {0, a, 0}, ds[3], ft[3], en, dis, es, h[5] = {0, 0, 0, 0, 0};
  int             slip;

  /* rolling about y by th: the centre moves r sin(th) along x (exact rolling of the material
     point now at the contact, C' = Q C, eq. (26)) */
  DemRollingSlide_Private(n, ra, rb, dxa, aa, NULL, NULL, ds);
  DEM_CHECK("rolling spring: pure rolling slides by nothing (eq. (28)-(29))", PetscAbsReal(ds[0]) + PetscAbsReal(ds[1]) + PetscAbsReal(ds[2]) < 1e-15, "ds = %g %g %g", (double)ds[0], (double)ds[1], (double)ds[2]);
  dxa[0] = 1e-3, dxa[1] = 2e-3, dxa[2] = 5e-3;
  DemRollingSlide_Private(n, ra, rb, dxa, NULL, NULL, NULL, ds);
  DEM_CHECK("rolling spring: a translation slides by its tangential part", PetscAbsReal(ds[0] - 1e-3) + PetscAbsReal(ds[1] - 2e-3) + PetscAbsReal(ds[2]) < 1e-18, "ds = %g %g %g", (double)ds[0], (double)ds[1], (double)ds[2]);
  /* spinning about the normal: the contact point turns in place, no slide */
  aa[0] = 0, aa[1] = 0, aa[2] = 0.3;
  DemRollingSlide_Private(n, ra, rb, NULL, aa, NULL, NULL, ds);
  DEM_CHECK("rolling spring: spin about the normal slides by nothing", PetscAbsReal(ds[0]) + PetscAbsReal(ds[1]) < 1e-15, "ds = %g %g", (double)ds[0], (double)ds[1]);
  /* stick: |kt s| below mu_s fn */
  ds[0] = 1e-6, ds[1] = 0, ds[2] = 0;
  DemRollingSpring_Private(n, ds, 1e-4, 1e6, 10.0, 0.5, 0.3, h, PETSC_TRUE, ft, &en, &dis, &slip, &es);
  DEM_CHECK("rolling spring: stick, Ft = -kt s (eq. (31))", PetscAbsReal(ft[0] + 1.0) < 1e-12 && !slip && PetscAbsReal(es) < 1e-18, "ft %g slip %d loss %g", (double)ft[0], slip, (double)es);
  /* the same spring, stiffer by 20 % without motion: energy grows by 1/2 dkt s^2 without work */
  ds[0] = 0;
  DemRollingSpring_Private(n, ds, 1e-4, 1.2e6, 10.0, 0.5, 0.3, h, PETSC_TRUE, ft, &en, &dis, &slip, &es);
  DEM_CHECK_REL("rolling spring: stiffening at rest, loss = -1/2 (kt - kt_old) |s|^2", es, -0.5 * 0.2e6 * 1e-12, 1e-12);
  /* slip: trial spring 5e-6 m, |kt s| = 6 N > mu_s fn = 5 N: |Ft| = mu_d fn = 3 N (eq. (33)) and the
     spring returns to 3 N / kt (eq. (35)-(36)) */
  ds[0] = 5e-6 - h[0];
  DemRollingSpring_Private(n, ds, 1e-4, 1.2e6, 10.0, 0.5, 0.3, h, PETSC_TRUE, ft, &en, &dis, &slip, &es);
  DEM_CHECK("rolling spring: slip, |Ft| = mu_d fn and s = mu_d fn / kt (eq. (33)-(36))", slip && PetscAbsReal(ft[0] + 3.0) < 1e-12 && PetscAbsReal(h[0] - 3.0 / 1.2e6) < 1e-18, "ft %g slip %d s %g", (double)ft[0], slip, (double)h[0]);
  DEM_CHECK_REL("rolling spring: slip loss = spring work - stored change", es, 0.5 * 1.2e6 * 1e-6 * 5e-6 + 0.5 * 1.2e6 * (3.0 / 1.2e6) * (5e-6 - 1e-6 - 3.0 / 1.2e6), 1e-12);
}

/* ---- 6. sweeps and rejection ---- */
static const char *cluster_yaml = "name: cluster\n"
                                  "domain: {lo: [-1, -1, -1], hi: [1, 1, 1]}\n"
                                  "gravity: [0, 0, -9.81]\n"
                                  "materials:\n"
                                  "  g: {density: 2500, youngs_modulus: 1.0e7, restitution: 0.5, friction: 0.4}\n"
                                  "contact:\n"
                                  "  - {pair: default, law: hertz_mindlin, params: {tangential: rolling_spring}}\n"
                                  "shapes:\n"
                                  "  b: {type: sphere, radius: 0.01}\n"
                                  "bodies:\n"
                                  "  - shape: b\n"
                                  "    material: g\n"
                                  "    list:\n"
                                  "      - {x: [0, 0, 0.0099], v: [0.1, 0, -0.1]}\n"
                                  "      - {x: [0.0199, 0, 0.0099], v: [-0.1, 0.05, 0], w: [0, 5, 0]}\n"
                                  "      - {x: [0.00995, 0.0172, 0.0099], v: [0, -0.1, 0]}\n"
                                  "      - {x: [0.00995, 0.0057, 0.0262], v: [0, 0, -0.2]}\n"
                                  "walls:\n"
                                  "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], material: g}\n"
                                  "integrator: {type: trapezoid, dt: 2.0e-5, tol: 1.0e-11}\n"
                                  "run: {steps: 5}\n";

static PetscErrorCode TestSweeps(void)
{
  DemSim        sim[2];
  DemNode       root[2];
  DemStepInfo   info;
  const char   *gs[] = {"integrator.sweep=gauss_seidel", NULL}, *jac[] = {"integrator.sweep=jacobi", NULL};
  const char   *big[] = {"integrator.dt=5.0e-2", NULL};
  PetscReal     e = 0, x[3 * 5], v[3 * 5];
  PetscInt      itg = 0, itj = 0;

  PetscFunctionBegin;
  PetscCall(DemTestMakeSim(dir, "gs", cluster_yaml, gs, &sim[0], &root[0]));
  PetscCall(DemTestMakeSim(dir, "jac", cluster_yaml, jac, &sim[1], &root[1]));
  for (PetscInt n = 0; n < 5; n++) {
    PetscCall(Step(sim[0], &info));
    itg += info.iterations;
    PetscCall(Step(sim[1], &info));
    itj += info.iterations;
  }
  for (PetscInt k = 0; k < 3 * 4; k++) e = PetscMax(e, PetscMax(PetscAbsReal(sim[0]->bodies.x[k] - sim[1]->bodies.x[k]) / 0.01, PetscAbsReal(sim[0]->bodies.v[k] - sim[1]->bodies.v[k]) / 0.2));
  DEM_CHECK("sweeps: Gauss-Seidel (colours) and Jacobi reach the same steps", e < 1e-10, "max relative difference %g", (double)e);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# 5 steps: %" PetscInt_FMT " Gauss-Seidel sweeps, %" PetscInt_FMT " Jacobi sweeps\n", itg, itj));
  PetscCall(DemSimDestroy(&sim[1]));
  PetscCall(DemConfigDestroy(&root[1]));
  /* a step 2500x the one above, several collision times: the fixed point cannot converge */
  PetscCall(DemSimDestroy(&sim[0]));
  PetscCall(DemConfigDestroy(&root[0]));
  PetscCall(DemTestMakeSim(dir, "big", cluster_yaml, big, &sim[0], &root[0]));
  PetscCall(PetscArraycpy(x, sim[0]->bodies.x, 15));
  PetscCall(PetscArraycpy(v, sim[0]->bodies.v, 15));
  PetscCall(DemIntegratorStep(sim[0]->integ, sim[0], sim[0]->dt, &info));
  e = 0;
  for (PetscInt k = 0; k < 15; k++) e = PetscMax(e, PetscAbsReal(sim[0]->bodies.x[k] - x[k]) + PetscAbsReal(sim[0]->bodies.v[k] - v[k]));
  DEM_CHECK("rejection: a step beyond the fixed point's reach is not accepted", !info.accepted, "accepted after %" PetscInt_FMT " iterations", info.iterations);
  DEM_CHECK("rejection: dt_next = dt / 2", PetscAbsReal(info.dt_next - 2.5e-2) < 1e-17, "dt_next %g", (double)info.dt_next);
  DEM_CHECK("rejection: the state and the time are left as they were", e == 0 && sim[0]->time == 0, "max change %g, time %g", (double)e, (double)sim[0]->time);
  PetscCall(DemSimDestroy(&sim[0]));
  PetscCall(DemConfigDestroy(&root[0]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  snprintf(dir, sizeof(dir), "/tmp/test_trapezoid.XXXXXX");
  if (!mkdtemp(dir)) {
    printf("not ok - mkdtemp\n");
    return 1;
  }
  PetscCall(TestEuler());
  PetscCall(TestFreeRotation());
  PetscCall(TestDrag("trapezoid"));
  PetscCall(TestDrag("verlet"));
  PetscCall(TestMie());
  TestRollingSpring();
  PetscCall(TestSweeps());
  {
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd)) printf("# could not remove %s\n", dir);
  }
  PetscCall(PetscFinalize());
  return dem_test_failed;
}

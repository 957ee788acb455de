/*
  test_newmark.c - unit tests of the integrator `newmark` (src/integrators/newmark.c), the
  Newmark scheme for rigid bodies of 000_c57329b1a40312e0.txt sections 2.1-2.3, 2.6. Every
  expected value is computed here from a closed form or a conservation law:

  1. Free fall (000 eq. (20)-(21), gravity eq. (25)): Newmark integrates a constant
     acceleration exactly for any beta, gamma, so position and velocity match the parabola
     x0 + v0 t + g t^2 / 2 to round-off after 200 steps.
  2. A torque-free rigid body with principal inertias 1 : 2 : 3 (set in the store after
     set-up), no contacts, no gravity, 1000 steps: the world angular momentum
     L = R diag(I) R^T w is a conserved quantity of the scheme (000 eq. (22) with the discrete
     balance of angular momentum, newmark.c): |dL|/|L| < 1e-10 with the default SNES
     tolerances (issue 5), and at round-off (< 1e-13) when Newton is run to -snes_rtol 1e-12;
     the body-frame angular momentum stays on the polhode (|L_b| and the energy
     L_b . I^-1 L_b / 2 within 0.1 (h |w|)^2), and the body-frame angular velocity follows an
     RK4 solution of Euler's equations (dt/100) within 0.2 (h |w|)^2 |w| over the run, with
     an error of second order in h.
  3. Penetration test (000 section 2.4.7): two spheres in contact approaching so fast that
     the converged step carries them through each other (the normal turns over): the step is
     rejected with dt_next = dt / 2, the state and time are left as they were, and the run's
     protocol (retrying with dt / 2) then completes the step without penetration.
  4. A sphere launched sliding (v0 = 1 m/s, no spin) on a floor, hertz_mindlin with friction
     mu = 0.3, with and without the stick/slip active set (newmark.c active_set, friction.h):
     while it slides, Coulomb friction decelerates it, v = v0 - mu g t, and spins it up,
     w r = 5/2 mu g t (solid sphere, I = 2/5 m r^2); at t* = 2 v0 / (7 mu g) it rolls and
     keeps v = 5/7 v0 (the rigid-body solution of sliding-to-rolling; the Hertzian contact's
     compliance changes it by far less than the 1 % asserted). The two runs agree with each
     other to the Newton tolerance (the active set changes the solve, not the law).
*/
#include "demimpl.h"
#include "dem_test.h"
#include "dem_test_sim.h"
#include <string.h>
#include <unistd.h>

static char dir[256];

/* one accepted step, as run.c does: a rejected step is retried with the smaller dt */
static PetscErrorCode Step(DemSim sim, DemStepInfo *info, PetscInt *nrej)
{
  PetscFunctionBegin;
  for (PetscInt k = 0;; k++) {
    PetscCheck(k < 40 && sim->dt > 0, PETSC_COMM_SELF, PETSC_ERR_NOT_CONVERGED, "step %" PetscInt_FMT ": %" PetscInt_FMT " rejections, dt %g", sim->step + 1, k, (double)sim->dt);
    PetscCall(DemIntegratorStep(sim->integ, sim, sim->dt, info));
    if (info->accepted) break;
    sim->dt = info->dt_next;
    sim->rejected++;
    if (nrej) (*nrej)++;
  }
  if (info->dt_next > 0) sim->dt = info->dt_next;
  sim->step++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- 1. free fall ---- */
static const char *fall_yaml = "name: fall\n"
                               "domain: {lo: [-10, -10, -10], hi: [10, 10, 10]}\n"
                               "gravity: [0.5, -1.0, -9.81]\n"
                               "materials:\n"
                               "  g: {density: 1000}\n"
                               "contact:\n"
                               "  - {pair: default, law: hooke, params: {kn: 1.0e4}}\n"
                               "shapes:\n"
                               "  b: {type: sphere, radius: 0.1}\n"
                               "bodies:\n"
                               "  - {shape: b, material: g, list: [{x: [0.1, 0.2, 0.3], v: [1.0, 2.0, 3.0]}]}\n"
                               "integrator: {type: newmark, dt: 5.0e-3}\n"
                               "run: {steps: 200}\n";

static PetscErrorCode TestFreeFall(void)
{
  DemSim        sim;
  DemNode       root;
  DemStepInfo   info;
  DemBodyStore *bs;
  const PetscReal g[3] = {0.5, -1.0, -9.81}, x0[3] = {0.1, 0.2, 0.3}, v0[3] = {1, 2, 3};
  PetscReal     ex = 0, ev = 0, t;

  PetscFunctionBegin;
  PetscCall(DemTestMakeSim(dir, "fall", fall_yaml, NULL, &sim, &root));
  bs = &sim->bodies;
  for (PetscInt n = 0; n < 200; n++) PetscCall(Step(sim, &info, NULL));
  t = sim->time;
  for (int k = 0; k < 3; k++) {
    ex = PetscMax(ex, PetscAbsReal(bs->x[k] - (x0[k] + v0[k] * t + 0.5 * g[k] * t * t)));
    ev = PetscMax(ev, PetscAbsReal(bs->v[k] - (v0[k] + g[k] * t)));
  }
  DEM_CHECK("free fall: time after 200 steps of 5 ms", PetscAbsReal(t - 1.0) < 1e-12, "t = %.17g", (double)t);
  /* round-off: a1 u and a4 u cancel to g and v (about 3 digits lost per step), 200 steps */
  DEM_CHECK("free fall: position on the parabola x0 + v0 t + g t^2/2 (round-off, 1e-10)", ex < 1e-10, "max error %g m", (double)ex);
  DEM_CHECK("free fall: velocity v0 + g t (round-off, 1e-10)", ev < 1e-10, "max error %g m/s", (double)ev);
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- 2. torque-free asymmetric body ---- */
static const char *free_yaml = "name: free\n"
                               "domain: {lo: [-1, -1, -1], hi: [1, 1, 1]}\n"
                               "gravity: [0, 0, 0]\n"
                               "materials:\n"
                               "  g: {density: 1000}\n"
                               "contact:\n"
                               "  - {pair: default, law: hooke, params: {kn: 1.0e4}}\n"
                               "shapes:\n"
                               "  b: {type: sphere, radius: 0.1}\n"
                               "bodies:\n"
                               "  - {shape: b, material: g, list: [{x: [0, 0, 0], w: [0.4, 3.0, 0.2], q: [0.9, 0.1, -0.3, 0.2]}]}\n"
                               "integrator: {type: newmark, dt: 2.0e-3}\n"
                               "run: {steps: 1000}\n";

static void WorldL(DemBodyStore *bs, PetscReal L[3], PetscReal Lb[3], PetscReal wb[3])
{
  DemQuatRotateInv(bs->q, bs->w, wb);
  for (int k = 0; k < 3; k++) Lb[k] = bs->I[k] * wb[k];
  DemQuatRotate(bs->q, Lb, L);
}

/* Euler's equations in the body frame: I dw/dt = (I w) x w */
static void EulerRHS(const PetscReal I[3], const PetscReal w[3], PetscReal d[3])
{
  d[0] = (I[1] - I[2]) * w[1] * w[2] / I[0];
  d[1] = (I[2] - I[0]) * w[2] * w[0] / I[1];
  d[2] = (I[0] - I[1]) * w[0] * w[1] / I[2];
}

static void RK4(const PetscReal I[3], PetscReal w[3], PetscReal h)
{
  PetscReal k1[3], k2[3], k3[3], k4[3], y[3];
  EulerRHS(I, w, k1);
  for (int k = 0; k < 3; k++) y[k] = w[k] + 0.5 * h * k1[k];
  EulerRHS(I, y, k2);
  for (int k = 0; k < 3; k++) y[k] = w[k] + 0.5 * h * k2[k];
  EulerRHS(I, y, k3);
  for (int k = 0; k < 3; k++) y[k] = w[k] + h * k3[k];
  EulerRHS(I, y, k4);
  for (int k = 0; k < 3; k++) w[k] += h / 6 * (k1[k] + 2 * k2[k] + 2 * k3[k] + k4[k]);
}

/* tight: Newton to round-off (-snes_rtol 1e-12, no absolute tolerance) */
static PetscErrorCode RunFree(PetscReal h, PetscInt nsteps, PetscBool tight, PetscReal out[5], PetscInt *its, PetscInt *nrej)
{
  DemSim        sim;
  DemNode       root;
  DemStepInfo   info;
  DemBodyStore *bs;
  PetscReal     L0[3], Lb[3], wb[3], L[3], Lm, E0, dL = 0, dLb = 0, dE = 0, dw = 0, wref[3], wn, Lb0;
  char          set[64];
  const char   *sets[] = {set, NULL};

  PetscFunctionBegin;
  snprintf(set, sizeof(set), "integrator.dt=%.17g", (double)h);
  if (tight) {
    PetscCall(PetscOptionsSetValue(NULL, "-snes_rtol", "1e-12"));
    PetscCall(PetscOptionsSetValue(NULL, "-snes_atol", "1e-300"));
  }
  PetscCall(DemTestMakeSim(dir, "free", free_yaml, sets, &sim, &root));
  if (tight) {
    PetscCall(PetscOptionsClearValue(NULL, "-snes_rtol"));
    PetscCall(PetscOptionsClearValue(NULL, "-snes_atol"));
  }
  bs = &sim->bodies;
  for (int k = 0; k < 3; k++) { /* principal inertias 1 : 2 : 3 (body frame) */
    bs->I[k] *= (k + 1);
    bs->inv_I[k] = 1.0 / bs->I[k];
  }
  WorldL(bs, L0, Lb, wb);
  Lm  = PetscSqrtReal(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
  Lb0 = Lm;
  E0  = 0.5 * (wb[0] * Lb[0] + wb[1] * Lb[1] + wb[2] * Lb[2]);
  for (int k = 0; k < 3; k++) wref[k] = wb[k];
  wn   = PetscSqrtReal(wb[0] * wb[0] + wb[1] * wb[1] + wb[2] * wb[2]);
  *its = *nrej = 0;
  for (PetscInt n = 0; n < nsteps; n++) {
    PetscReal E, lb;
    PetscCall(Step(sim, &info, nrej));
    *its += info.iterations;
    for (int s = 0; s < 100; s++) RK4(bs->I, wref, h / 100);
    WorldL(bs, L, Lb, wb);
    for (int k = 0; k < 3; k++) dL = PetscMax(dL, PetscAbsReal(L[k] - L0[k]) / Lm);
    lb  = PetscSqrtReal(Lb[0] * Lb[0] + Lb[1] * Lb[1] + Lb[2] * Lb[2]);
    dLb = PetscMax(dLb, PetscAbsReal(lb - Lb0) / Lb0);
    E   = 0.5 * (wb[0] * Lb[0] + wb[1] * Lb[1] + wb[2] * Lb[2]);
    dE  = PetscMax(dE, PetscAbsReal(E - E0) / E0);
    for (int k = 0; k < 3; k++) dw = PetscMax(dw, PetscAbsReal(wb[k] - wref[k]) / wn);
  }
  out[0] = dL, out[1] = dLb, out[2] = dE, out[3] = dw, out[4] = wn * h;
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The pointwise form of 000 eq. (19) at t(i+1) with the kinematics of eq. (22) leaves a
  torque-free body L(i+1) - L(i) = O(h^3) per step (1.08e-6 relative over these 1000 steps
  with that residual, the previous session's measurement); the discrete balance L(i+1) - L(i) =
  h [(1 - gamma) M(i) + gamma M(i+1)] that newmark.c solves makes L a conserved quantity, so
  its drift is the SNES tolerance's, not the time step's.
*/
static PetscErrorCode TestFreeRotation(void)
{
  PetscReal r1[5], r2[5], t1[5], t2[5];
  PetscInt  its1, its2, itt1, itt2, rej1, rej2, rjt1, rjt2;

  PetscFunctionBegin;
  PetscCall(RunFree(2e-3, 1000, PETSC_FALSE, r1, &its1, &rej1));
  PetscCall(RunFree(1e-3, 2000, PETSC_FALSE, r2, &its2, &rej2));
  PetscCall(RunFree(2e-3, 1000, PETSC_TRUE, t1, &itt1, &rjt1));
  PetscCall(RunFree(1e-3, 2000, PETSC_TRUE, t2, &itt2, &rjt2));
  printf("# free rotation, h |w| = %.3g: |dL|/|L| %.3g, |dL_b| %.3g, dE/E %.3g, |w - w_RK4|/|w| %.3g, %.2f Newton iterations per step\n", (double)r1[4], (double)r1[0], (double)r1[1], (double)r1[2], (double)r1[3], its1 / 1000.0);
  printf("# free rotation, h |w| = %.3g: |dL|/|L| %.3g, |dL_b| %.3g, dE/E %.3g, |w - w_RK4|/|w| %.3g, %.2f Newton iterations per step\n", (double)r2[4], (double)r2[0], (double)r2[1], (double)r2[2], (double)r2[3], its2 / 2000.0);
  printf("# free rotation, Newton to -snes_rtol 1e-12: |dL|/|L| %.3g (h |w| = %.3g, %.2f iterations per step), %.3g (h |w| = %.3g, %.2f)\n", (double)t1[0], (double)t1[4], itt1 / 1000.0, (double)t2[0], (double)t2[4], itt2 / 2000.0);
  DEM_CHECK("free rotation: no step rejected", rej1 + rej2 + rjt1 + rjt2 == 0, "%" PetscInt_FMT " rejections", rej1 + rej2 + rjt1 + rjt2);
  DEM_CHECK("free rotation: |dL|/|L| < 1e-10 over 1000 steps, default tolerances (issue 5)", r1[0] < 1e-10 && r2[0] < 1e-10, "%g (h |w| = %g), %g (h |w| = %g)", (double)r1[0], (double)r1[4], (double)r2[0], (double)r2[4]);
  DEM_CHECK("free rotation: L conserved to round-off (< 1e-13) when Newton converges to round-off", t1[0] < 1e-13 && t2[0] < 1e-13, "%g, %g", (double)t1[0], (double)t2[0]);
  DEM_CHECK("free rotation: on the polhode, |L_b| within 0.1 (h |w|)^2", r1[1] < 0.1 * r1[4] * r1[4], "max relative change %g", (double)r1[1]);
  DEM_CHECK("free rotation: on the polhode, energy L_b.I^-1 L_b/2 within 0.1 (h |w|)^2", r1[2] < 0.1 * r1[4] * r1[4], "max relative change %g", (double)r1[2]);
  DEM_CHECK("free rotation: body-frame w follows RK4 of Euler's equations within 0.2 (h |w|)^2 |w|", r1[3] < 0.2 * r1[4] * r1[4], "max deviation %g |w|", (double)r1[3]);
  DEM_CHECK("free rotation: the error in w is second order (ratio h -> h/2 in [3.5, 4.5])", r1[3] / r2[3] > 3.5 && r1[3] / r2[3] < 4.5, "%g -> %g, ratio %g", (double)r1[3], (double)r2[3], (double)(r1[3] / r2[3]));
  DEM_CHECK("free rotation: Newton needs <= 3 iterations per step on average", its1 <= 3000 && itt1 <= 3000, "%" PetscInt_FMT ", %" PetscInt_FMT " (tight) iterations in 1000 steps", its1, itt1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- 3. penetration test ---- */
static const char *pen_yaml = "name: pen\n"
                              "domain: {lo: [-1, -1, -1], hi: [1, 1, 1]}\n"
                              "gravity: [0, 0, 0]\n"
                              "materials:\n"
                              "  g: {density: 1000}\n"
                              "contact:\n"
                              "  - {pair: default, law: hooke, params: {kn: 10.0, gamma_n: 0, gamma_t: 0, mu: 0}}\n"
                              "shapes:\n"
                              "  b: {type: sphere, radius: 0.01}\n"
                              "bodies:\n"
                              "  - {shape: b, material: g, list: [{x: [-0.00999, 0, 0], v: [1.5, 0, 0]}, {x: [0.00999, 0, 0], v: [-1.5, 0, 0]}]}\n"
                              "search: {skin: 0.1}\n"
                              "integrator: {type: newmark, dt: 1.0e-2, dt_max: 1.0e-2}\n"
                              "run: {steps: 10}\n";

static PetscErrorCode TestPenetration(void)
{
  DemSim        sim;
  DemNode       root;
  DemStepInfo   info;
  DemBodyStore *bs;
  PetscReal     x0[6], v0[6], e = 0, d;
  PetscInt      nrej = 0;

  PetscFunctionBegin;
  PetscCall(DemTestMakeSim(dir, "pen", pen_yaml, NULL, &sim, &root));
  bs = &sim->bodies;
  PetscCall(PetscArraycpy(x0, bs->x, 6));
  PetscCall(PetscArraycpy(v0, bs->v, 6));
  PetscCall(DemIntegratorStep(sim->integ, sim, sim->dt, &info));
  for (int k = 0; k < 6; k++) e = PetscMax(e, PetscMax(PetscAbsReal(bs->x[k] - x0[k]), PetscAbsReal(bs->v[k] - v0[k])));
  DEM_CHECK("penetration: a step that carries the spheres through each other is rejected", !info.accepted, "accepted");
  DEM_CHECK("penetration: dt_next = dt / 2", PetscAbsReal(info.dt_next - 5e-3) < 1e-17, "dt_next %g", (double)info.dt_next);
  DEM_CHECK("penetration: the state and the time are left as they were", e == 0 && sim->time == 0, "max change %g, time %g", (double)e, (double)sim->time);
  if (!info.accepted) {
    sim->dt = info.dt_next;
    sim->rejected++;
  }
  PetscCall(Step(sim, &info, &nrej));
  d = bs->x[3] - bs->x[0];
  DEM_CHECK("penetration: the retried step is accepted with the spheres on their sides (x_b - x_a > 0)", info.accepted && d > 0, "accepted %d, x_b - x_a = %g after %" PetscInt_FMT " more cuts", (int)info.accepted, (double)d, nrej);
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---- 4. sliding to rolling, with and without the active set ---- */
static const char *slide_yaml = "name: slide\n"
                                "domain: {lo: [-1, -1, 0], hi: [1, 1, 1]}\n"
                                "gravity: [0, 0, -9.81]\n"
                                "materials:\n"
                                "  g: {density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.22, restitution: 0.3, friction: 0.3}\n"
                                "contact:\n"
                                "  - {pair: default, law: hertz_mindlin}\n"
                                "shapes:\n"
                                "  b: {type: sphere, radius: 0.01}\n"
                                "bodies:\n"
                                "  - {shape: b, material: g, list: [{x: [-0.5, 0, 0.00999], v: [1.0, 0, 0]}]}\n"
                                "walls:\n"
                                "  - {type: plane, point: [0, 0, 0], normal: [0, 0, 1], material: g}\n"
                                "integrator: {type: newmark, dt: 2.0e-4, beta: 0.3025, gamma: 0.6}\n"
                                "run: {end_time: 0.2}\n";

static PetscErrorCode SlideRun(PetscBool active, PetscReal out[4], PetscInt *its)
{
  const char *const sets[] = {active ? "integrator.active_set=true" : "integrator.active_set=false", NULL};
  const PetscReal   mu = 0.3, g = 9.81, v0 = 1.0, r = 0.01, th = 0.5 * 2 * v0 / (7 * mu * g);
  DemSim            sim;
  DemNode           root;
  DemStepInfo       info;
  PetscBool         half = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(DemTestMakeSim(dir, active ? "slide_as" : "slide", slide_yaml, sets, &sim, &root));
  *its = 0;
  while (sim->time < 0.2 - 1e-12) {
    PetscCall(Step(sim, &info, NULL));
    *its += info.iterations;
    if (!half && sim->time >= th) { /* sliding: v = v0 - mu g t, w r = 5/2 mu g t (at this step's time) */
      half   = PETSC_TRUE;
      out[0] = PetscAbsReal(sim->bodies.v[0] - (v0 - mu * g * sim->time)) / v0;
      out[1] = PetscAbsReal(sim->bodies.w[1] * r - 2.5 * mu * g * sim->time) / v0;
    }
  }
  out[2] = PetscAbsReal(sim->bodies.v[0] - 5.0 / 7.0 * v0) / (5.0 / 7.0 * v0); /* rolling, t = 0.2 s > t* = 0.097 s */
  out[3] = sim->bodies.v[0];
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestSlide(void)
{
  PetscReal a[4], b[4];
  PetscInt  ia, ib;

  PetscFunctionBegin;
  PetscCall(SlideRun(PETSC_FALSE, a, &ia));
  PetscCall(SlideRun(PETSC_TRUE, b, &ib));
  printf("# slide: sliding v error %.3g / %.3g, w r error %.3g / %.3g, rolling v error %.3g / %.3g (without / with active set), %" PetscInt_FMT " / %" PetscInt_FMT " Newton iterations\n", (double)a[0], (double)b[0], (double)a[1], (double)b[1], (double)a[2], (double)b[2], ia, ib);
  DEM_CHECK("slide: sliding phase v = v0 - mu g t within 1 % of v0, without / with the active set", a[0] < 1e-2 && b[0] < 1e-2, "%g, %g", (double)a[0], (double)b[0]);
  DEM_CHECK("slide: sliding phase w r = 5/2 mu g t within 1 % of v0, without / with the active set", a[1] < 1e-2 && b[1] < 1e-2, "%g, %g", (double)a[1], (double)b[1]);
  DEM_CHECK("slide: rolling v = 5/7 v0 within 1 %, without / with the active set", a[2] < 1e-2 && b[2] < 1e-2, "%g, %g", (double)a[2], (double)b[2]);
  DEM_CHECK("slide: the active set changes the solve, not the result (final v within 1e-6)", PetscAbsReal(a[3] - b[3]) < 1e-6, "%.12g vs %.12g", (double)a[3], (double)b[3]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  snprintf(dir, sizeof(dir), "/tmp/test_newmark.XXXXXX");
  if (!mkdtemp(dir)) {
    printf("not ok - mkdtemp\n");
    return 1;
  }
  PetscCall(TestFreeFall());
  PetscCall(TestFreeRotation());
  PetscCall(TestPenetration());
  PetscCall(TestSlide());
  {
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd)) printf("# could not remove %s\n", dir);
  }
  PetscCall(PetscFinalize());
  return dem_test_failed;
}

/*
  symplectic_euler.c - example plugin: integrator `symplectic_euler` (semi-implicit Euler,
  kick then drift), first order, symplectic. Built by `make` into
  build/plugins/symplectic_euler.so; load it with `plugins: [...]` or `--plugin`.

    v(n+1) = v(n) + dt f(x(n), v(n)) / m        w(n+1) = w(n) + dt I_world^-1 t(n)
    x(n+1) = x(n) + dt v(n+1)                   q(n+1) = exp(dt w(n+1)) q(n)
    forces at x(n+1), v(n+1): used by the next step

  One force evaluation per step, like velocity Verlet, but first order: on a linear spring of
  frequency omega it conserves exactly the shadow energy v^2 + omega^2 x^2 - dt omega^2 x v
  (per unit mass), so the energy oscillates within a relative band of about omega dt / 2
  during a contact and does not drift (no secular growth on a conservative problem), while
  Verlet's band is (omega dt)^2 / 4. It is stable for omega dt < 2.
  The angular update uses I_world^-1 = R diag(1/I) R^T and no gyroscopic term (exact for
  spheres), as verlet does. Dissipated energy: trapezoidal rule over the dissipation power at
  successive force evaluations (the host's sim_record_step).

  Keys: type, dt, dt_fraction, petsc_options (none of its own).
*/
#include <demimpl.h>
#include <dem_plugin.h>

static const DemHostAPI *api; /* the host table, kept by dem_plugin_init */

static PetscErrorCode SymplecticEulerSetFromConfig(DemIntegrator ig, DemNode cfg)
{
  PetscFunctionBegin;
  PetscCall(api->integrator_allow_keys(cfg, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v += h f / m, w += h I_world^-1 t for every owned body (fixed ones have inv_m = 0) */
static void Kick(DemBodyStore *bs, PetscReal h)
{
  for (PetscInt i = 0; i < bs->n; i++) {
    const PetscReal  hm = h * bs->inv_m[i], *f = bs->f + 3 * i, *t = bs->t + 3 * i, *iI = bs->inv_I + 3 * i;
    PetscReal       *v = bs->v + 3 * i, *w = bs->w + 3 * i;
    v[0] += hm * f[0], v[1] += hm * f[1], v[2] += hm * f[2];
    if (iI[0] == iI[1] && iI[1] == iI[2]) w[0] += h * iI[0] * t[0], w[1] += h * iI[0] * t[1], w[2] += h * iI[0] * t[2];
    else {
      PetscReal tb[3], dw[3];
      api->quat_rotate_inv(bs->q + 4 * i, t, tb);
      tb[0] *= h * iI[0], tb[1] *= h * iI[1], tb[2] *= h * iI[2];
      api->quat_rotate(bs->q + 4 * i, tb, dw);
      w[0] += dw[0], w[1] += dw[1], w[2] += dw[2];
    }
  }
}

static PetscErrorCode SymplecticEulerStep(DemIntegrator ig, DemSim sim, PetscReal dt, DemStepInfo *info)
{
  DemBodyStore *bs;
  DemForceOut   fo;
  DemState      st;

  PetscFunctionBegin;
  PetscCall(api->sim_get_bodies(sim, &bs));
  Kick(bs, dt); /* bs->f, bs->t hold the forces at the current state (set up, or last step) */
  PetscCall(api->sim_constrain(sim, bs->v, bs->w));
  for (PetscInt i = 0; i < bs->n; i++) {
    PetscReal *x = bs->x + 3 * i, *v = bs->v + 3 * i, *w = bs->w + 3 * i;
    if (bs->inv_m[i] == 0 && !(bs->flags[i] & DEM_PRESCRIBED)) continue;
    x[0] += dt * v[0], x[1] += dt * v[1], x[2] += dt * v[2];
    if (w[0] != 0 || w[1] != 0 || w[2] != 0) {
      PetscReal th[3] = {dt * w[0], dt * w[1], dt * w[2]}, dq[4], qn[4];
      api->quat_from_rotation_vector(th, dq);
      api->quat_mul(dq, bs->q + 4 * i, qn);
      api->quat_normalize(qn);
      for (int j = 0; j < 4; j++) bs->q[4 * i + j] = qn[j];
    }
  }
  PetscCall(api->sim_advance_time(sim, dt));
  PetscCall(api->sim_update_neighbours(sim, NULL, PETSC_FALSE));
  st = (DemState){bs->x, bs->v, bs->w, bs->q};
  PetscCall(PetscMemzero(&fo, sizeof(fo)));
  fo.f = bs->f;
  fo.t = bs->t;
  PetscCall(api->forces_compute(sim, &st, PETSC_FALSE, PETSC_TRUE, &fo));
  PetscCall(api->sim_record_step(sim, dt, &fo));
  info->iterations = 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SymplecticEulerCreate(DemIntegrator ig)
{
  PetscFunctionBegin;
  ig->ops->setfromconfig = SymplecticEulerSetFromConfig;
  ig->ops->step          = SymplecticEulerStep;
  PetscFunctionReturn(PETSC_SUCCESS);
}

DEM_PLUGIN_DEFINE("symplectic_euler", "1.0", "integrator symplectic_euler: semi-implicit (kick-drift) Euler, first order");

PetscErrorCode dem_plugin_init(const DemHostAPI *host, DemPlugin self)
{
  PetscFunctionBegin;
  PetscCheck(host->abi_major == DEM_PLUGIN_ABI_MAJOR, PETSC_COMM_SELF, PETSC_ERR_LIB, "symplectic_euler: host plugin ABI %u, built for %d", (unsigned)host->abi_major, DEM_PLUGIN_ABI_MAJOR);
  api = host;
  PetscCall(api->register_integrator(self, "symplectic_euler", SymplecticEulerCreate));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  hertz_mindlin.c - Hertz normal contact with nonlinear damping and a Mindlin tangential spring
  with Coulomb stick/slip friction ("hertz_mindlin").

  Model (001_558b02b5fc003581.txt), per contact with overlap delta = -gap > 0, unit normal n
  (b to a), relative velocity v of a w.r.t. b at the contact point, vn = v . n (< 0
  approaching), effective mass m* and effective radius r* = reff of the batch (eq. (20), (23)):
    E*  = E_a E_b / (E_b (1 - nu_a^2) + E_a (1 - nu_b^2))                         eq. (20)
    fn  = 4/3 E* sqrt(r*) delta^(3/2) - d* vn                                      eq. (19)
    d*  = 2 xi sqrt(2 sqrt(r*) E* m*) delta^(1/4), xi = |ln e| / sqrt(pi^2 + ln^2 e) eq. (22)
    kt  = 8 G* sqrt(r*) delta^(1/2)                                                eq. (37)
    G*  = G_a G_b / (G_a + G_b), G_i = E_i / (2 (1 + nu_i))           eq. (38) as printed
    Ft  = -kt s - ct vt, |Ft| <= mu fn, spring history and return mapping         eq. (29)-(36)
          (friction.h: static limit mu_s while sticking, dynamic mu_d while sliding)
    energy = 8/15 E* sqrt(r*) delta^(5/2) + 0.5 kt |s|^2
  The paper damps the normal direction only. The tangential dashpot ct = 2 xi sqrt(m* kt) is
  our choice: the same damping ratio xi applied to the tangential spring, which keeps the
  stuck tangential oscillation from ringing. d*'s relation to e is the constant-coefficient
  estimate the paper quotes; the actual restitution of the Hertz law differs somewhat.
  The normal force is not clamped at zero (as in hooke.c).

  Keys (`params:` of the contact entry; all optional, each overriding the materials):
    youngs_modulus  E [Pa] of both bodies, > 0
    poisson_ratio   nu of both bodies, in (-1, 0.5) (the materials' range)
    restitution     e in (0, 1]
    friction        sets mu_s and mu_d, >= 0; or
    mu_s, mu_d      static and dynamic friction, 0 <= mu_d <= mu_s
    tangential      history | rolling_spring [history]: the tangential spring of friction.h
                    above, or the spring of 001 eq. (25)-(36) whose elongation is the sliding
                    (centre displacement minus rolling mapped with Q_Delta) with the return
                    mapping of eq. (32)-(36) and no tangential dashpot (rolling_spring.h);
                    kt from eq. (37)-(38) in both, the friction moment r_C x Ft (eq. (39)) is
                    the lever-arm torque of forces.c
  Mixing: E and nu enter per material through eq. (20) and (38); restitution and friction are
  the arithmetic mean of the two materials' values.

  Critical time: Hertz's collision duration, eq. (50),
  tc = 2.87 (m*^2 / (r* E*^2 v_rel))^(1/5), v_rel the normal approach speed (floored at
  PETSC_SMALL m/s).
*/
#include "friction.h"
#include "dem_isa.h"
#include "rolling_spring.h"

#define DEMCONTACTHERTZMINDLIN "hertz_mindlin"

typedef struct {
  PetscReal Estar, Gstar, xi, mu_s, mu_d;
  PetscInt  rolling; /* tangential: 0 history (friction.h), 1 rolling_spring (rolling_spring.h) */
} DemContactLaw_HertzMindlin;

static PetscErrorCode DemContactLawSetFromConfig_HertzMindlin(DemContactLaw law, DemNode cfg, const DemMaterialPair *mp)
{
  DemContactLaw_HertzMindlin *hm     = (DemContactLaw_HertzMindlin *)law->data;
  const char *const           keys[] = {"youngs_modulus", "poisson_ratio", "restitution", "friction", "mu_s", "mu_d", "tangential", NULL};
  PetscReal                   E[2], nu[2], G[2], Ep = 0, nup = 0, e;
  PetscBool                   hasE, hasnu, set;

  PetscFunctionBegin;
  PetscCheck(mp && mp->a && mp->b, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "law hertz_mindlin: no material pair given");
  if (cfg) PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscCall(DemLawParamReal_Private(cfg, DEMCONTACTHERTZMINDLIN, "youngs_modulus", 0, PETSC_TRUE, PETSC_MAX_REAL, PETSC_FALSE, &Ep, &hasE));
  PetscCall(DemLawParamReal_Private(cfg, DEMCONTACTHERTZMINDLIN, "poisson_ratio", -1, PETSC_TRUE, 0.5, PETSC_TRUE, &nup, &hasnu));
  E[0]  = hasE ? Ep : mp->a->E;
  E[1]  = hasE ? Ep : mp->b->E;
  nu[0] = hasnu ? nup : mp->a->nu;
  nu[1] = hasnu ? nup : mp->b->nu;
  /* cfg may be NULL: the message then carries no location */
  for (PetscInt k = 0; k < 2; k++) {
    const DemMaterial *mat = k ? mp->b : mp->a;
    DemNodeCheck(cfg, E[k] > 0 && E[k] < PETSC_MAX_REAL, "law hertz_mindlin: youngs_modulus of material '%s' must be > 0 (got %g); set it on the material or in params", mat->name, (double)E[k]);
    DemNodeCheck(cfg, nu[k] > -1 && nu[k] < 0.5, "law hertz_mindlin: poisson_ratio of material '%s' must be in (-1, 0.5) (got %g); set it on the material or in params", mat->name, (double)nu[k]);
    G[k] = E[k] / (2 * (1 + nu[k]));
  }
  hm->Estar = E[0] * E[1] / (E[1] * (1 - nu[0] * nu[0]) + E[0] * (1 - nu[1] * nu[1]));
  hm->Gstar = G[0] * G[1] / (G[0] + G[1]);
  PetscCall(DemLawRestitution_Private(cfg, DEMCONTACTHERTZMINDLIN, mp, &e, &set));
  hm->xi = DemDampingRatio_Private(e);
  PetscCall(DemLawFriction_Private(cfg, DEMCONTACTHERTZMINDLIN, "friction", mp, &hm->mu_s, &hm->mu_d));
  if (cfg) {
    const char *const tang[] = {"history", "rolling_spring", NULL};
    PetscCall(DemNodeGetChoice(cfg, "tangential", tang, PETSC_FALSE, &hm->rolling));
    if (hm->rolling) law->histsize = DEM_ROLLING_SPRING_HISTSIZE;
  }
  law->mp = *mp;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the loop over a batch, compiled twice (dem_isa.h): for the baseline and for AVX2 with FMA
   (its products fused: last-bit differences; MMDEM_ISA=generic keeps the baseline) */
DEM_HOT_INLINE void DemHertzMindlinBatch_Inline(DemContactLaw law, const DemContactBatch *batch, PetscReal dt, PetscBool commit, DemContactForces *out)
{
  const DemContactLaw_HertzMindlin *hm = (const DemContactLaw_HertzMindlin *)law->data;
  const PetscReal                   Es = hm->Estar, Gs = hm->Gstar, xi = hm->xi, mu_s = hm->mu_s, mu_d = hm->mu_d;

  for (PetscInt i = 0; i < batch->n; i++) {
    const PetscReal *n   = batch->nrm + 3 * i, *v = batch->vrel + 3 * i;
    const PetscReal  gap = batch->gap[i], m = batch->meff[i];
    PetscReal       *h   = batch->hist[i] >= 0 ? batch->history + batch->hist[i] * batch->histsize : NULL;
    PetscReal        delta, sR, sd, kn_tan, cn, kt, ct, vn, fn, et, dt_, fdt[3], es;

    if (!(gap < 0)) {
      out->fn[i] = out->dfn_dgap[i] = out->cn[i] = out->kt[i] = out->energy[i] = out->dissip[i] = 0;
      out->ft[3 * i] = out->ft[3 * i + 1] = out->ft[3 * i + 2] = 0;
      out->slip[i]                                             = 0;
      if (out->fdamp) out->fdamp[3 * i] = out->fdamp[3 * i + 1] = out->fdamp[3 * i + 2] = 0;
      if (out->eslip) out->eslip[i] = 0;
      if (h && commit) DemFrictionReset_Private(h);
      continue;
    }
    delta  = -gap;
    sR     = PetscSqrtReal(batch->reff[i]);
    sd     = PetscSqrtReal(delta);
    kn_tan = 2 * Es * sR * sd; /* d f_elastic / d delta */
    /* eq. (22): 2 xi sqrt(2 sqrt(r*) E* m*) delta^(1/4) = 2 xi sqrt(m* kn_tan) */
    cn = 2 * xi * PetscSqrtReal(m * kn_tan);
    kt = 8 * Gs * sR * sd;
    ct = 2 * xi * PetscSqrtReal(m * kt);
    vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
    fn = 4.0 / 3.0 * Es * sR * delta * sd - cn * vn;
    if (hm->rolling) { /* 001 eq. (25)-(36): the sliding from the increments of the two bodies */
      const DemSim sim = law->sim;
      PetscReal    ds[3];
      if (sim && sim->inc_x) {
        const PetscInt a = batch->a[i], b = batch->b[i];
        DemRollingSlide_Private(n, batch->ra + 3 * i, batch->rb + 3 * i, sim->inc_x + 3 * a, sim->inc_alpha + 3 * a, sim->inc_x + 3 * b, sim->inc_alpha + 3 * b, ds);
      } else {
        const PetscReal vn_ = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
        for (int k = 0; k < 3; k++) ds[k] = (v[k] - vn_ * n[k]) * dt;
      }
      ct = 0;
      DemRollingSpring_Private(n, ds, dt, kt, fn, mu_s, mu_d, h, commit, out->ft + 3 * i, &et, &dt_, &out->slip[i], &es);
      fdt[0] = fdt[1] = fdt[2] = 0;
    } else { /* with an implicit solve's stick/slip active set, if one is set (friction.h) */
      signed char *mode = law->sim && law->sim->slip_mode && batch->hist[i] >= 0 && batch->hist[i] < law->sim->nslip_mode ? law->sim->slip_mode + batch->hist[i] : NULL;
      DemFrictionSpringMode_Private(n, v, dt, kt, ct, fn, mu_s, mu_d, h, commit, mode, out->ft + 3 * i, &et, &dt_, &out->slip[i], fdt, &es);
    }
    out->fn[i]       = fn;
    out->dfn_dgap[i] = -kn_tan;
    out->cn[i]       = cn;
    out->kt[i]       = kt;
    out->energy[i]   = 8.0 / 15.0 * Es * sR * delta * delta * sd + et;
    out->dissip[i]   = cn * vn * vn + dt_;
    if (out->fdamp) /* normal and tangential dashpots */
      for (int j = 0; j < 3; j++) out->fdamp[3 * i + j] = -cn * vn * n[j] + fdt[j];
    if (out->eslip) out->eslip[i] = es;
  }
}

static void DemHertzMindlinBatch_Generic(DemContactLaw law, const DemContactBatch *batch, PetscReal dt, PetscBool commit, DemContactForces *out)
{
  DemHertzMindlinBatch_Inline(law, batch, dt, commit, out);
}
#if DEM_HAVE_ISA_V3
DEM_ISA_V3 static void DemHertzMindlinBatch_V3(DemContactLaw law, const DemContactBatch *batch, PetscReal dt, PetscBool commit, DemContactForces *out)
{
  DemHertzMindlinBatch_Inline(law, batch, dt, commit, out);
}
#endif

static PetscErrorCode DemContactLawCompute_HertzMindlin(DemContactLaw law, const DemContactBatch *batch, PetscReal dt, PetscBool commit, DemContactForces *out)
{
  PetscFunctionBegin;
#if DEM_HAVE_ISA_V3
  if (DemIsaV3()) {
    DemHertzMindlinBatch_V3(law, batch, dt, commit, out);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  DemHertzMindlinBatch_Generic(law, batch, dt, commit, out);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawCriticalDt_HertzMindlin(DemContactLaw law, PetscReal m_eff, PetscReal r_eff, PetscReal v_rel, PetscReal *dt)
{
  const DemContactLaw_HertzMindlin *hm = (const DemContactLaw_HertzMindlin *)law->data;
  const PetscReal                   v  = v_rel > PETSC_SMALL ? v_rel : PETSC_SMALL;

  PetscFunctionBegin;
  PetscCheck(m_eff > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "law hertz_mindlin: effective mass must be > 0, got %g", (double)m_eff);
  PetscCheck(r_eff > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "law hertz_mindlin: effective radius must be > 0, got %g", (double)r_eff);
  *dt = 2.87 * PetscPowReal(m_eff * m_eff / (r_eff * hm->Estar * hm->Estar * v), 0.2);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawDestroy_HertzMindlin(DemContactLaw law)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(law->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemContactLawCreate_HertzMindlin - constructor of the "hertz_mindlin" law: fills the ops,
  allocates the parameters (set by setfromconfig), 4 history reals per contact (friction.h;
  5 with tangential: rolling_spring, rolling_spring.h), activation 0.
*/
PetscErrorCode DemContactLawCreate_HertzMindlin(DemContactLaw law)
{
  DemContactLaw_HertzMindlin *hm;

  PetscFunctionBegin;
  PetscCall(PetscNew(&hm));
  law->data               = hm;
  law->ops->setfromconfig = DemContactLawSetFromConfig_HertzMindlin;
  law->ops->compute       = DemContactLawCompute_HertzMindlin;
  law->ops->criticaldt    = DemContactLawCriticalDt_HertzMindlin;
  law->ops->destroy       = DemContactLawDestroy_HertzMindlin;
  law->histsize           = DEM_FRICTION_HISTSIZE;
  law->activation         = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

DEM_STYLE(contact, "hertz_mindlin", DemContactLawCreate_HertzMindlin)

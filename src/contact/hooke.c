/*
  hooke.c - linear spring-dashpot contact with a tangential history spring and Coulomb
  stick/slip friction ("hooke"; the model of LAMMPS gran/hooke/history).

  Model (003_9f0cdbfccae61a56.txt eq. (20)-(25)), per contact with overlap delta = -gap > 0,
  unit normal n (b to a), relative velocity v of a w.r.t. b at the contact point,
  vn = v . n (< 0 approaching), effective mass m:
    normal      fn = kn delta - m gamma_n vn           (eq. (20); cn = m gamma_n)
    tangential  Ft = -kt s - m gamma_t vt, |Ft| <= mu fn  (eq. (21), (23); friction.h)
    energy      0.5 kn delta^2 + 0.5 kt |s|^2          (eq. (27))
  The normal force is not clamped at zero when the dashpot pulls at the end of a collision:
  the analytic damped-oscillator solution of 003 eq. (32)-(34) and the restitution formula
  below assume the purely linear law.

  Keys (`params:` of the contact entry):
    kn       normal stiffness [N/m], > 0, required
    kt       tangential stiffness [N/m], > 0 [2/7 kn]
    gamma_n  normal damping [1/s], >= 0; dashpot force -m gamma_n vn (LAMMPS convention)
    gamma_t  tangential damping [1/s], >= 0 [gamma_n / 2, per contact when gamma_n is derived]
    restitution  e in (0, 1], instead of gamma_n: gamma_n = 2 zeta sqrt(kn / m) for each
             contact's effective mass m, zeta = -ln e / sqrt(pi^2 + ln^2 e) (e = 1: zeta = 0),
             so that a head-on collision of the linear law rebounds with exactly e
    mu       friction coefficient (sets mu_s and mu_d), >= 0; or
    mu_s, mu_d  static and dynamic friction, 0 <= mu_d <= mu_s
  Mixing rule: restitution (when neither gamma_n nor restitution is given) and friction
  (when not given) are the arithmetic mean of the two materials' values.

  Critical time: the collision duration of the damped oscillator,
  tc = pi / sqrt(kn/m - (gamma_n/2)^2), with gamma_n derived for that m when it comes from
  restitution; an overdamped pair (no rebound) reports the undamped pi sqrt(m/kn).
*/
#include "hooke.h"

#define DEMCONTACTHOOKE "hooke"
#define DEMCONTACTHERTZ "hertz"


static PetscErrorCode DemContactLawSetFromConfig_Hooke(DemContactLaw law, DemNode cfg, const DemMaterialPair *mp)
{
  DemContactLaw_Hooke *hk     = (DemContactLaw_Hooke *)law->data;
  const char *const    keys[] = {"kn", "kt", "gamma_n", "gamma_t", "restitution", "mu", "mu_s", "mu_d", NULL};
  const char          *lname  = hk->hertz ? DEMCONTACTHERTZ : DEMCONTACTHOOKE;
  PetscReal            e      = 1;
  PetscBool            set, has_gn, has_e;

  PetscFunctionBegin;
  if (!cfg) return DemNodeError(NULL, "kn is required for law %s: add params: {kn: ...} (normal stiffness, %s) to the contact entry", lname, hk->hertz ? "N/m^2" : "N/m");
  PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscCall(DemLawParamReal_Private(cfg, lname, "kn", 0, PETSC_TRUE, PETSC_MAX_REAL, PETSC_FALSE, &hk->kn, &set));
  DemNodeCheck(cfg, set, "kn is required for law %s (normal stiffness, %s, > 0)", lname, hk->hertz ? "N/m^2" : "N/m");
  hk->kt = 2.0 / 7.0 * hk->kn;
  PetscCall(DemLawParamReal_Private(cfg, lname, "kt", 0, PETSC_TRUE, PETSC_MAX_REAL, PETSC_FALSE, &hk->kt, &set));
  hk->gamma_n = 0;
  PetscCall(DemLawParamReal_Private(cfg, lname, "gamma_n", 0, PETSC_FALSE, PETSC_MAX_REAL, PETSC_FALSE, &hk->gamma_n, &has_gn));
  hk->gamma_t = 0;
  PetscCall(DemLawParamReal_Private(cfg, lname, "gamma_t", 0, PETSC_FALSE, PETSC_MAX_REAL, PETSC_FALSE, &hk->gamma_t, &hk->has_gamma_t));
  if (hk->hertz) { /* the linear law's restitution formula does not hold for the hertz form */
    DemNode rn = NULL;
    PetscCall(DemNodeGet(cfg, "restitution", &rn));
    DemNodeCheck(rn, !rn, "law hertz: restitution is not accepted (the damped Hertz contact has no closed-form restitution); give gamma_n [1/(s m)] (LAMMPS gran/hertz/history's gamma_n), 0 for none");
    DemNodeCheck(cfg, has_gn, "gamma_n is required for law hertz (normal damping [1/(s m)], >= 0; LAMMPS gran/hertz/history's gamma_n)");
  }
  if (has_gn) {
    PetscCall(DemLawParamReal_Private(cfg, lname, "restitution", 0, PETSC_TRUE, 1, PETSC_FALSE, &e, &has_e));
    DemNodeCheck(cfg, !has_e, "law %s: give either gamma_n or restitution, not both", lname);
    hk->from_e = PETSC_FALSE;
    hk->zeta   = 0;
  } else {
    PetscCall(DemLawRestitution_Private(cfg, lname, mp, &e, &has_e));
    hk->from_e = PETSC_TRUE;
    hk->zeta   = DemDampingRatio_Private(e);
  }
  PetscCall(DemLawFriction_Private(cfg, lname, "mu", mp, &hk->mu_s, &hk->mu_d));
  law->mp = *mp;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawCompute_Hooke(DemContactLaw law, const DemContactBatch *batch, PetscReal dt, PetscBool commit, DemContactForces *out)
{
  const DemContactLaw_Hooke *hk = (const DemContactLaw_Hooke *)law->data;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < batch->n; i++) {
    PetscReal *h = batch->hist[i] >= 0 ? batch->history + batch->hist[i] * batch->histsize : NULL;
    PetscReal  fdamp[3], es;
    DemHookeContact_Private(hk, batch->nrm + 3 * i, batch->vrel + 3 * i, batch->gap[i], batch->meff[i], hk->hertz ? batch->reff[i] : 0, hk->hertz, h, dt, commit, &out->fn[i], out->ft + 3 * i, &out->dfn_dgap[i], &out->cn[i], &out->kt[i], &out->energy[i], &out->dissip[i], &out->slip[i], fdamp, &es);
    if (out->fdamp) out->fdamp[3 * i] = fdamp[0], out->fdamp[3 * i + 1] = fdamp[1], out->fdamp[3 * i + 2] = fdamp[2];
    if (out->eslip) out->eslip[i] = es;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawCriticalDt_Hooke(DemContactLaw law, PetscReal m_eff, PetscReal r_eff, PetscReal v_rel, PetscReal *dt)
{
  const DemContactLaw_Hooke *hk = (const DemContactLaw_Hooke *)law->data;
  PetscReal                  w2, gn, d;

  PetscFunctionBegin;
  PetscCheck(m_eff > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "law hooke: effective mass must be > 0, got %g", (double)m_eff);
  if (hk->hertz) { /* the undamped Hertz collision of F = K delta^(3/2), K = kn sqrt(r_eff), at
                      approach speed v_rel (floored as hertz_mindlin.c): tc = 2 I delta_max / v,
                      delta_max = (5 m v^2 / (4 K))^(2/5), I = int_0^1 (1 - x^(5/2))^(-1/2) dx
                      = sqrt(pi) Gamma(7/5) / Gamma(9/10) = 1.4716 */
    const PetscReal v = v_rel > PETSC_SMALL ? v_rel : PETSC_SMALL, K = hk->kn * PetscSqrtReal(r_eff > 0 ? r_eff : PETSC_SMALL);
    *dt = 2 * 1.47162 * PetscPowReal(1.25 * m_eff * v * v / K, 0.4) / v;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  w2  = hk->kn / m_eff;
  gn  = hk->from_e ? 2 * hk->zeta * PetscSqrtReal(w2) : hk->gamma_n;
  d   = w2 - 0.25 * gn * gn;
  *dt = d > 0 ? PETSC_PI / PetscSqrtReal(d) : PETSC_PI / PetscSqrtReal(w2);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemContactLawDestroy_Hooke(DemContactLaw law)
{
  DemContactLaw_Hooke *hk = (DemContactLaw_Hooke *)law->data;

  PetscFunctionBegin;
  if (hk->nblk) PetscCall(PetscInfo(NULL, "law %s, fused kernel: %" PetscInt_FMT " contact blocks, %" PetscInt_FMT " with uniform masses and radii\n", hk->hertz ? "hertz" : "hooke", hk->nblk, hk->nuni));
  PetscCall(PetscFree(hk->touch)); /* fused kernel scratch */
  PetscCall(PetscFree(hk->was));
  PetscCall(PetscFree(law->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemContactLawCreate_Hooke - constructor of the "hooke" law: fills the ops, allocates the
  parameters (set by setfromconfig), 4 history reals per contact (friction.h), activation 0.
*/
PetscErrorCode DemContactLawCreate_Hooke(DemContactLaw law)
{
  DemContactLaw_Hooke *hk;

  PetscFunctionBegin;
  PetscCall(PetscNew(&hk));
  law->data               = hk;
  law->ops->setfromconfig = DemContactLawSetFromConfig_Hooke;
  law->ops->compute       = DemContactLawCompute_Hooke;
  law->ops->fusedpairs    = DemContactLawFusedPairs_Hooke;
  law->ops->criticaldt    = DemContactLawCriticalDt_Hooke;
  law->ops->destroy       = DemContactLawDestroy_Hooke;
  law->histsize           = DEM_FRICTION_HISTSIZE;
  law->activation         = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

DEM_STYLE(contact, "hooke", DemContactLawCreate_Hooke)

/*
  DemContactLawCreate_Hertz - constructor of the "hertz" law: law hooke's keys and code with
  every spring and dashpot scaled by sqrt(delta r_eff) (hooke.h; LAMMPS gran/hertz/history):
  kn [N/m^2], kt [N/m^2], gamma_n (required) and gamma_t [1/(s m)] in that convention.
*/
PetscErrorCode DemContactLawCreate_Hertz(DemContactLaw law)
{
  PetscFunctionBegin;
  PetscCall(DemContactLawCreate_Hooke(law));
  ((DemContactLaw_Hooke *)law->data)->hertz = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

DEM_STYLE(contact, "hertz", DemContactLawCreate_Hertz)

/*
  hooke.h - the per-contact arithmetic of law `hooke` (hooke.c), shared by its batch compute
  and its fused sphere kernels (hooke_fused.c), so the model is written once.
  Model and keys: see hooke.c (003_9f0cdbfccae61a56.txt eq. (20)-(25), (27)).
*/
#pragma once
#include "friction.h"

typedef struct {
  PetscReal kn, kt, gamma_n, gamma_t, zeta, mu_s, mu_d;
  PetscBool from_e;      /* gamma_n = 2 zeta sqrt(kn/m) per contact */
  PetscBool has_gamma_t; /* else gamma_t = gamma_n / 2 */
  PetscBool hertz;       /* law `hertz`: springs and dashpots scaled by sqrt(delta r_eff) */
  /* the fused kernel's sphere/sphere pairs: those touching at this evaluation (touch), and one
     byte per pair telling whether it touched at the last committed evaluation (was, valid for
     the list, step and history array recorded), so that only the pairs that came apart need
     their history cleared (hooke_fused.c). touch holds a chunk's pairs (DEM_CHUNK) on explicit
     steps, a whole batch's otherwise (touchcap); was one byte per pair of the batch (wascap) */
  PetscInt      *touch, touchcap, wascap;
  unsigned char *was;
  PetscBool      prev_valid;
  PetscInt       prev_step, prev_builds, prev_npair, prev_pair0;
  PetscReal *prev_hist;
  PetscInt   nblk, nuni; /* contact blocks of the fused kernel, and those with uniform masses and radii */
} DemContactLaw_Hooke;

/*
  DemHookeContact_Private - one contact: normal n (b to a), relative velocity v of a w.r.t. b
  at the contact point, signed gap, effective mass m, effective radius reff (read by the hertz
  form only), history slot h (or NULL). Outputs as the columns of DemContactForces. A contact
  with gap >= 0 gives zeros (and forgets its history on commit). `hertz` (a compile-time
  constant in the fused kernels) selects law `hertz`: kn, kt and both dashpots multiplied by
  p = sqrt(delta reff), so fn = kn sqrt(reff) delta^(3/2) - m gamma_n p vn (the LAMMPS
  gran/hertz/history convention), stored normal energy 2/5 kn p delta^2 (the integral of fn's
  spring part), dfn/dgap = -3/2 kn p + 1/2 m gamma_n (p / delta) vn.
*/
DEM_HOT_INLINE void DemHookeContact_Private(const DemContactLaw_Hooke *hk, const PetscReal n[3], const PetscReal v[3], PetscReal gap, PetscReal m, PetscReal reff, const int hertz, PetscReal *h, PetscReal dt, PetscBool commit, PetscReal *fn_, PetscReal ft[3], PetscReal *dfn, PetscReal *cn_, PetscReal *kt_, PetscReal *energy, PetscReal *dissip, int *slip, PetscReal fdamp[3], PetscReal *eslip)
{
  PetscReal delta, gn, gt, cn, ct, vn, fn, et, dtt, fdt[3], es, kn = hk->kn, kt = hk->kt, p = 1;

  if (!(gap < 0)) {
    *fn_ = *dfn = *cn_ = *kt_ = *energy = *dissip = *eslip = 0;
    ft[0] = ft[1] = ft[2] = fdamp[0] = fdamp[1] = fdamp[2] = 0;
    *slip = 0;
    if (h && commit) DemFrictionReset_Private(h);
    return;
  }
  delta = -gap;
  gn    = hk->from_e ? 2 * hk->zeta * PetscSqrtReal(hk->kn / m) : hk->gamma_n;
  gt    = hk->has_gamma_t ? hk->gamma_t : 0.5 * gn;
  if (hertz) {
    p  = PetscSqrtReal(delta * reff);
    kn = kn * p, kt = kt * p, gn = gn * p, gt = gt * p;
  }
  cn    = m * gn;
  ct    = m * gt;
  vn    = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
  fn    = kn * delta - cn * vn;
  DemFrictionSpring_Private(n, v, dt, kt, ct, fn, hk->mu_s, hk->mu_d, h, commit, ft, &et, &dtt, slip, fdt, &es);
  *fn_    = fn;
  *dfn    = hertz ? -1.5 * kn + 0.5 * cn * vn / delta : -kn;
  *cn_    = cn;
  *kt_    = kt;
  *energy = (hertz ? 0.4 : 0.5) * kn * delta * delta + et;
  *dissip = cn * vn * vn + dtt;
  for (int j = 0; j < 3; j++) fdamp[j] = -cn * vn * n[j] + fdt[j]; /* normal and tangential dashpots */
  *eslip = es;
}

/* the fused sphere/sphere and sphere/plane kernel (hooke_fused.c) */
PETSC_EXTERN PetscErrorCode DemContactLawFusedPairs_Hooke(DemContactLaw, const DemPairBatch *, PetscReal dt, PetscBool commit, DemForceOut *, PetscBool *handled);

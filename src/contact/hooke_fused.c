/*
  hooke_fused.c - the fused kernels of law `hooke` for sphere/sphere and sphere/plane candidate
  pairs: narrow phase, law and force assembly in one pass over the pair list, with the pair's
  history beside it (no contact columns in between). Same arithmetic as the generic pipeline
  (sphere.h, plane.c geometry; hooke.h law), so the two give the same forces; the generic
  pipeline remains for every other case and whenever the contact list itself is wanted
  (VTK contact output, implicit integrators). This is the hot loop of explicit runs
  (DESIGN.md: one call per batch; plain C over arrays inside).
*/
#include "hooke.h"
#include "../shapes/sphere.h"

/* accumulates one contact's force F (on a) and its dissipative part D at lever arms la, lb */
static inline void DemFusedAssemble(PetscReal *restrict f, PetscReal *restrict t, PetscReal *restrict fd, PetscReal *restrict td, PetscInt a, PetscInt b, const PetscReal F[3], const PetscReal D[3], const PetscReal la[3], const PetscReal lb[3])
{
  f[3 * a] += F[0], f[3 * a + 1] += F[1], f[3 * a + 2] += F[2];
  f[3 * b] -= F[0], f[3 * b + 1] -= F[1], f[3 * b + 2] -= F[2];
  t[3 * a] += la[1] * F[2] - la[2] * F[1];
  t[3 * a + 1] += la[2] * F[0] - la[0] * F[2];
  t[3 * a + 2] += la[0] * F[1] - la[1] * F[0];
  t[3 * b] -= lb[1] * F[2] - lb[2] * F[1];
  t[3 * b + 1] -= lb[2] * F[0] - lb[0] * F[2];
  t[3 * b + 2] -= lb[0] * F[1] - lb[1] * F[0];
  if (fd) {
    fd[3 * a] += D[0], fd[3 * a + 1] += D[1], fd[3 * a + 2] += D[2];
    fd[3 * b] -= D[0], fd[3 * b + 1] -= D[1], fd[3 * b + 2] -= D[2];
    td[3 * a] += la[1] * D[2] - la[2] * D[1];
    td[3 * a + 1] += la[2] * D[0] - la[0] * D[2];
    td[3 * a + 2] += la[0] * D[1] - la[1] * D[0];
    td[3 * b] -= lb[1] * D[2] - lb[2] * D[1];
    td[3 * b + 1] -= lb[2] * D[0] - lb[0] * D[2];
    td[3 * b + 2] -= lb[0] * D[1] - lb[1] * D[0];
  }
}

/* velocity of a relative to b at the contact point */
static inline void DemFusedVrel(const PetscReal *v, const PetscReal *w, PetscInt a, PetscInt b, const PetscReal la[3], const PetscReal lb[3], PetscReal vr[3])
{
  const PetscReal *wa = w + 3 * a, *wb = w + 3 * b;
  vr[0] = (v[3 * a] + wa[1] * la[2] - wa[2] * la[1]) - (v[3 * b] + wb[1] * lb[2] - wb[2] * lb[1]);
  vr[1] = (v[3 * a + 1] + wa[2] * la[0] - wa[0] * la[2]) - (v[3 * b + 1] + wb[2] * lb[0] - wb[0] * lb[2]);
  vr[2] = (v[3 * a + 2] + wa[0] * la[1] - wa[1] * la[0]) - (v[3 * b + 2] + wb[0] * lb[1] - wb[1] * lb[0]);
}

PetscErrorCode DemContactLawFusedPairs_Hooke(DemContactLaw law, const DemPairBatch *pb, PetscReal dt, PetscBool commit, DemForceOut *out, PetscBool *handled)
{
  const DemContactLaw_Hooke *hk = (const DemContactLaw_Hooke *)law->data;
  DemSim                     sim = pb->sim;
  DemBodyStore              *bs;
  const PetscReal           *x = pb->state->x, *v = pb->state->v, *w = pb->state->w, *q = pb->state->q;
  const PetscReal           *rad, *im;
  PetscReal                 *hist = sim->nl.history, pe = 0, es_sum = 0, dr = 0;
  const PetscInt             hs = sim->histsize;
  PetscInt                   nc = 0;
  /* image index of each pair (13: no shift), so unshifted pairs skip the shift vector */
  const PetscInt            *shiftidx = (pb->shift && pb->n) ? sim->nl.shiftidx + pb->pair[0] : NULL;

  PetscFunctionBegin;
  *handled = PETSC_FALSE;
  if (!hs) hist = NULL;
  /* with one law the history stride is this law's 4 reals (friction.h), zeroed inline */
  if (hs && hs != DEM_FRICTION_HISTSIZE) PetscFunctionReturn(PETSC_SUCCESS);
  if (pb->ka != DEM_KIND_SPHERE || (pb->kb != DEM_KIND_SPHERE && pb->kb != DEM_KIND_PLANE)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemSimGetBodies(sim, &bs));
  rad = bs->radius;
  im  = bs->inv_m;
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt a = pb->a[k], b = pb->b[k];
    PetscReal     *h = hist ? hist + DEM_FRICTION_HISTSIZE * pb->pair[k] : NULL;
    PetscReal      d[3], n[3], la[3], lb[3], gap, vr[3], F[3], D[3], ft[3], fn, dfn, cn, kt, en, dis, es, m, imab;
    int            slip;
    if (pb->kb == DEM_KIND_SPHERE) {
      PetscReal r2, rs = rad[a] + rad[b];
      d[0] = x[3 * a] - x[3 * b];
      d[1] = x[3 * a + 1] - x[3 * b + 1];
      d[2] = x[3 * a + 2] - x[3 * b + 2];
      if (shiftidx && shiftidx[k] != 13) d[0] -= pb->shift[3 * k], d[1] -= pb->shift[3 * k + 1], d[2] -= pb->shift[3 * k + 2];
      r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      if (r2 >= rs * rs) { /* not touching: the pair forgets its history */
        if (h && commit) DemFrictionReset_Private(h);
        continue;
      }
      DemSphereSphereGeom_Private(d, r2, rad[a], rad[b], n, &gap, la, lb);
    } else { /* plane b: world normal, gap = (x_a - x_b).n - r_a, as plane.c */
      PetscReal n0[3], hgt;
      PetscCall(DemPlaneGetNormal(sim->shapes[bs->shape[b]], n0));
      DemQuatRotate(&q[4 * b], n0, n);
      for (int j = 0; j < 3; j++) d[j] = x[3 * a + j] - x[3 * b + j];
      hgt = d[0] * n[0] + d[1] * n[1] + d[2] * n[2];
      gap = hgt - rad[a];
      if (!(gap < 0)) {
        if (h && commit) DemFrictionReset_Private(h);
        continue;
      }
      for (int j = 0; j < 3; j++) {
        la[j] = -(rad[a] + 0.5 * gap) * n[j];
        lb[j] = d[j] + la[j];
      }
    }
    DemFusedVrel(v, w, a, b, la, lb, vr);
    imab = im[a] + im[b];
    m    = imab > 0 ? 1.0 / imab : PETSC_MAX_REAL;
    DemHookeContact_Private(hk, n, vr, gap, m, h, dt, commit, &fn, ft, &dfn, &cn, &kt, &en, &dis, &slip, D, &es);
    F[0] = fn * n[0] + ft[0];
    F[1] = fn * n[1] + ft[1];
    F[2] = fn * n[2] + ft[2];
    DemFusedAssemble(out->f, out->t, out->fd, out->td, a, b, F, D, la, lb);
    pe += en;
    es_sum += es;
    dr += dis;
    nc++;
  }
  out->pe_contact += pe;
  out->eslip += es_sum;
  out->dissip_rate += dr;
  out->ncontacts += nc;
  *handled = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

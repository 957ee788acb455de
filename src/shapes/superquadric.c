/*
  superquadric.c - shape `superquadric`: ellipsoids, cylinders and boxes with rounded edges.

  Model: 002_a4a9ff6a3ba65368.txt (Podlozhnyuk, Pirker, Kloss 2017). In the body frame the
  surface is f = 0 with the shape function of eq. (1), (12)
    f(x, y, z) = (|x/a|^n2 + |y/b|^n2)^(n1/n2) + |z/c|^n1 - 1,
  half-axes a, b, c and blockiness n1, n2 >= 2 (n1 = n2 = 2: ellipsoid; n2 = 2, n1 >> 2: a
  cylinder of axis z; both >> 2: a box). This file holds the shape (configuration, mass
  properties, bounding sphere, tessellation for VTK) and the geometric kernels the colliders of
  superquadric_contact.c use:
    - f, its gradient and Hessian, eq. (14)-(17), with the exponents of integer blockiness
      done by multiplication;
    - the minimum bounding sphere, eq. (8)-(11), evaluated as two nested planar problems
      (first x-y with exponent n2, then that radius against c with exponent n1). This is
      eq. (11) exactly (alpha^(n2-2) = b^2/a^2 makes the two forms agree), and it contains
      the special cases the paper lists: n = 2 in either plane gives the larger half-axis
      (ellipsoid: max(a, b, c); cylinder n2 = 2: alpha = 0 when a > b);
    - the extreme point in a direction, eq. (31)-(33), in the same nested form (Hoelder dual
      exponents, no division by a normal component, so any sign and zero components work);
    - volume and principal inertia in closed form with beta functions (Jaklic, Leonardis,
      Solina, "Segmentation and recovery of superquadrics", 2000, ch. 2), with
      eps1 = 2/n1, eps2 = 2/n2:
        V   = 2 a b c eps1 eps2 B(eps1/2 + 1, eps1) B(eps2/2, eps2/2)
        Ixx = rho/2 a b c eps1 eps2 [b^2 B(3eps2/2, eps2/2) B(eps1/2, 2eps1 + 1)
                                      + 4 c^2 B(eps2/2, eps2/2 + 1) B(3eps1/2, eps1 + 1)]
        Iyy = the same with a for b,  Izz = rho/2 a b c eps1 eps2 (a^2 + b^2) B(3eps2/2, eps2/2) B(eps1/2, 2eps1 + 1);
    - the curvature of the surface (mean, eq. (39); Gaussian, eq. (40)) for the Hertz radius
      R = min(1/K, q R_vol), eq. (38) and the text after it (002: q = 10);
    - the oriented bounding box test (separating axes, 15 axes) of 002 section "Neighbor
      search".
  A body may carry its own radius (a body set's `radius:`): the shape is then scaled by
  s = radius / r_bound, with mass s^3 and inertia s^5 (sim.c).

  Keys (under shapes: NAME:):
    type: superquadric
    half_axes        [a, b, c] in m, each > 0 (required)
    blockiness       [n1, n2], each in [2, 50] (required; 002 recommends <= 8 for contacts
                     between superquadrics, plane contacts are closed form at any value)
    curvature        mean | gaussian | volume: the Hertz radius of each body at the contact
                     (eq. (39), (40), or the volume-equivalent sphere) [mean, as 002 uses]
    curvature_limit  q > 0: R <= q R_vol [10]
    tessellation     m in [2, 64]: the VTK surface has 4m x 2m facets [8]
*/
#include "superquadric.h"
#include "dem_plugin.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
  DemSQGeom     g;
  DemSQStats    st;
  PetscInt      tess;
  /* warm starts of the contact solver (superquadric_contact.c), one slot per pair of the
     neighbour list, checked against the pair's global ids; through a (gid_a, gid_b) map at
     each rebuild of the list */
  PetscInt      cap, nbuilds;
  DemSQWarm    *w;     /* cap records, 64-byte aligned (in wraw): a record's first 64 bytes
                          are one cache line */
  void         *wraw;
  DemHistoryMap map;
  /* the colliders' rotation matrices, one per body and collider call (DemSQFrames_Private) */
  PetscInt      fcap;
  PetscReal    *fR;
  int64_t      *fstamp, fcall;
  /* the colliders' pair prefilter (DemShapeSuperquadricPrefilter_Private): reference poses
     of the bodies (taken at the first call after each rebuild of the neighbour list), each
     body's motion bound since then, and per pair of the list a lower bound on the distance
     of the two bodies minus the margin at the reference poses, with its kind */
  PetscBool     pfoff; /* MMDEM_SQ_PREFILTER=off (environment, read at creation): no prefilter,
                        for tests that compare the two */
  PetscInt      pfbuilds, pfnb, pfcapb, pfcap;
  PetscReal    *pfx, *pfq, *pfM, *pfm;
  int64_t      *pfgid;
  unsigned char *pfk;
  /* the colliders' index scratch (DemShapeSuperquadricScratch_Private) */
  PetscInt      icap;
  PetscInt     *idx;
  /* a restart's distribution on several ranks (DemShapeSuperquadricHold_Private / Place): the
     checkpoint's slot records and gid map by global ids, until the new list is built */
  PetscBool     held;
  DemHistoryMap hslot, hmap;
  /* rank 0 writing a decomposed run's checkpoint: the shape's own state while the gathered
     one stands in for it (DemShapeSuperquadricGathered_Private) */
  void         *saved;
} DemShape_Superquadric;

static PetscErrorCode DemShapeSetFromConfig_Superquadric(DemShape, DemNode);

/* ---------------------------------------------------------------- geometric kernels */

void DemSQGeomFactors_Private(DemSQGeom *g)
{
  const PetscReal h = g->n1 * (g->n1 - 1);
  g->gk[0] = g->n1 * g->ia, g->gk[1] = g->n1 * g->ib, g->gk[2] = g->n1 * g->ic;
  g->hk[0] = h * g->ia * g->ia, g->hk[1] = h * g->ib * g->ib, g->hk[2] = h * g->ic * g->ic;
}

static int DemSQIntExponent(PetscReal e)
{
  if (e >= 0 && e <= 30 && e == PetscFloorReal(e)) return (int)e;
  return -1;
}

PetscErrorCode DemSQGeomSetUp_Private(DemSQGeom *g)
{
  PetscFunctionBegin;
  g->ia   = 1.0 / g->a;
  g->ib   = 1.0 / g->b;
  g->ic   = 1.0 / g->c;
  g->e12  = g->n1 / g->n2 - 2.0;
  g->in1  = 1.0 / g->n1;
  g->k1   = DemSQIntExponent(g->n1 - 2);
  g->k2   = DemSQIntExponent(g->n2 - 2);
  g->same = g->n1 == g->n2 ? PETSC_TRUE : PETSC_FALSE;
  DemSQGeomFactors_Private(g);
  g->rbound = DemSQBoundingRadius_Private(g->a, g->b, g->c, g->n1, g->n2);
  g->irbound = 1.0 / g->rbound;
  DemSQVolumeInertia_Private(g->a, g->b, g->c, g->n1, g->n2, &g->vol, g->Iunit);
  g->rvol = PetscCbrtReal(3.0 * g->vol / (4.0 * PETSC_PI));
  if (!(g->qlimit > 0)) g->qlimit = 10;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* f, gradient and Hessian of the non-separable shape function, eq. (12), (14)-(17) (the separable
   case is inline in superquadric.h) */
PetscReal DemSQEvalGeneral_Private(const DemSQGeom *g, const PetscReal x[3], PetscReal grad[3], PetscReal H[6])
{
  const PetscReal n1 = g->n1, n2 = g->n2;
  const PetscReal u = PetscAbsReal(x[0]) * g->ia, v = PetscAbsReal(x[1]) * g->ib, w = PetscAbsReal(x[2]) * g->ic;

  /* nu = u^n2 + v^n2, floored so that nu^(n1/n2 - 2) stays finite on the z axis (where the
     terms it multiplies vanish) */
  const PetscReal sx = x[0] < 0 ? -1 : 1, sy = x[1] < 0 ? -1 : 1, sz = x[2] < 0 ? -1 : 1;
  const PetscReal pu = DemSQPow(u, g->k2, n2 - 2), pv = DemSQPow(v, g->k2, n2 - 2), pw = DemSQPow(w, g->k1, n1 - 2);
  const PetscReal U1 = pu * u, V1 = pv * v, W1 = pw * w; /* u^(n2-1), v^(n2-1), w^(n1-1) */
  PetscReal       nu = U1 * u + V1 * v, nup, nu1;
  if (nu < 1e-150) nu = 1e-150;
  nup = PetscPowReal(nu, g->e12); /* nu^(n1/n2 - 2) */
  nu1 = nup * nu;                 /* nu^(n1/n2 - 1) */
  grad[0] = n1 * g->ia * U1 * nu1 * sx;
  grad[1] = n1 * g->ib * V1 * nu1 * sy;
  grad[2] = n1 * g->ic * W1 * sz;
  if (H) {
    H[0] = n1 * g->ia * g->ia * ((n2 - 1) * pu * nu1 + (n1 - n2) * U1 * U1 * nup);
    H[1] = n1 * g->ib * g->ib * ((n2 - 1) * pv * nu1 + (n1 - n2) * V1 * V1 * nup);
    H[2] = n1 * (n1 - 1) * g->ic * g->ic * pw;
    H[3] = n1 * (n1 - n2) * g->ia * g->ib * (U1 * sx) * (V1 * sy) * nup;
    H[4] = H[5] = 0;
  }
  return nu1 * nu + W1 * w - 1;
}

/* the largest distance from the centre of |x/a|^n + |y/b|^n = 1 (eq. (11) in the plane) */
static PetscReal DemSQRadius2D(PetscReal a, PetscReal b, PetscReal n)
{
  PetscReal al, x, y;

  if (b > a) {
    PetscReal t = a;
    a = b, b = t;
  }
  if (n <= 2) return a; /* ellipse: the larger half-axis */
  al = PetscPowReal(b / a, 2.0 / (n - 2)); /* <= 1 */
  x  = a / PetscPowReal(1 + PetscPowReal(al, n), 1.0 / n);
  y  = al * b * x / a;
  return PetscSqrtReal(x * x + y * y);
}

PetscReal DemSQBoundingRadius_Private(PetscReal a, PetscReal b, PetscReal c, PetscReal n1, PetscReal n2)
{
  return DemSQRadius2D(DemSQRadius2D(a, b, n2), c, n1);
}

static PetscReal DemBeta(PetscReal x, PetscReal y)
{
  return PetscExpReal(lgamma(x) + lgamma(y) - lgamma(x + y));
}

void DemSQVolumeInertia_Private(PetscReal a, PetscReal b, PetscReal c, PetscReal n1, PetscReal n2, PetscReal *V, PetscReal I[3])
{
  const PetscReal e1 = 2.0 / n1, e2 = 2.0 / n2, k = 0.5 * a * b * c * e1 * e2;
  const PetscReal t1 = DemBeta(1.5 * e2, 0.5 * e2) * DemBeta(0.5 * e1, 2 * e1 + 1);
  const PetscReal t2 = 4 * DemBeta(0.5 * e2, 0.5 * e2 + 1) * DemBeta(1.5 * e1, e1 + 1);

  *V   = 2 * a * b * c * e1 * e2 * DemBeta(0.5 * e1 + 1, e1) * DemBeta(0.5 * e2, 0.5 * e2);
  I[0] = k * (b * b * t1 + c * c * t2);
  I[1] = k * (a * a * t1 + c * c * t2);
  I[2] = k * (a * a + b * b) * t1;
}

/* the point of |x/a|^n + |y/b|^n = 1 where the outer normal is along (dx, dy); *h the support
   value dx x + dy y. With k = 1/(n-1): x ~ (a|dx|)^k, y ~ (b|dy|)^k (eq. (33) without its
   division by a normal component) */
static void DemSQSupport2D(PetscReal a, PetscReal b, PetscReal n, PetscReal dx, PetscReal dy, PetscReal *x, PetscReal *y, PetscReal *h)
{
  const PetscReal k = 1.0 / (n - 1);
  PetscReal       px = PetscAbsReal(a * dx), py = PetscAbsReal(b * dy), m, S;

  m = PetscMax(px, py);
  if (!(m > 0)) {
    *x = *y = *h = 0;
    return;
  }
  if (n == 2) { /* ellipse: k = 1, no powers (plane contacts of ellipsoids and cylinders) */
    px = px / m;
    py = py / m;
    S  = PetscSqrtReal(px * px + py * py);
  } else { /* the larger of the two is 1 and stays 1 under the powers (no pow() for it); with
              t = the smaller ratio and p = t^k, p^n = t^(n k) = t p since n k = 1 + k */
    if (px == m) {
      const PetscReal t = py / m;
      px = 1;
      py = PetscPowReal(t, k);
      S  = PetscPowReal(1 + t * py, 1.0 / n);
    } else {
      const PetscReal t = px / m;
      px = PetscPowReal(t, k);
      py = 1;
      S  = PetscPowReal(t * px + 1, 1.0 / n);
    }
  }
  *x = a * px / S * (dx < 0 ? -1 : 1);
  *y = b * py / S * (dy < 0 ? -1 : 1);
  *h = dx * *x + dy * *y;
}

void DemSQSupport_Private(const DemSQGeom *g, const PetscReal d[3], PetscReal x[3])
{
  PetscReal u, v, h2, s, z, hz;

  /* the x-y cross-section at level s is s times the unit one (exponent n2); then (s, z) lie
     on s^n1 + |z/c|^n1 = 1 */
  DemSQSupport2D(g->a, g->b, g->n2, d[0], d[1], &u, &v, &h2);
  DemSQSupport2D(1.0, g->c, g->n1, h2, d[2], &s, &z, &hz);
  if (h2 == 0) s = 0;
  x[0] = s * u;
  x[1] = s * v;
  x[2] = z;
}

/* mean curvature |g^T H g - |g|^2 tr H| / (2 |g|^3) (eq. (39)) and the square root of the
   Gaussian curvature g^T adj(H) g / |g|^4. Eq. (40) is the same quantity written for
   F_z != 0: AB - C^2 = F_z^2 g^T adj(H) g and D = F_z^2 |g|^4, with the square root taken of
   the quotient (as printed it is misplaced: sqrt(AB - C^2)/D is not 1/R for a sphere). */
void DemSQCurvatures_Private(const PetscReal g[3], const PetscReal H[6], PetscReal *Km, PetscReal *Kg)
{
  DemSQCurvaturesInline_Private(g, H, Km, Kg);
}

PetscReal DemSQHertzRadius_Private(const DemSQGeom *g, PetscReal s, const PetscReal x[3])
{
  PetscReal grad[3], H[6], Km, Kg, K, Rmax = g->qlimit * g->rvol;

  if (g->curv == DEM_SQ_CURV_VOLUME) return s * g->rvol;
  (void)DemSQEval_Private(g, x, grad, H);
  DemSQCurvatures_Private(grad, H, g->curv == DEM_SQ_CURV_MEAN ? &Km : NULL, g->curv == DEM_SQ_CURV_GAUSS ? &Kg : NULL);
  K = g->curv == DEM_SQ_CURV_MEAN ? Km : Kg;
  return s * ((K * Rmax > 1) ? 1.0 / K : Rmax);
}

/* Hertz radius from the gradient and Hessian of F at a surface point in any frame whose
   lengths are `unit` metres (curvature scales as 1/length): 1/K limited by q R_vol */
PetscReal DemSQHertzRadiusFrom_Private(const DemSQGeom *g, PetscReal s, const PetscReal grad[3], const PetscReal H[6], PetscReal unit)
{
  return DemSQHertzRadiusFromInline_Private(g, s, grad, H, unit);
}

/* separating-axis test of two oriented boxes, half extents s (a, b, c) (15 axes: the 3 + 3
   face normals and the 9 edge cross products). Returns the largest separation of the boxes'
   projections found on a tested axis (> margin: the bodies are farther apart than margin,
   a lower bound on their distance), or 0 when the boxes overlap on every axis tested. It stops
   at the first axis that separates them by more than margin. */
PetscReal DemSQOBBSeparation_Private(const DemSQBody *A, const DemSQBody *B, PetscReal margin)
{
  const PetscReal ea[3] = {A->s * A->g->a, A->s * A->g->b, A->s * A->g->c};
  const PetscReal eb[3] = {B->s * B->g->a, B->s * B->g->b, B->s * B->g->c};
  PetscReal       R[3][3], AR[3][3], t[3], d[3], ra, rb, sep, best = 0;
  const PetscReal eps = 1e-12;

  for (int j = 0; j < 3; j++) d[j] = B->x[j] - A->x[j];
  /* R = A^T B (A's axes are the columns of A->R), t = A^T d */
  for (int i = 0; i < 3; i++) {
    t[i] = A->R[i] * d[0] + A->R[3 + i] * d[1] + A->R[6 + i] * d[2];
    for (int j = 0; j < 3; j++) {
      R[i][j]  = A->R[i] * B->R[j] + A->R[3 + i] * B->R[3 + j] + A->R[6 + i] * B->R[6 + j];
      AR[i][j] = PetscAbsReal(R[i][j]) + eps;
    }
  }
  for (int i = 0; i < 3; i++) { /* A's axes (unit) */
    rb  = eb[0] * AR[i][0] + eb[1] * AR[i][1] + eb[2] * AR[i][2];
    sep = PetscAbsReal(t[i]) - ea[i] - rb;
    if (sep > best && (best = sep) > margin) return best;
  }
  for (int j = 0; j < 3; j++) { /* B's axes (unit) */
    ra  = ea[0] * AR[0][j] + ea[1] * AR[1][j] + ea[2] * AR[2][j];
    sep = PetscAbsReal(t[0] * R[0][j] + t[1] * R[1][j] + t[2] * R[2][j]) - ra - eb[j];
    if (sep > best && (best = sep) > margin) return best;
  }
  for (int i = 0; i < 3; i++) { /* A_i x B_j, of length sqrt(1 - R_ij^2) */
    const int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
    for (int j = 0; j < 3; j++) {
      const int       j1 = (j + 1) % 3, j2 = (j + 2) % 3;
      const PetscReal l2 = 1 - R[i][j] * R[i][j];
      if (l2 < 1e-12) continue; /* parallel axes: covered by the face normals */
      ra  = ea[i1] * AR[i2][j] + ea[i2] * AR[i1][j];
      rb  = eb[j1] * AR[i][j2] + eb[j2] * AR[i][j1];
      sep = (PetscAbsReal(t[i2] * R[i1][j] - t[i1] * R[i2][j]) - ra - rb) / PetscSqrtReal(l2);
      if (sep > best && (best = sep) > margin) return best;
    }
  }
  return best;
}

const DemSQGeom *DemSQUnitSphere_Private(void)
{
  static DemSQGeom sph;
  static PetscBool set = PETSC_FALSE;

  if (!set) {
    sph.a = sph.b = sph.c = 1;
    sph.n1 = sph.n2 = 2;
    sph.curv   = DEM_SQ_CURV_MEAN;
    sph.qlimit = 10;
    (void)DemSQGeomSetUp_Private(&sph);
    set = PETSC_TRUE;
  }
  return &sph;
}

/* ---------------------------------------------------------------- shape accessors */

const DemSQGeom *DemShapeSuperquadricGeom_Private(DemShape s)
{
  if (!s || s->ops->setfromconfig != DemShapeSetFromConfig_Superquadric) return NULL;
  return &((DemShape_Superquadric *)s->data)->g;
}

DemSQStats *DemShapeSuperquadricStats_Private(DemShape s)
{
  if (!s || s->ops->setfromconfig != DemShapeSetFromConfig_Superquadric) return NULL;
  return &((DemShape_Superquadric *)s->data)->st;
}

/* a pair's record as reals for the (gid_a, gid_b) map, so that nothing of it is lost when
   the neighbour list is rebuilt (the results do not depend on when rebuilds happen) */
#define DEM_SQ_WARM_REALS 23
static void DemSQWarmPack(const DemSQWarm *w, PetscReal v[DEM_SQ_WARM_REALS])
{
  for (int j = 0; j < 3; j++) v[j] = w->X[j], v[4 + j] = w->Xb[j], v[10 + j] = w->dx0[j];
  v[3] = w->mu;
  v[7] = w->hasb ? 1 : 0;
  v[8] = w->al[0], v[9] = w->al[1];
  v[13] = w->sep;
  for (int j = 0; j < 4; j++) v[14 + j] = w->qa0[j], v[18 + j] = w->qb0[j];
  v[22] = w->valid ? 1 : 0;
}

static void DemSQWarmUnpack(const PetscReal v[DEM_SQ_WARM_REALS], DemSQWarm *w)
{
  for (int j = 0; j < 3; j++) w->X[j] = v[j], w->Xb[j] = v[4 + j], w->dx0[j] = v[10 + j];
  w->mu    = v[3];
  w->hasb  = v[7] > 0.5 ? PETSC_TRUE : PETSC_FALSE;
  w->al[0] = v[8], w->al[1] = v[9];
  w->sep   = v[13];
  for (int j = 0; j < 4; j++) w->qa0[j] = v[14 + j], w->qb0[j] = v[18 + j];
  w->valid = v[22] > 0.5 ? PETSC_TRUE : PETSC_FALSE;
}

static PetscErrorCode DemSQWarmGrow(DemShape_Superquadric *sq, PetscInt n)
{
  DemSQWarm *w;
  char      *raw;
  PetscInt   cap;

  PetscFunctionBegin;
  if (n <= sq->cap) PetscFunctionReturn(PETSC_SUCCESS);
  cap = PetscMax(n, 2 * sq->cap);
  PetscCall(PetscMalloc1((size_t)cap * sizeof(DemSQWarm) + 64, &raw));
  w = (DemSQWarm *)(raw + (64 - (size_t)((uintptr_t)raw % 64)) % 64);
  if (sq->cap) PetscCall(PetscArraycpy(w, sq->w, sq->cap));
  for (PetscInt k = sq->cap; k < cap; k++) {
    PetscCall(PetscMemzero(&w[k], sizeof(w[k])));
    w[k].ga = w[k].gb = -1;
  }
  PetscCall(PetscFree(sq->wraw));
  sq->wraw = raw;
  sq->w    = w;
  sq->cap  = cap;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* every slot emptied, the gid map m cleared first; with carry, the records a later step can
   use (a warm start, or a separation certificate) go into m by their pair's global ids (the
   rebuild's flush). An empty slot is overwritten before use; its sep and ids are reset so that
   the next flush does not carry it as a record of the ids -1, -1. */
static PetscErrorCode DemSQSlotsEmpty(DemShape_Superquadric *sq, DemHistoryMap *m, PetscBool carry)
{
  PetscFunctionBegin;
  PetscCall(DemHistoryMapClear(m));
  for (PetscInt k = 0; k < sq->cap; k++) {
    if (carry && sq->w[k].ga >= 0 && (sq->w[k].valid || sq->w[k].sep > 0)) {
      PetscReal v[DEM_SQ_WARM_REALS];
      DemSQWarmPack(&sq->w[k], v);
      PetscCall(DemHistoryMapPut(m, sq->w[k].ga, sq->w[k].gb, 0, v));
    }
    sq->w[k].ga = sq->w[k].gb = -1;
    sq->w[k].valid            = PETSC_FALSE;
    sq->w[k].sep              = 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeSuperquadricWarmArrays_Private(DemShape s, DemSim sim, PetscInt *cap, DemSQWarm **w)
{
  DemShape_Superquadric *sq = (DemShape_Superquadric *)s->data;
  DemSQWarm             *dummy;

  PetscFunctionBegin;
  if (sq->nbuilds != sim->nl.nbuilds) PetscCall(DemShapeSuperquadricWarm_Private(s, sim, 0, -2, -2, &dummy)); /* migrates the slots */
  *cap = sq->cap;
  *w   = sq->w;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeSuperquadricFrames_Private(DemShape s, PetscInt n, PetscReal **R, int64_t **stamp, int64_t *call)
{
  DemShape_Superquadric *sq = (DemShape_Superquadric *)s->data;

  PetscFunctionBegin;
  if (n > sq->fcap) { /* grows with the body count (owned and ghosts), not per step */
    PetscInt cap = PetscMax(n, 2 * sq->fcap);
    PetscCall(PetscFree2(sq->fR, sq->fstamp));
    PetscCall(PetscMalloc2(9 * cap, &sq->fR, cap, &sq->fstamp));
    for (PetscInt i = 0; i < cap; i++) sq->fstamp[i] = -1;
    sq->fcap = cap;
  }
  *R     = sq->fR;
  *stamp = sq->fstamp;
  *call  = ++sq->fcall;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeSuperquadricScratch_Private(DemShape s, PetscInt n, PetscInt **idx)
{
  DemShape_Superquadric *sq = (DemShape_Superquadric *)s->data;

  PetscFunctionBegin;
  if (n > sq->icap) { /* grows with the batch size (pairs of the neighbour list), not per step */
    PetscInt cap = PetscMax(n, 2 * sq->icap);
    PetscCall(PetscFree(sq->idx));
    PetscCall(PetscMalloc1(cap, &sq->idx));
    sq->icap = cap;
  }
  *idx = sq->idx;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeSuperquadricPrefilter_Private(DemShape s, DemSim sim, const PetscReal *x, const PetscReal *q, PetscInt nb, const PetscReal **M, PetscReal **m, unsigned char **kind, PetscInt *cap)
{
  DemShape_Superquadric *sq = (DemShape_Superquadric *)s->data;
  const DemBodyStore    *bs = &sim->bodies;
  const PetscReal       *rad = bs->radius;
  const int64_t         *gid = bs->gid;

  PetscFunctionBegin;
  if (sq->pfoff) {
    *M = *m = NULL, *kind = NULL, *cap = 0;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (sq->pfbuilds != sim->nl.nbuilds || sq->pfnb != nb) { /* new references: these poses */
    if (nb > sq->pfcapb) { /* grows with the body count, at rebuilds only */
      PetscInt c = PetscMax(nb, 2 * sq->pfcapb);
      PetscCall(PetscFree4(sq->pfx, sq->pfq, sq->pfM, sq->pfgid));
      PetscCall(PetscMalloc4(3 * c, &sq->pfx, 4 * c, &sq->pfq, c, &sq->pfM, c, &sq->pfgid));
      sq->pfcapb = c;
    }
    if (sim->nl.npairs > sq->pfcap) {
      PetscInt c = PetscMax(sim->nl.npairs, 2 * sq->pfcap);
      PetscCall(PetscFree2(sq->pfm, sq->pfk));
      PetscCall(PetscMalloc2(c, &sq->pfm, c + 4, &sq->pfk)); /* + 4: the colliders read kind as 32-bit words */
      sq->pfcap = c;
    }
    PetscCall(PetscArraycpy(sq->pfx, x, 3 * nb));
    PetscCall(PetscArraycpy(sq->pfq, q, 4 * nb));
    PetscCall(PetscArraycpy(sq->pfgid, gid, nb));
    for (PetscInt p = 0; p < sq->pfcap; p++) sq->pfm[p] = -PETSC_MAX_REAL, sq->pfk[p] = 0;
    for (PetscInt p = sq->pfcap; p < sq->pfcap + 4; p++) sq->pfk[p] = 0;
    sq->pfbuilds = sim->nl.nbuilds;
    sq->pfnb     = nb;
  }
  /* each body's motion bound since the reference: translation plus pi r sin(theta/2) for its
     rotation by theta (as DemSQRotBound); a body whose slot now holds another body (gid) gets
     an infinite bound */
  for (PetscInt i = 0; i < nb; i++) {
    const PetscReal *xr = sq->pfx + 3 * i, *qr = sq->pfq + 4 * i, *xi = x + 3 * i, *qi = q + 4 * i;
    const PetscReal  d0 = xi[0] - xr[0], d1 = xi[1] - xr[1], d2 = xi[2] - xr[2];
    const PetscReal  c = qi[0] * qr[0] + qi[1] * qr[1] + qi[2] * qr[2] + qi[3] * qr[3], s2 = 1 - c * c;
    sq->pfM[i] = gid[i] != sq->pfgid[i] ? PETSC_MAX_REAL : PetscSqrtReal(d0 * d0 + d1 * d1 + d2 * d2) + (s2 > 0 ? PETSC_PI * rad[i] * PetscSqrtReal(s2) : 0);
  }
  *M    = sq->pfM;
  *m    = sq->pfm;
  *kind = sq->pfk;
  *cap  = sq->pfcap;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeSuperquadricWarm_Private(DemShape s, DemSim sim, PetscInt pair, int64_t ga, int64_t gb, DemSQWarm **w)
{
  DemShape_Superquadric *sq = (DemShape_Superquadric *)s->data;

  PetscFunctionBegin;
  if (sq->nbuilds != sim->nl.nbuilds) { /* the list was rebuilt: slots go through the gid map */
    PetscCall(DemSQSlotsEmpty(sq, &sq->map, PETSC_TRUE));
    sq->nbuilds = sim->nl.nbuilds;
  }
  if (pair >= sq->cap) PetscCall(DemSQWarmGrow(sq, PetscMax(pair + 1, sim->nl.npairs)));
  if (sq->w[pair].ga != ga || sq->w[pair].gb != gb) {
    PetscReal *v = DemHistoryMapGet(&sq->map, ga, gb, 0);
    if (v) DemSQWarmUnpack(v, &sq->w[pair]);
    else PetscCall(PetscMemzero(&sq->w[pair], sizeof(sq->w[pair])));
    sq->w[pair].ga = ga;
    sq->w[pair].gb = gb;
  }
  *w = &sq->w[pair];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* thermo.csv column sq_failures: contact solves that did not converge so far, summed over
   the superquadric shapes and the ranks */
static PetscErrorCode DemSQThermoFailures(DemSim sim, void *ctx, PetscReal *value)
{
  PetscReal loc = 0;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < sim->nshape; k++) {
    DemSQStats *st = DemShapeSuperquadricStats_Private(sim->shapes[k]);
    if (st) loc += (PetscReal)st->failures;
  }
  PetscCallMPI(MPI_Allreduce(&loc, value, 1, MPIU_REAL, MPIU_SUM, sim->comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- shape ops */

static PetscErrorCode DemShapeSetFromConfig_Superquadric(DemShape s, DemNode cfg)
{
  DemShape_Superquadric *sq     = (DemShape_Superquadric *)s->data;
  const char *const      keys[] = {"type", "half_axes", "blockiness", "curvature", "curvature_limit", "tessellation", NULL};
  const char *const      curv[] = {"mean", "gaussian", "volume", NULL};
  PetscReal              ax[3], nb[2];
  PetscInt               ci = 0;
  DemNode                kn;

  PetscFunctionBegin;
  PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscCall(DemNodeGetRealArray(cfg, "half_axes", PETSC_TRUE, 3, ax));
  PetscCall(DemNodeGet(cfg, "half_axes", &kn));
  DemNodeCheck(kn, ax[0] > 0 && ax[1] > 0 && ax[2] > 0 && ax[0] < PETSC_INFINITY && ax[1] < PETSC_INFINITY && ax[2] < PETSC_INFINITY, "half_axes must be three lengths > 0 [a, b, c] in m (got [%g, %g, %g])", (double)ax[0], (double)ax[1], (double)ax[2]);
  PetscCall(DemNodeGetRealArray(cfg, "blockiness", PETSC_TRUE, 2, nb));
  PetscCall(DemNodeGet(cfg, "blockiness", &kn));
  DemNodeCheck(kn, nb[0] >= 2 && nb[1] >= 2 && nb[0] <= 50 && nb[1] <= 50, "blockiness must be [n1, n2] with each in [2, 50] (2: round, large: flat faces; got [%g, %g])", (double)nb[0], (double)nb[1]);
  PetscCall(DemNodeGetChoice(cfg, "curvature", curv, PETSC_FALSE, &ci));
  sq->g.qlimit = 10;
  PetscCall(DemNodeGetReal(cfg, "curvature_limit", PETSC_FALSE, &sq->g.qlimit));
  PetscCall(DemNodeGet(cfg, "curvature_limit", &kn));
  DemNodeCheck(kn ? kn : cfg, sq->g.qlimit > 0 && sq->g.qlimit < PETSC_INFINITY, "curvature_limit must be > 0 (R <= q R_vol; got %g)", (double)sq->g.qlimit);
  PetscCall(DemNodeGetInt(cfg, "tessellation", PETSC_FALSE, &sq->tess));
  PetscCall(DemNodeGet(cfg, "tessellation", &kn));
  DemNodeCheck(kn ? kn : cfg, sq->tess >= 2 && sq->tess <= 64, "tessellation must be an integer in [2, 64] (got %" PetscInt_FMT ")", sq->tess);
  sq->g.a    = ax[0];
  sq->g.b    = ax[1];
  sq->g.c    = ax[2];
  sq->g.n1   = nb[0];
  sq->g.n2   = nb[1];
  sq->g.curv = (DemSQCurvature)ci;
  PetscCall(DemSQGeomSetUp_Private(&sq->g));
  {
    static PetscBool thermo = PETSC_FALSE;
    if (!thermo) {
      PetscCall(DemThermoRegister("sq_failures", DemSQThermoFailures, NULL, "built-in (superquadric)"));
      thermo = PETSC_TRUE;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeMassProperties_Superquadric(DemShape s, PetscReal rho, PetscReal *m, PetscReal I[3])
{
  DemShape_Superquadric *sq = (DemShape_Superquadric *)s->data;

  PetscFunctionBegin;
  *m = rho * sq->g.vol;
  for (int j = 0; j < 3; j++) I[j] = rho * sq->g.Iunit[j];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeBoundingRadius_Superquadric(DemShape s, PetscReal *r)
{
  PetscFunctionBegin;
  *r = ((DemShape_Superquadric *)s->data)->g.rbound;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* signed power sign(t) |t|^e */
static inline PetscReal DemSPow(PetscReal t, PetscReal e)
{
  return t < 0 ? -PetscPowReal(-t, e) : PetscPowReal(t, e);
}

/* the parametric surface x = a C(eta)^e1 C(om)^e2, y = b C(eta)^e1 S(om)^e2, z = c S(eta)^e1
   (signed powers, e1 = 2/n1, e2 = 2/n2): 4m longitudes, 2m latitudes, a point at each pole */
static PetscErrorCode DemShapeTessellate_Superquadric(DemShape s, DemSurface *srf)
{
  DemShape_Superquadric *sq = (DemShape_Superquadric *)s->data;
  const DemSQGeom       *g  = &sq->g;
  const PetscInt         nu = 4 * sq->tess, nv = 2 * sq->tess, np = 2 + (nv - 1) * nu, nt = 2 * nu * (nv - 1);
  const PetscReal        e1 = 2.0 / g->n1, e2 = 2.0 / g->n2;
  PetscInt               t = 0;

  PetscFunctionBegin;
  srf->npoints = np;
  srf->ntri    = nt;
  PetscCall(PetscMalloc1(3 * np, &srf->points));
  PetscCall(PetscMalloc1(3 * nt, &srf->tri));
  srf->points[0] = srf->points[1] = 0;
  srf->points[2] = -g->c;
  srf->points[3 * (np - 1)] = srf->points[3 * (np - 1) + 1] = 0;
  srf->points[3 * (np - 1) + 2] = g->c;
  for (PetscInt j = 1; j < nv; j++) {
    const PetscReal eta = -0.5 * PETSC_PI + PETSC_PI * j / nv, ce = DemSPow(PetscCosReal(eta), e1), se = DemSPow(PetscSinReal(eta), e1);
    for (PetscInt i = 0; i < nu; i++) {
      const PetscReal om = 2 * PETSC_PI * i / nu;
      PetscReal      *p  = srf->points + 3 * (1 + (j - 1) * nu + i);
      p[0] = g->a * ce * DemSPow(PetscCosReal(om), e2);
      p[1] = g->b * ce * DemSPow(PetscSinReal(om), e2);
      p[2] = g->c * se;
    }
  }
  for (PetscInt i = 0; i < nu; i++) { /* caps, outward (counter-clockwise seen from outside) */
    PetscInt i1 = (i + 1) % nu;
    srf->tri[3 * t] = 0, srf->tri[3 * t + 1] = 1 + i1, srf->tri[3 * t + 2] = 1 + i, t++;
    srf->tri[3 * t] = np - 1, srf->tri[3 * t + 1] = 1 + (nv - 2) * nu + i, srf->tri[3 * t + 2] = 1 + (nv - 2) * nu + i1, t++;
  }
  for (PetscInt j = 1; j < nv - 1; j++)
    for (PetscInt i = 0; i < nu; i++) {
      PetscInt i1 = (i + 1) % nu, p00 = 1 + (j - 1) * nu + i, p01 = 1 + (j - 1) * nu + i1, p10 = 1 + j * nu + i, p11 = 1 + j * nu + i1;
      srf->tri[3 * t] = p00, srf->tri[3 * t + 1] = p01, srf->tri[3 * t + 2] = p11, t++;
      srf->tri[3 * t] = p00, srf->tri[3 * t + 1] = p11, srf->tri[3 * t + 2] = p10, t++;
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the end-of-run line: contact solves, warm starts, continuations, failures, Newton work */
static PetscErrorCode DemShapeDestroy_Superquadric(DemShape s)
{
  DemShape_Superquadric *sq = (DemShape_Superquadric *)s->data;
  PetscReal              loc[9], glob[9];

  PetscFunctionBegin;
  loc[0] = (PetscReal)sq->st.solves;
  loc[1] = (PetscReal)sq->st.warm;
  loc[2] = (PetscReal)sq->st.continuations;
  loc[3] = (PetscReal)sq->st.failures;
  loc[4] = (PetscReal)sq->st.iterations;
  loc[5] = (PetscReal)sq->st.seconds;
  loc[6] = (PetscReal)sq->st.obbreject;
  loc[7] = (PetscReal)sq->st.skipped;
  loc[8] = (PetscReal)sq->st.prefiltered;
  PetscCallMPI(MPI_Allreduce(loc, glob, 9, MPIU_REAL, MPIU_SUM, s->comm));
  if (glob[0] > 0)
    PetscCall(PetscPrintf(s->comm, "superquadric %s: %.0f contact solves (%.0f from the warm start, %.0f by shape continuation), %.0f not converged, %.2f Newton iterations per solve; %.0f pair checks skipped (separation certified), %.0f rejected by the bounding boxes; %.3g us (CPU) per narrow-phase pair check; %.0f pair checks passed over by the prefilter\n", s->name, (double)glob[0], (double)glob[1], (double)glob[2], (double)glob[3], (double)(glob[4] / glob[0]), (double)glob[7], (double)glob[6], (double)(1e6 * glob[5] / (glob[0] + glob[6] + glob[7])), (double)glob[8]));
  PetscCall(PetscFree(sq->wraw));
  PetscCall(PetscFree2(sq->fR, sq->fstamp));
  PetscCall(PetscFree4(sq->pfx, sq->pfq, sq->pfM, sq->pfgid));
  PetscCall(PetscFree2(sq->pfm, sq->pfk));
  PetscCall(PetscFree(sq->idx));
  PetscCall(DemHistoryMapFree(&sq->map));
  PetscCall(DemHistoryMapFree(&sq->hslot));
  PetscCall(DemHistoryMapFree(&sq->hmap));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_EXTERN PetscErrorCode DemShapeCreate_Superquadric(DemShape);
PetscErrorCode DemShapeCreate_Superquadric(DemShape s)
{
  DemShape_Superquadric *sq;

  PetscFunctionBegin;
  PetscCall(PetscNew(&sq));
  sq->tess    = 8;
  sq->nbuilds = -1;
  sq->pfbuilds = -1;
  {
    const char *e = getenv("MMDEM_SQ_PREFILTER");
    sq->pfoff     = e && !strcmp(e, "off") ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscCall(DemHistoryMapInit(&sq->map, DEM_SQ_WARM_REALS));
  s->data = sq;
  PetscCall(DemShapeKindRegister("superquadric", &s->kind));
  s->ops->setfromconfig  = DemShapeSetFromConfig_Superquadric;
  s->ops->massproperties = DemShapeMassProperties_Superquadric;
  s->ops->boundingradius = DemShapeBoundingRadius_Superquadric;
  s->ops->tessellate     = DemShapeTessellate_Superquadric;
  s->ops->destroy        = DemShapeDestroy_Superquadric;
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(shape, "superquadric", DemShapeCreate_Superquadric)

/*
  the warm-start store seen from the MPI decomposition (src/core/decomp.c), which moves each
  pair's record with the pair when bodies migrate, as it moves the contact history:
  DemShapeSuperquadricWarmReals_Private - reals per record (0: s is not a superquadric);
  DemShapeSuperquadricWarmSlots_Private - slots of the store (records are in slots 0 .. - 1);
    0 when the slots belong to a list before the current one (taken out at its rebuild);
  DemShapeSuperquadricWarmGet_Private - slot k's pair of global ids and record; PETSC_FALSE
    for an empty slot or k beyond the store (the records of the list before a rebuild);
  DemShapeSuperquadricWarmPut_Private - a record for the pair (ga, gb) into the gid map that
    the lookups after a rebuild read (the store's own slots go there first, as at any rebuild).
*/
PetscInt DemShapeSuperquadricWarmReals_Private(DemShape s)
{
  return (s && s->ops->setfromconfig == DemShapeSetFromConfig_Superquadric) ? DEM_SQ_WARM_REALS : 0;
}

PetscInt DemShapeSuperquadricWarmSlots_Private(DemShape s, DemSim sim)
{
  DemShape_Superquadric *sq;

  if (!DemShapeSuperquadricWarmReals_Private(s)) return 0;
  sq = (DemShape_Superquadric *)s->data;
  /* slots not taken since the list's last build belong to the list before it: the rebuild
     then took their records out already, and they may be stale (a record that went to
     another rank there and changed since) */
  return sq->nbuilds == sim->nl.nbuilds ? sq->cap : 0;
}

PetscBool DemShapeSuperquadricWarmGet_Private(DemShape s, PetscInt k, int64_t *ga, int64_t *gb, PetscReal v[])
{
  DemShape_Superquadric *sq;

  if (!DemShapeSuperquadricWarmReals_Private(s)) return PETSC_FALSE;
  sq = (DemShape_Superquadric *)s->data;
  if (k >= sq->cap || sq->w[k].ga < 0 || !(sq->w[k].valid || sq->w[k].sep > 0)) return PETSC_FALSE;
  *ga = sq->w[k].ga;
  *gb = sq->w[k].gb;
  DemSQWarmPack(&sq->w[k], v);
  return PETSC_TRUE;
}

/* the eight counters a checkpoint holds (not the CPU seconds: they are the run's own) */
static void DemSQCounters(DemShape_Superquadric *sq, PetscInt64 cnt[DEM_SQ_COUNTERS], PetscBool get)
{
  PetscInt64 *c[DEM_SQ_COUNTERS] = {&sq->st.solves, &sq->st.warm, &sq->st.continuations, &sq->st.failures, &sq->st.iterations, &sq->st.obbreject, &sq->st.skipped, &sq->st.prefiltered};
  for (int j = 0; j < DEM_SQ_COUNTERS; j++) {
    if (get) cnt[j] = *c[j];
    else *c[j] = cnt[j];
  }
}

/*
  DemShapeSuperquadricCheckpoint_Private - writes (write) or reads back, through
  DemCheckpointIO, everything of a superquadric shape that a later step depends on: the warm-start
  slots of the neighbour list's pairs (slot index, pair ids, record), the gid map of the records
  carried over the last rebuild that no lookup has taken yet, whether the slots belong to the
  current list, the prefilter's reference poses and per-pair bounds, and the counters (thermo.csv's
  sq_failures counts from the start of the run). A resting contact's solve starts from its
  record and the prefilter decides which records are refreshed, so a restart without them
  converges to other points within the solver's tolerance and is not bitwise the uninterrupted
  run. Reading replaces the state the set-up's force evaluation left. A decomposed run's
  checkpoint holds every rank's records in this layout (DemShapeSuperquadricGathered_Private
  below); a restart on several ranks reads it on every rank, then hands each rank the records of
  its pairs (DemShapeSuperquadricHold_Private / Place). Not collective.
*/
PetscErrorCode DemShapeSuperquadricCheckpoint_Private(DemShape s, DemSim sim, FILE *fp, PetscBool write)
{
  DemShape_Superquadric *sq  = (DemShape_Superquadric *)s->data;
  const char            *wht = "superquadric warm starts";
  int64_t                ver = 1, sync, n = 0, pf, pfnb = 0, np = 0;
  PetscInt64             cnt[DEM_SQ_COUNTERS];

  PetscFunctionBegin;
  PetscCall(DemCheckpointIO(fp, write, &ver, sizeof(ver), wht));
  PetscCheck(ver == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: %s of version %lld (this build: 1)", wht, (long long)ver);
  sync = sq->nbuilds == sim->nl.nbuilds ? 1 : 0;
  PetscCall(DemCheckpointIO(fp, write, &sync, sizeof(sync), wht));
  /* the slots */
  if (write)
    for (PetscInt k = 0; k < sq->cap; k++) n += sq->w[k].ga >= 0 ? 1 : 0;
  PetscCall(DemCheckpointIO(fp, write, &n, sizeof(n), wht));
  PetscCheck(n >= 0 && n <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: %s: %lld slots", wht, (long long)n);
  if (write) { /* the records (slot, ids, reals) in chunks: the guard's last-good snapshot writes
                  them at every thermo step, and one stream write per value cost ~80
                  instructions per contact pair per step of the static bed (session 13, sq4) */
    enum { CHUNK = 32 };
    const size_t  rec = 3 * sizeof(int64_t) + DEM_SQ_WARM_REALS * sizeof(PetscReal);
    unsigned char buf[CHUNK * (3 * sizeof(int64_t) + DEM_SQ_WARM_REALS * sizeof(PetscReal))];
    size_t        nb = 0;
    for (PetscInt k = 0; k < sq->cap; k++) {
      int64_t   hdr[3] = {k, sq->w[k].ga, sq->w[k].gb};
      PetscReal v[DEM_SQ_WARM_REALS];
      if (sq->w[k].ga < 0) continue;
      DemSQWarmPack(&sq->w[k], v);
      memcpy(buf + nb * rec, hdr, sizeof(hdr));
      memcpy(buf + nb * rec + sizeof(hdr), v, sizeof(v));
      if (++nb == CHUNK) {
        PetscCall(DemCheckpointIO(fp, write, buf, nb * rec, wht));
        nb = 0;
      }
    }
    PetscCall(DemCheckpointIO(fp, write, buf, nb * rec, wht));
  } else PetscCall(DemSQSlotsEmpty(sq, &sq->map, PETSC_FALSE));
  for (PetscInt e = 0; !write && e < n; e++) {
    int64_t   slot, ids[2];
    PetscReal v[DEM_SQ_WARM_REALS];
    PetscCall(DemCheckpointIO(fp, write, &slot, sizeof(slot), wht));
    PetscCall(DemCheckpointIO(fp, write, ids, sizeof(ids), wht));
    PetscCall(DemCheckpointIO(fp, write, v, sizeof(v), wht));
    PetscCheck(slot >= 0 && slot < sim->nl.npairs, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: %s: slot %lld of a list of %lld pairs", wht, (long long)slot, (long long)sim->nl.npairs);
    for (int j = 0; j < DEM_SQ_WARM_REALS; j++) PetscCheck(!PetscIsNanReal(v[j]), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: %s: a value that is not a number", wht);
    PetscCall(DemSQWarmGrow(sq, (PetscInt)slot + 1));
    DemSQWarmUnpack(v, &sq->w[slot]);
    sq->w[slot].ga = ids[0], sq->w[slot].gb = ids[1];
  }
  PetscCall(DemHistoryMapCheckpoint_Private(&sq->map, fp, write, wht));
  if (!write) sq->nbuilds = sync ? sim->nl.nbuilds : -1;
  /* the prefilter */
  pf = (!sq->pfoff && sq->pfbuilds == sim->nl.nbuilds && sq->pfnb > 0) ? 1 : 0;
  PetscCall(DemCheckpointIO(fp, write, &pf, sizeof(pf), wht));
  if (pf) {
    pfnb = sq->pfnb, np = sim->nl.npairs;
    PetscCall(DemCheckpointIO(fp, write, &pfnb, sizeof(pfnb), wht));
    PetscCall(DemCheckpointIO(fp, write, &np, sizeof(np), wht));
    PetscCheck(pfnb > 0 && pfnb <= sim->bodies.n && np == sim->nl.npairs, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "checkpoint: %s: prefilter of %lld bodies, %lld pairs (the checkpoint has %lld and %lld)", wht, (long long)pfnb, (long long)np, (long long)sim->bodies.n, (long long)sim->nl.npairs);
    if (!write && pfnb > sq->pfcapb) {
      PetscCall(PetscFree4(sq->pfx, sq->pfq, sq->pfM, sq->pfgid));
      PetscCall(PetscMalloc4(3 * pfnb, &sq->pfx, 4 * pfnb, &sq->pfq, pfnb, &sq->pfM, pfnb, &sq->pfgid));
      sq->pfcapb = (PetscInt)pfnb;
    }
    if (!write && np > sq->pfcap) {
      PetscCall(PetscFree2(sq->pfm, sq->pfk));
      PetscCall(PetscMalloc2(np, &sq->pfm, np + 4, &sq->pfk));
      sq->pfcap = (PetscInt)np;
    }
    PetscCall(DemCheckpointIO(fp, write, sq->pfx, 3 * (size_t)pfnb * sizeof(PetscReal), wht));
    PetscCall(DemCheckpointIO(fp, write, sq->pfq, 4 * (size_t)pfnb * sizeof(PetscReal), wht));
    PetscCall(DemCheckpointIO(fp, write, sq->pfgid, (size_t)pfnb * sizeof(int64_t), wht));
    PetscCall(DemCheckpointIO(fp, write, sq->pfm, (size_t)np * sizeof(PetscReal), wht));
    PetscCall(DemCheckpointIO(fp, write, sq->pfk, (size_t)np, wht));
    if (!write) {
      for (PetscInt p = (PetscInt)np; p < sq->pfcap; p++) sq->pfm[p] = -PETSC_MAX_REAL, sq->pfk[p] = 0;
      for (PetscInt p = sq->pfcap; p < sq->pfcap + 4; p++) sq->pfk[p] = 0;
      sq->pfnb     = (PetscInt)pfnb;
      sq->pfbuilds = sim->nl.nbuilds;
    }
  } else if (!write) sq->pfbuilds = -1;
  /* the counters */
  DemSQCounters(sq, cnt, PETSC_TRUE);
  PetscCall(DemCheckpointIO(fp, write, cnt, sizeof(cnt), wht));
  if (!write) DemSQCounters(sq, cnt, PETSC_FALSE);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeSuperquadricWarmPut_Private(DemShape s, DemSim sim, int64_t ga, int64_t gb, const PetscReal v[])
{
  DemShape_Superquadric *sq = (DemShape_Superquadric *)s->data;
  DemSQWarm             *dummy;

  PetscFunctionBegin;
  if (sq->nbuilds != sim->nl.nbuilds) PetscCall(DemShapeSuperquadricWarm_Private(s, sim, 0, -2, -2, &dummy)); /* the slots into the map */
  PetscCall(DemHistoryMapPut(&sq->map, ga, gb, 0, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The superquadric state of a decomposed run's checkpoints (decomp.c), by global ids. A rank's
  state that a later step reads: the slots of its list's pairs and the entries of the gid map
  that its list's pairs have not taken yet (records carried over the last rebuild). Slots
  that belong to a list before the current one are not read again (WarmSlots above), nor is
  the map then (the next lookup clears it), nor are entries of pairs outside the list.

  DemShapeSuperquadricExport_Private - this rank's records: *n of DEM_SQ_EXPORT_REALS(s) reals
    each, ga and gb (int64 in the bits of a real), kind (0: the slot of a pair of the list, 1: a
    map entry), the record; and its counters. *r is PetscMalloc'ed. Not collective.
  DemShapeSuperquadricGathered_Private - rank 0, with the gathered list and store in sim (serial
    layout): begin puts the records of every rank in the shape's place (a slot at the index of
    its pair in the gathered list, the map entries into the map, the counters summed, no
    prefilter state: its references are taken afresh at the next step, which changes no
    result), for checkpoint.c to write as a serial run's; end gives the shape its own back.
*/
PetscErrorCode DemShapeSuperquadricExport_Private(DemShape s, DemSim sim, PetscInt *n, PetscReal **r, PetscInt64 cnt[DEM_SQ_COUNTERS])
{
  DemShape_Superquadric  *sq = (DemShape_Superquadric *)s->data;
  const DemNeighbourList *nl = &sim->nl;
  const int64_t          *gid = sim->bodies.gid;
  const PetscInt          W = DEM_SQ_EXPORT_REALS(s);
  PetscInt                e = 0;

  PetscFunctionBegin;
  DemSQCounters(sq, cnt, PETSC_TRUE);
  PetscCall(PetscMalloc1(W * ((sq->nbuilds == nl->nbuilds ? sq->cap + nl->npairs : 0) + 1), r));
  for (PetscInt k = 0; k < sq->cap && sq->nbuilds == nl->nbuilds; k++) {
    if (sq->w[k].ga < 0) continue;
    memcpy(*r + W * e, &sq->w[k].ga, sizeof(int64_t));
    memcpy(*r + W * e + 1, &sq->w[k].gb, sizeof(int64_t));
    (*r)[W * e + 2] = 0;
    DemSQWarmPack(&sq->w[k], *r + W * e + 3);
    e++;
  }
  for (PetscInt p = 0; p < nl->npairs && sq->nbuilds == nl->nbuilds; p++) {
    const int64_t ga = gid[nl->a[p]], gb = gid[nl->b[p]];
    PetscReal    *v;
    if (p < sq->cap && sq->w[p].ga == ga && sq->w[p].gb == gb) continue; /* its slot, above */
    if (!(v = DemHistoryMapGet(&sq->map, ga, gb, 0))) continue;
    memcpy(*r + W * e, &ga, sizeof(int64_t));
    memcpy(*r + W * e + 1, &gb, sizeof(int64_t));
    (*r)[W * e + 2] = 1;
    PetscCall(PetscArraycpy(*r + W * e + 3, v, DEM_SQ_WARM_REALS));
    e++;
  }
  *n = e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeSuperquadricGathered_Private(DemShape s, DemSim sim, PetscInt n, const PetscReal *r, const PetscInt64 cnt[DEM_SQ_COUNTERS], PetscBool begin)
{
  DemShape_Superquadric  *sq = (DemShape_Superquadric *)s->data, *own;
  const DemNeighbourList *nl = &sim->nl;
  const int64_t          *gid = sim->bodies.gid;
  const PetscInt          W = DEM_SQ_EXPORT_REALS(s);
  DemHistoryMap           pi; /* (gid a, gid b) -> the pair's first index in the gathered list */

  PetscFunctionBegin;
  if (!begin) {
    if (!sq->saved) PetscFunctionReturn(PETSC_SUCCESS); /* no gathered state stands in (an error before its begin) */
    PetscCall(PetscFree(sq->wraw));
    PetscCall(DemHistoryMapFree(&sq->map));
    own = (DemShape_Superquadric *)sq->saved;
    *sq = *own;
    PetscCall(PetscFree(own));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(!sq->saved, PETSC_COMM_SELF, PETSC_ERR_PLIB, "superquadric %s: a gathered state already stands in", s->name);
  PetscCall(PetscNew(&own));
  *own = *sq;
  sq->cap = 0, sq->w = NULL, sq->wraw = NULL, sq->saved = own;
  PetscCall(PetscMemzero(&sq->map, sizeof(sq->map)));
  PetscCall(DemHistoryMapInit(&sq->map, DEM_SQ_WARM_REALS));
  sq->nbuilds  = nl->nbuilds;
  sq->pfbuilds = -1;
  DemSQCounters(sq, (PetscInt64 *)cnt, PETSC_FALSE);
  PetscCall(DemSQWarmGrow(sq, nl->npairs + 1));
  PetscCall(DemHistoryMapInit(&pi, 1));
  for (PetscInt p = 0; p < nl->npairs; p++) {
    const PetscReal pr = (PetscReal)p;
    if (!DemHistoryMapGet(&pi, gid[nl->a[p]], gid[nl->b[p]], 0)) PetscCall(DemHistoryMapPut(&pi, gid[nl->a[p]], gid[nl->b[p]], 0, &pr));
  }
  for (PetscInt e = 0; e < n; e++) {
    const PetscReal *o = r + W * e, *p;
    int64_t          ga, gb;
    memcpy(&ga, &o[0], sizeof(ga));
    memcpy(&gb, &o[1], sizeof(gb));
    if (o[2] != 0) {
      PetscCall(DemHistoryMapPut(&sq->map, ga, gb, 0, o + 3));
      continue;
    }
    p = DemHistoryMapGet(&pi, ga, gb, 0);
    PetscCheck(p, PETSC_COMM_SELF, PETSC_ERR_PLIB, "checkpoint: superquadric warm start of pair %lld-%lld without its pair", (long long)ga, (long long)gb);
    DemSQWarmUnpack(o + 3, &sq->w[(PetscInt)p[0]]);
    sq->w[(PetscInt)p[0]].ga = ga, sq->w[(PetscInt)p[0]].gb = gb;
  }
  PetscCall(DemHistoryMapFree(&pi));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  --restart on several ranks (decomp.c DemDecompRebuild, the distribution of an applied
  checkpoint): DemShapeSuperquadricHold_Private, before the distribution, keeps the checkpoint's
  slot records and gid map by global ids and empties the slots (the distribution carries none);
  DemShapeSuperquadricPlace_Private, after the list of this rank is built, puts each held slot
  record into the slot of its pair in the new list and the held map back, so that each rank
  continues with the state its pairs had (a record the uninterrupted run kept in a slot stays
  in one: it survives the next rebuild even when no step takes it before). The prefilter's
  references are taken afresh (no result depends on them); the counters stay on rank 0 (the
  sums over the ranks are the checkpoint's). Not collective.
*/
PetscErrorCode DemShapeSuperquadricHold_Private(DemShape s, DemSim sim)
{
  DemShape_Superquadric *sq = (DemShape_Superquadric *)s->data;

  PetscFunctionBegin;
  PetscCall(DemHistoryMapFree(&sq->hslot));
  PetscCall(DemHistoryMapFree(&sq->hmap));
  PetscCall(DemHistoryMapInit(&sq->hslot, DEM_SQ_WARM_REALS));
  PetscCall(DemHistoryMapInit(&sq->hmap, DEM_SQ_WARM_REALS));
  if (sq->nbuilds == sim->nl.nbuilds) { /* the slots of the checkpoint's list, and its map */
    DemHistoryMap t = sq->hmap;
    for (PetscInt k = 0; k < sq->cap; k++) {
      PetscReal v[DEM_SQ_WARM_REALS];
      if (sq->w[k].ga < 0) continue;
      DemSQWarmPack(&sq->w[k], v);
      PetscCall(DemHistoryMapPut(&sq->hslot, sq->w[k].ga, sq->w[k].gb, 0, v));
    }
    sq->hmap = sq->map, sq->map = t;
    PetscCall(DemSQSlotsEmpty(sq, &sq->map, PETSC_FALSE));
  } else { /* slots of an older list: what the next lookup's flush would leave */
    PetscCall(DemSQSlotsEmpty(sq, &sq->hmap, PETSC_TRUE));
    PetscCall(DemHistoryMapClear(&sq->map));
  }
  sq->held     = PETSC_TRUE;
  sq->pfbuilds = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeSuperquadricPlace_Private(DemShape s, DemSim sim)
{
  DemShape_Superquadric  *sq = (DemShape_Superquadric *)s->data;
  const DemNeighbourList *nl = &sim->nl;
  const int64_t          *gid = sim->bodies.gid;
  DemHistoryMap           t;

  PetscFunctionBegin;
  if (!sq->held) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemSQSlotsEmpty(sq, &sq->map, PETSC_FALSE));
  for (PetscInt p = 0; p < nl->npairs; p++) {
    const int64_t    ga = gid[nl->a[p]], gb = gid[nl->b[p]];
    const PetscReal *v  = DemHistoryMapGet(&sq->hslot, ga, gb, 0);
    if (!v) continue;
    PetscCall(DemSQWarmGrow(sq, PetscMax(p + 1, nl->npairs)));
    DemSQWarmUnpack(v, &sq->w[p]);
    sq->w[p].ga = ga, sq->w[p].gb = gb;
  }
  t = sq->map, sq->map = sq->hmap, sq->hmap = t;
  PetscCall(DemHistoryMapFree(&sq->hslot));
  PetscCall(DemHistoryMapFree(&sq->hmap));
  sq->held     = PETSC_FALSE;
  sq->nbuilds  = nl->nbuilds;
  sq->pfbuilds = -1;
  if (sim->rank != 0) {
    PetscInt64 zero[DEM_SQ_COUNTERS] = {0};
    DemSQCounters(sq, zero, PETSC_FALSE);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

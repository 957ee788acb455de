/*
  superquadric.h - private interface of the superquadric shape (superquadric.c) and its
  colliders (superquadric_contact.c), shared with the unit tests. Not installed.

  Model: 002_a4a9ff6a3ba65368.txt (Podlozhnyuk, Pirker, Kloss, Comp. Part. Mech. 2017).
  Shape function in the body frame, eq. (1) and (12):
    f(x) = (|x/a|^n2 + |y/b|^n2)^(n1/n2) + |z/c|^n1 - 1     (< 0 inside, = 0 on the surface)
  with half-axes a, b, c and blockiness n1, n2 >= 2. f + 1 is positively homogeneous of degree
  n1, so the level sets f = t are copies of the surface scaled about the centre by
  (1 + t)^(1/n1); the gauge g = (f + 1)^(1/n1) is homogeneous of degree 1 (same zero level).
  A body of the store is the shape scaled by s = radius / r_bound (sim.c's per-body radius).
*/
#pragma once
#include "demimpl.h"

typedef enum { DEM_SQ_CURV_MEAN, DEM_SQ_CURV_GAUSS, DEM_SQ_CURV_VOLUME } DemSQCurvature;

/* shape parameters and what is derived from them once (DemSQGeomSetUp_Private) */
typedef struct {
  PetscReal a, b, c, n1, n2;   /* half-axes [m], blockiness */
  PetscReal ia, ib, ic;        /* 1/a, 1/b, 1/c */
  PetscReal e12;               /* n1/n2 - 2, exponent of nu in the Hessian */
  PetscReal in1;               /* 1/n1 */
  int       k1, k2;            /* n1 - 2, n2 - 2 when they are integers in [0, 30], else -1 */
  PetscBool same;              /* n1 == n2: f is separable */
  PetscReal gk[3], hk[3];      /* n1/a, n1/b, n1/c and n1 (n1 - 1)/a^2, .../b^2, .../c^2: the
                                  gradient and Hessian factors of the separable f */
  PetscReal rbound, irbound;   /* minimum bounding sphere, eq. (11), and its inverse */
  PetscReal vol, Iunit[3];     /* volume, principal inertia per unit density (Jaklic et al.) */
  PetscReal rvol;              /* radius of the volume-equivalent sphere */
  DemSQCurvature curv;         /* Hertz radius: mean or Gaussian curvature, or R_vol (eq. (38)-(40)) */
  PetscReal qlimit;            /* R_curvature <= qlimit R_vol (002: q = 10) */
} DemSQGeom;

/* a body in a collision: its shape, scale, centre and rotation matrix (body -> world) */
typedef struct {
  const DemSQGeom *g;
  PetscReal        s;    /* scale of the shape */
  PetscReal        x[3]; /* centre (world, periodic image applied) */
  PetscReal        R[9]; /* row-major, body -> world */
} DemSQBody;

/* what a pair keeps from its last solve: the warm start (midway point in the body frame of a,
   in metres, mu, the line roots) and, for a separated pair, a certified lower bound on the
   distance between the bodies at the poses of that solve (relative position of the centres,
   orientations), which lets later steps skip the solve while the bodies cannot have moved
   that far */
typedef struct { /* what a resting contact's solve reads and writes first (two cache lines) */
  int64_t   ga, gb;               /* the pair's global ids (-1: empty), in the record so that the
                                     collider's check reads the line it reads anyway */
  PetscReal sep;                  /* > 0: distance lower bound (m) at dx0, qa0, qb0 */
  PetscBool valid, hasb;          /* hasb: Xb is set (not after a rebuild of the neighbour list) */
  PetscReal X[3], mu;
  PetscReal Xb[3];                /* the midway point in the body frame of b (m) */
  PetscReal al[2];                /* alpha_a, alpha_b of eq. (36) in solver units; 0: none */
  PetscReal dx0[3], qa0[4], qb0[4];
} DemSQWarm;

/* result of one superquadric contact solve */
typedef struct {
  PetscReal nrm[3];      /* unit normal from b to a */
  PetscReal gap;         /* along the contact line, eq. (36); < 0 overlap */
  PetscReal p[3];        /* middle of the overlap segment X_a X_b (world) */
  PetscReal Ra, Rb;      /* Hertz radii of a and b at X_a, X_b (eq. (38)-(40), limited) */
  PetscReal Fmid;        /* F_a = F_b at the midway point */
  PetscReal sep;         /* separated pairs: a lower bound on the distance (m), else 0 */
  PetscInt  iterations;  /* Newton iterations, all stages */
  PetscInt  stages;      /* continuation stages used (0: warm start only) */
  PetscBool converged;
} DemSQResult;

/* counters of one shape's contact solves (reported at the end of a run and in thermo.csv) */
typedef struct {
  PetscInt64 solves, warm, continuations, failures, iterations, obbreject, skipped;
  PetscInt64 prefiltered; /* pairs passed over by the colliders' prefilter (no test at all) */
  PetscLogDouble seconds;
} DemSQStats;

/* u^e for u >= 0, e >= 0; k = e when e is a small integer (then by multiplication), else -1 */
static inline PetscReal DemSQPow(PetscReal u, int k, PetscReal e)
{
  switch (k) { /* blockiness 2, 3, 4, 6, 8, 10 */
  case 0: return 1;
  case 1: return u;
  case 2: return u * u;
  case 4: {
    PetscReal u2 = u * u;
    return u2 * u2;
  }
  case 6: {
    PetscReal u2 = u * u;
    return u2 * u2 * u2;
  }
  case 8: {
    PetscReal u2 = u * u, u4 = u2 * u2;
    return u4 * u4;
  }
  default: break;
  }
  if (k >= 0) {
    PetscReal r = 1, p = u;
    while (k) {
      if (k & 1) r *= p;
      p *= p;
      k >>= 1;
    }
    return r;
  }
  return u > 0 ? PetscPowReal(u, e) : 0;
}

/* the non-separable case (n1 != n2) of DemSQEval_Private, out of line */
PETSC_EXTERN PetscReal DemSQEvalGeneral_Private(const DemSQGeom *, const PetscReal x[3], PetscReal grad[3], PetscReal H[6]);

/* f, gradient and Hessian (xx, yy, zz, xy, xz, yz) in the body frame, eq. (12), (14)-(17); H may
   be NULL. The separable case inline: the colliders' inner loops call it four times per
   contact solve. */
DEM_HOT_INLINE PetscReal DemSQEval_Private(const DemSQGeom *g, const PetscReal x[3], PetscReal grad[3], PetscReal H[6])
{
  if (g->same) { /* separable: f = u^n + v^n + w^n - 1; the common blockiness 2, 4, 10 first */
    const PetscReal u = PetscAbsReal(x[0]) * g->ia, v = PetscAbsReal(x[1]) * g->ib, w = PetscAbsReal(x[2]) * g->ic;
    PetscReal       pu, pv, pw, U1, V1, W1;
    switch (g->k1) {
    case 8: {
      const PetscReal u2 = u * u, v2 = v * v, w2 = w * w, u4 = u2 * u2, v4 = v2 * v2, w4 = w2 * w2;
      pu = u4 * u4, pv = v4 * v4, pw = w4 * w4;
    } break;
    case 2:
      pu = u * u, pv = v * v, pw = w * w;
      break;
    case 0:
      pu = pv = pw = 1;
      break;
    default:
      pu = DemSQPow(u, g->k1, g->n1 - 2), pv = DemSQPow(v, g->k1, g->n1 - 2), pw = DemSQPow(w, g->k1, g->n1 - 2);
    }
    U1 = pu * u, V1 = pv * v, W1 = pw * w; /* u^(n-1), v^(n-1), w^(n-1) */
    grad[0] = PetscCopysignReal(g->gk[0] * U1, x[0]);
    grad[1] = PetscCopysignReal(g->gk[1] * V1, x[1]);
    grad[2] = PetscCopysignReal(g->gk[2] * W1, x[2]);
    if (H) {
      H[0] = g->hk[0] * pu;
      H[1] = g->hk[1] * pv;
      H[2] = g->hk[2] * pw;
      H[3] = H[4] = H[5] = 0;
    }
    return U1 * u + V1 * v + W1 * w - 1;
  }
  return DemSQEvalGeneral_Private(g, x, grad, H);
}

/* curvature of the level surface through a point with gradient g and Hessian H (any frame):
   mean |K_mean| (eq. (39)) and sqrt of the Gaussian curvature (eq. (40)); Km or Kg may be NULL.
   Inline for the colliders (two per contact solve); DemSQCurvatures_Private is the same. */
DEM_HOT_INLINE void DemSQCurvaturesInline_Private(const PetscReal g[3], const PetscReal H[6], PetscReal *Km, PetscReal *Kg)
{
  const PetscReal hxx = H[0], hyy = H[1], hzz = H[2], hxy = H[3], hxz = H[4], hyz = H[5];
  const PetscReal gg = g[0] * g[0] + g[1] * g[1] + g[2] * g[2], gn = PetscSqrtReal(gg);
  PetscReal       gHg, adj, K;

  gHg = hxx * g[0] * g[0] + hyy * g[1] * g[1] + hzz * g[2] * g[2] + 2 * (hxy * g[0] * g[1] + hxz * g[0] * g[2] + hyz * g[1] * g[2]);
  if (Km) *Km = gn > 0 ? PetscAbsReal(gHg - gg * (hxx + hyy + hzz)) / (2 * gg * gn) : 0;
  if (Kg) {
    /* adjugate of the symmetric H */
    const PetscReal A00 = hyy * hzz - hyz * hyz, A11 = hxx * hzz - hxz * hxz, A22 = hxx * hyy - hxy * hxy;
    const PetscReal A01 = hxz * hyz - hxy * hzz, A02 = hxy * hyz - hyy * hxz, A12 = hxy * hxz - hxx * hyz;
    adj = A00 * g[0] * g[0] + A11 * g[1] * g[1] + A22 * g[2] * g[2] + 2 * (A01 * g[0] * g[1] + A02 * g[0] * g[2] + A12 * g[1] * g[2]);
    K   = gg > 0 ? adj / (gg * gg) : 0;
    *Kg = K > 0 ? PetscSqrtReal(K) : 0;
  }
}

/* Hertz radius from the gradient and Hessian of F at a surface point in a frame whose lengths
   are `unit` metres (curvature scales as 1/length): 1/K limited by q R_vol (eq. (38)-(40));
   inline for the colliders, DemSQHertzRadiusFrom_Private is the same */
DEM_HOT_INLINE PetscReal DemSQHertzRadiusFromInline_Private(const DemSQGeom *g, PetscReal s, const PetscReal grad[3], const PetscReal H[6], PetscReal unit)
{
  PetscReal Km = 0, Kg = 0, K, Rmax = s * g->qlimit * g->rvol;

  if (g->curv == DEM_SQ_CURV_VOLUME) return s * g->rvol;
  if (g->same) { /* a separable shape's body-frame Hessian is diagonal (DemSQEval_Private): the
                    same formulas without the off-diagonal terms, which add exact zeros there
                    (bitwise the same result, fewer operations) */
    const PetscReal hxx = H[0], hyy = H[1], hzz = H[2], gg = grad[0] * grad[0] + grad[1] * grad[1] + grad[2] * grad[2];
    if (g->curv == DEM_SQ_CURV_MEAN) {
      const PetscReal gn = PetscSqrtReal(gg), gHg = hxx * grad[0] * grad[0] + hyy * grad[1] * grad[1] + hzz * grad[2] * grad[2];
      Km = gn > 0 ? PetscAbsReal(gHg - gg * (hxx + hyy + hzz)) / (2 * gg * gn) : 0;
    } else {
      const PetscReal adj = (hyy * hzz) * grad[0] * grad[0] + (hxx * hzz) * grad[1] * grad[1] + (hxx * hyy) * grad[2] * grad[2];
      const PetscReal Kc  = gg > 0 ? adj / (gg * gg) : 0;
      Kg = Kc > 0 ? PetscSqrtReal(Kc) : 0;
    }
  } else DemSQCurvaturesInline_Private(grad, H, g->curv == DEM_SQ_CURV_MEAN ? &Km : NULL, g->curv == DEM_SQ_CURV_GAUSS ? &Kg : NULL);
  K = (g->curv == DEM_SQ_CURV_MEAN ? Km : Kg) / unit;
  return (K * Rmax > 1) ? 1.0 / K : Rmax;
}

PETSC_EXTERN PetscErrorCode DemSQGeomSetUp_Private(DemSQGeom *);
/* gk, hk from n1, ia, ib, ic (by DemSQGeomSetUp_Private; for a geometry set up by hand) */
PETSC_EXTERN void           DemSQGeomFactors_Private(DemSQGeom *);
PETSC_EXTERN PetscReal      DemSQBoundingRadius_Private(PetscReal a, PetscReal b, PetscReal c, PetscReal n1, PetscReal n2);
PETSC_EXTERN void           DemSQVolumeInertia_Private(PetscReal a, PetscReal b, PetscReal c, PetscReal n1, PetscReal n2, PetscReal *V, PetscReal I[3]);
/* the point of the unscaled shape surface extreme in body-frame direction d (eq. (31)-(33)) */
PETSC_EXTERN void           DemSQSupport_Private(const DemSQGeom *, const PetscReal d[3], PetscReal x[3]);
/* curvature of the level surface through x with gradient grad and Hessian H (any frame):
   mean |K_mean| (eq. (39)) and sqrt of the Gaussian curvature (eq. (40)) */
PETSC_EXTERN void           DemSQCurvatures_Private(const PetscReal grad[3], const PetscReal H[6], PetscReal *Kmean, PetscReal *Kgauss);
/* Hertz radius of a body at the body-frame point x of the unscaled shape (scale s) */
PETSC_EXTERN PetscReal      DemSQHertzRadius_Private(const DemSQGeom *, PetscReal s, const PetscReal x[3]);
/* the same from the gradient and Hessian of F at the point in a frame of unit `unit` metres */
PETSC_EXTERN PetscReal      DemSQHertzRadiusFrom_Private(const DemSQGeom *, PetscReal s, const PetscReal grad[3], const PetscReal H[6], PetscReal unit);
/* oriented bounding boxes (separating axes): a lower bound on the distance of the bodies,
   > margin when found to be larger than margin, else <= margin (0: boxes overlap) */
PETSC_EXTERN PetscReal      DemSQOBBSeparation_Private(const DemSQBody *A, const DemSQBody *B, PetscReal margin);
/* contact of two superquadric bodies: midway point by Newton (eq. (22)-(25)) from the warm
   start, else by shape continuation (002 steps 1-5); overlap along the contact line (eq.
   (36)-(37)); Hertz radii. warm (may be NULL) is read and updated. */
PETSC_EXTERN void           DemSQCollide_Private(const DemSQBody *A, const DemSQBody *B, DemSQWarm *warm, DemSQResult *res);
/* superquadric_contact.c's superquadric/superquadric (asphere: sphere/superquadric) pair loop
   compiled for AVX2 with FMA (superquadric_contact_v3.c; call only where DemIsaV3()) */
PETSC_INTERN PetscErrorCode   DemCollideSQ_V3_Private(const DemPairBatch *, PetscReal skin, DemContactList *, PetscBool asphere);
/* the unit sphere as a superquadric (a = b = c = 1, n1 = n2 = 2), for sphere-superquadric */
PETSC_EXTERN const DemSQGeom *DemSQUnitSphere_Private(void);
/* geometry and counters of a superquadric DemShape (NULL if the shape is not one) */
PETSC_EXTERN const DemSQGeom *DemShapeSuperquadricGeom_Private(DemShape);
PETSC_EXTERN DemSQStats      *DemShapeSuperquadricStats_Private(DemShape);
/* the warm-start store of a superquadric shape: slot of pair `pair` of the neighbour list for
   the pair of global ids (ga, gb); never NULL */
PETSC_EXTERN PetscErrorCode   DemShapeSuperquadricWarm_Private(DemShape, DemSim, PetscInt pair, int64_t ga, int64_t gb, DemSQWarm **w);
/* the per-body rotation matrices of one collider call (row-major, body -> world, 9 per body;
   valid where stamp[i] == call, a number new at each call) for n bodies (owned and ghosts) */
PETSC_EXTERN PetscErrorCode   DemShapeSuperquadricFrames_Private(DemShape, PetscInt n, PetscReal **R, int64_t **stamp, int64_t *call);
/* the pair prefilter of the colliders: at the first call after a rebuild of the neighbour list
   (or when the body count changed) the poses x, q of the nb bodies become the references; each
   call computes M[i], a bound on how far any point of body i moved since its reference (a body
   now in another slot: infinite). m[p] (p < cap, the pair's index in the list) is for the
   collider to keep a lower bound on the distance of the pair's bodies at the reference poses
   minus the margin (-PETSC_MAX_REAL: none); m[p] - M[a] - M[b] > 0 then shows the pair still
   apart. kind[p] is the collider's note of where m[p] came from. */
PETSC_EXTERN PetscErrorCode   DemShapeSuperquadricPrefilter_Private(DemShape, DemSim, const PetscReal *x, const PetscReal *q, PetscInt nb, const PetscReal **M, PetscReal **m, unsigned char **kind, PetscInt *cap);
/* an index scratch of at least n entries for one collider call (grows, never per step) */
PETSC_EXTERN PetscErrorCode   DemShapeSuperquadricScratch_Private(DemShape, PetscInt n, PetscInt **idx);
/* the store's slots after bringing them up to the current neighbour list, for a fast path
   (slot `pair` is the pair's when pair < cap and its ids w[pair].ga, .gb match; else call the
   above) */
PETSC_EXTERN PetscErrorCode   DemShapeSuperquadricWarmArrays_Private(DemShape, DemSim, PetscInt *cap, DemSQWarm **w);

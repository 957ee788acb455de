/*
  superquadric_contact.c - colliders superquadric/superquadric, sphere/superquadric and
  superquadric/plane (002_a4a9ff6a3ba65368.txt, section "A contact detection algorithm").

  Two convex bodies with shape functions F_a, F_b (world frame, eq. (13), (18)): the midway
  point X of eq. (22) minimizes F_a + F_b subject to F_a = F_b, i.e. solves eq. (24)
      Phi(X, mu) = [ grad F_a(X) + mu^2 grad F_b(X) ;  F_a(X) - F_b(X) ] = 0
  by Newton's method, J dZ = -Phi, Z = (X, mu) (eq. (25)), with a backtracking line search
  (step halved until ||Phi|| decreases, 002 text after eq. (25)). Since f + 1 is homogeneous,
  X is where copies of the two bodies scaled about their centres first touch; for convex
  bodies the solution is unique. Starting points:
    - the previous step's solution of the pair (warm start), carried with both bodies (the
      mean of the point moved with a and the point moved with b), kept by the shape's per-pair
      store (superquadric.c), keyed by the pair's global ids so that it survives rebuilds of
      the neighbour list;
    - for a new pair, or when Newton fails from the warm start, the shape continuation of 002
      steps 1-5: the exact midway point of the volume-equivalent spheres,
      X = (r_b X_a + r_a X_b)/(r_a + r_b), mu^2 = r_b/r_a, then Newton on shapes whose
      half-axes and blockiness go linearly from the spheres' (r, r, r, 2, 2) to the bodies' in
      N steps. N = 4 here; a stage that fails is split in two (down to 1/4096 of the path),
      so the continuation does not depend on a lucky N.
  Failures (no convergence after all that) are counted per shape: thermo.csv column
  sq_failures and the line the shape prints at the end of the run. The contact is then taken
  from the best iterate if it shows an overlap, never silently dropped.
  The overlap is measured along the contact line through X with the direction n of grad F_a
  (eq. (36)): X_a = X + alpha_a n and X_b = X + alpha_b n on the two surfaces, by Newton's
  method in alpha (eq. (37)) from the previous step's alphas, or, for a new pair, applied to
  the gauge (F + 1)^(1/n1) - 1, which has the same zero and is homogeneous of degree one along
  rays (Newton from inside a convex body then converges monotonically in a few steps instead
  of crawling for large n1). gap = alpha_b - alpha_a, the contact point is the middle of
  X_a X_b, and the Hertz radius of each body comes from its curvature at X_a, X_b (eq. (38)-
  (40), R <= q R_vol), reff = R_a R_b / (R_a + R_b).
  Before any solve: pairs whose bounding spheres are apart are skipped; so are pairs whose
  oriented bounding boxes (002 "Neighbor search") are farther apart than the margin, and
  separated pairs with a valid certificate. A certificate is a lower bound on the distance of
  the two bodies at the poses of an earlier step - from the box test, or from a solve: with
  F_a = F_b = F > 0 at X the plane through X normal to n separates the copies scaled by
  (1 + F)^(1/n1) > 1, hence the bodies by (1 - 1/lambda_a) n.(X - x_a) + (1 - 1/lambda_b)
  n.(x_b - X). While the relative motion since then (translation of the centres plus
  r theta for each body's rotation theta) stays below that bound minus the margin, the pair
  cannot touch and is not solved again.
  Superquadric/plane is closed form: the extreme point of the body towards the plane,
  eq. (26)-(33), gap = its height above the plane, contact point in the middle of the overlap,
  reff = the body's Hertz radius at that point (the plane's is infinite).
  Sphere/superquadric runs the same solver with the sphere as a superquadric a = b = c = r,
  n1 = n2 = 2 (002 step 1).

  Internally the solver works in the frame of body a (so a's shape function needs no
  rotation), about the midpoint of the centres, in lengths divided by L = the mean of the two
  bounding radii, so that its tolerances are relative. Newton stops at a relative residual of
  1e-6 (the midway point is then known to ~1e-6 L and the normal to ~1e-6 rad; the gap comes
  from the line solves, to ~1e-10 L, and depends on the midway point only through the small
  angle between the two surfaces, O(overlap / radius of curvature)). A pair at rest in a
  packed bed therefore usually needs no Newton step: its warm start already satisfies the
  tolerance (002, "Settling": Newton iterations are skipped in the static regime).
  The narrow-phase time the shape reports is process CPU time. Each body's rotation matrix is
  computed once per collider call (the shape's per-body cache; a body takes part in several
  pairs). superquadric_contact_v3.c compiles the superquadric/superquadric and sphere/
  superquadric pair loop with the whole solver a second time, for AVX2 with FMA (dem_isa.h);
  the plane collider and DemSQCollide_Private exist only here. In that copy, where both shapes
  are separable of integer blockiness (n1 = n2, k1 = n1 - 2 >= 0; sq4 wrote it for 10, the lead
  made it general), the midway-point system (DemSQSystemIV3) and a warm
  line root's first evaluation take the three coordinates as the lanes of four-wide registers
  (DemSQEvalIV3; b's rotation by R's padded rows and columns, DemSQSide's Rr and Rc): the same
  arithmetic, rounded in another order (sums of three), so that copy's results differ from the
  scalar code's in the last bits; the generic copy is unchanged (superquadric_settle README,
  session 13: 2511 -> 2333 instructions per contact pair per step; inputs that narrower or
  masked stores just wrote are loaded by scalar loads, DemSQLoad3V3).
*/
#include "superquadric.h"
#include "dem_isa.h"
#include <string.h>
#include <time.h>
#if defined(DEM_SQ_CONTACT_V3)
  #include <immintrin.h>
#endif

#if defined(DEM_SQ_CONTACT_V3)
  #define DEM_SQ_V3_ON 1
#else
  #define DEM_SQ_V3_ON 0
#endif
#define DEM_SQ_TOL      1e-6  /* ||Phi|| relative (see DemSQSystem) */
#define DEM_SQ_TOL_MID  1e-6  /* intermediate continuation stages */
#define DEM_SQ_MAXIT    40
#define DEM_SQ_NCONT    4

/* one side of the solve: shape, and the map from solver coordinates X to the unscaled body
   frame, y = kap R^T (X - c). The solver works in the frame of body a (R = identity for a,
   ident set, and R = R_a^T R_b for b), about the midpoint of the centres, in units of L. */
typedef struct {
  const DemSQGeom *g;
  PetscReal        kap, c[3], R[9];
  PetscBool        ident;
#if defined(DEM_SQ_CONTACT_V3)
  PetscReal Rr[12], Rc[12]; /* the AVX2 copy: R's rows and columns, each padded to four (0) */
#endif
} DemSQSide;

/* F and its gradient in solver coordinates at X; Hl (may be NULL): the Hessian (xx, yy, zz,
   xy, xz, yz) of the unscaled shape in the body frame at y = kap R^T (X - c), which
   DemSQSideHess turns into solver coordinates when a Newton step needs it. For a separable
   shape (n1 = n2) the body-frame Hessian costs three products more than the gradient, so the
   system is evaluated once with it and the Jacobian assembled only when a step is taken. */
DEM_HOT_INLINE PetscReal DemSQSideEval(const DemSQSide *S, const PetscReal X[3], PetscReal gw[3], PetscReal Hl[6], PetscReal y[3])
{
  const PetscReal *R = S->R;
  const PetscReal  d0 = X[0] - S->c[0], d1 = X[1] - S->c[1], d2 = X[2] - S->c[2], k = S->kap;
  PetscReal        gl[3], F;

  if (S->ident) {
    y[0] = k * d0, y[1] = k * d1, y[2] = k * d2;
    F    = DemSQEval_Private(S->g, y, gl, Hl);
    gw[0] = k * gl[0], gw[1] = k * gl[1], gw[2] = k * gl[2];
    return F;
  }
  y[0] = k * (R[0] * d0 + R[3] * d1 + R[6] * d2);
  y[1] = k * (R[1] * d0 + R[4] * d1 + R[7] * d2);
  y[2] = k * (R[2] * d0 + R[5] * d1 + R[8] * d2);
  F    = DemSQEval_Private(S->g, y, gl, Hl);
  gw[0] = k * (R[0] * gl[0] + R[1] * gl[1] + R[2] * gl[2]);
  gw[1] = k * (R[3] * gl[0] + R[4] * gl[1] + R[5] * gl[2]);
  gw[2] = k * (R[6] * gl[0] + R[7] * gl[1] + R[8] * gl[2]);
  return F;
}

/* the body-frame Hessian Hl of DemSQSideEval in solver coordinates: kap^2 R Hl R^T */
static inline void DemSQSideHess(const DemSQSide *S, const PetscReal Hl[6], PetscReal Hw[6])
{
  const PetscReal *R = S->R, k2 = S->kap * S->kap;

  if (S->ident) {
    for (int j = 0; j < 6; j++) Hw[j] = k2 * Hl[j];
  } else if (Hl[3] == 0 && Hl[4] == 0 && Hl[5] == 0) { /* R diag(h) R^T */
    const PetscReal h0 = Hl[0], h1 = Hl[1], h2 = Hl[2];
    Hw[0] = k2 * (h0 * R[0] * R[0] + h1 * R[1] * R[1] + h2 * R[2] * R[2]);
    Hw[1] = k2 * (h0 * R[3] * R[3] + h1 * R[4] * R[4] + h2 * R[5] * R[5]);
    Hw[2] = k2 * (h0 * R[6] * R[6] + h1 * R[7] * R[7] + h2 * R[8] * R[8]);
    Hw[3] = k2 * (h0 * R[0] * R[3] + h1 * R[1] * R[4] + h2 * R[2] * R[5]);
    Hw[4] = k2 * (h0 * R[0] * R[6] + h1 * R[1] * R[7] + h2 * R[2] * R[8]);
    Hw[5] = k2 * (h0 * R[3] * R[6] + h1 * R[4] * R[7] + h2 * R[5] * R[8]);
  } else { /* R Hl R^T with Hl = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]] */
    const PetscReal M[9] = {Hl[0], Hl[3], Hl[4], Hl[3], Hl[1], Hl[5], Hl[4], Hl[5], Hl[2]};
    PetscReal       T[9];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) T[3 * i + j] = R[3 * i] * M[j] + R[3 * i + 1] * M[3 + j] + R[3 * i + 2] * M[6 + j];
    Hw[0] = k2 * (T[0] * R[0] + T[1] * R[1] + T[2] * R[2]);
    Hw[1] = k2 * (T[3] * R[3] + T[4] * R[4] + T[5] * R[5]);
    Hw[2] = k2 * (T[6] * R[6] + T[7] * R[7] + T[8] * R[8]);
    Hw[3] = k2 * (T[0] * R[3] + T[1] * R[4] + T[2] * R[5]);
    Hw[4] = k2 * (T[0] * R[6] + T[1] * R[7] + T[2] * R[8]);
    Hw[5] = k2 * (T[3] * R[6] + T[4] * R[7] + T[5] * R[8]);
  }
}

typedef struct {
  PetscReal Phi[4], F[2], ga[3], gb[3], Hl[2][6], merit, rel, na; /* na = |ga| */
  PetscBool hl; /* Hl holds the body-frame Hessians at this point */
} DemSQSys;

/* Phi (eq. (24)) and the convergence measure: |grad F_a + mu^2 grad F_b| relative to
   |grad F_a| + mu^2 |grad F_b|, and |F_a - F_b| relative to (F_a + 1) + (F_b + 1) (both > 0).
   With hess (always for separable shapes, where it is nearly free) the body-frame Hessians are
   kept for DemSQJacobian. */
#if defined(DEM_SQ_CONTACT_V3)
/* v0 + v1 + v2 of a four-wide register (lane 3 not read) */
DEM_ISA_V3 static inline PetscReal DemSQSum3V3(__m256d v)
{
  const __m128d lo = _mm256_castpd256_pd128(v), hi = _mm256_extractf128_pd(v, 1);
  return _mm_cvtsd_f64(_mm_add_sd(_mm_add_sd(lo, _mm_unpackhi_pd(lo, lo)), hi));
}

/* (p[0], p[1], p[2], 0) by scalar loads: a four-wide load of values just written by narrower or
   masked stores would wait for them to retire (no store-to-load forwarding) */
DEM_ISA_V3 static inline __m256d DemSQLoad3V3(const PetscReal *p)
{
  return _mm256_setr_pd(p[0], p[1], p[2], 0);
}

/* v0 r0 + v1 r1 + v2 r2 (the lanes of v broadcast; the order of DemSQFrameRelV3) */
DEM_ISA_V3 static inline __m256d DemSQComb3V3(__m256d v, __m256d r0, __m256d r1, __m256d r2)
{
  return _mm256_fmadd_pd(_mm256_permute4x64_pd(v, 0xaa), r2, _mm256_fmadd_pd(_mm256_permute4x64_pd(v, 0x00), r0, _mm256_mul_pd(_mm256_permute4x64_pd(v, 0x55), r1)));
}

/* u^k lane by lane for an integer k >= 0 (a shape's k1: the same k in every lane), the products
   of DemSQPow (superquadric.h): blockiness 2, 4, 6, 10 written out, any other by squaring */
DEM_ISA_V3 static inline __m256d DemSQPowIV3(__m256d u, int k)
{
  __m256d u2, r, p;

  switch (k) {
  case 0: return _mm256_set1_pd(1.0);
  case 2: return _mm256_mul_pd(u, u);
  case 4: u2 = _mm256_mul_pd(u, u); return _mm256_mul_pd(u2, u2);
  case 8: u2 = _mm256_mul_pd(u, u); u2 = _mm256_mul_pd(u2, u2); return _mm256_mul_pd(u2, u2);
  default: break;
  }
  r = _mm256_set1_pd(1.0), p = u;
  while (k) {
    if (k & 1) r = _mm256_mul_pd(r, p);
    p = _mm256_mul_pd(p, p);
    k >>= 1;
  }
  return r;
}

/* DemSQEval_Private for a separable shape of integer blockiness (n1 = n2, k1 = n1 - 2 >= 0)
   with the three coordinates as lanes (lane 3: 0 in, 0 out): f, the gradient and the body-frame
   Hessian's diagonal */
DEM_ISA_V3 static inline PetscReal DemSQEvalIV3(const DemSQGeom *g, __m256d y, __m256d *grad, __m256d *hd)
{
  const __m256d sgn = _mm256_set1_pd(-0.0), m3 = _mm256_castsi256_pd(_mm256_setr_epi64x(-1, -1, -1, 0));
  const __m256d ii  = _mm256_and_pd(_mm256_loadu_pd(&g->ia), m3);             /* ia, ib, ic, 0 */
  const __m256d gk  = _mm256_and_pd(_mm256_loadu_pd(g->gk), m3), hk = _mm256_and_pd(_mm256_loadu_pd(g->hk), m3);
  const __m256d u = _mm256_mul_pd(_mm256_andnot_pd(sgn, y), ii);
  const __m256d pu = DemSQPowIV3(u, g->k1), U1 = _mm256_mul_pd(pu, u);

  *grad = _mm256_or_pd(_mm256_and_pd(sgn, y), _mm256_mul_pd(gk, U1));
  *hd   = _mm256_mul_pd(hk, pu);
  return DemSQSum3V3(_mm256_mul_pd(U1, u)) - 1;
}

/* DemSQSystem where both shapes are separable of integer blockiness (the AVX2 copy; side 0 in its
   own frame, side 1 rotated by the padded rows Rr and columns Rc of R) */
DEM_ISA_V3 static inline void DemSQSystemIV3(const DemSQSide S[2], const PetscReal Z[4], DemSQSys *s)
{
  const __m256d X = DemSQLoad3V3(Z), mu = _mm256_set1_pd(Z[3]), m2 = _mm256_mul_pd(mu, mu);
  const __m256d ka = _mm256_set1_pd(S[0].kap), kb = _mm256_set1_pd(S[1].kap);
  const __m256d ca = DemSQLoad3V3(S[0].c), cb = DemSQLoad3V3(S[1].c);
  const __m256d db = _mm256_sub_pd(X, cb);
  const __m256d r0 = _mm256_loadu_pd(S[1].Rr), r1 = _mm256_loadu_pd(S[1].Rr + 4), r2 = _mm256_loadu_pd(S[1].Rr + 8);
  const __m256d c0 = _mm256_loadu_pd(S[1].Rc), c1 = _mm256_loadu_pd(S[1].Rc + 4), c2 = _mm256_loadu_pd(S[1].Rc + 8);
  __m256d       gla, glb, ha, hb, ga, gb, Phi, yb;
  PetscReal     Fa, Fb, na, nb, rg, rf, p2;

  Fa = DemSQEvalIV3(S[0].g, _mm256_mul_pd(ka, _mm256_sub_pd(X, ca)), &gla, &ha);
  yb = DemSQComb3V3(db, r0, r1, r2);
  Fb = DemSQEvalIV3(S[1].g, _mm256_mul_pd(kb, yb), &glb, &hb);
  ga  = _mm256_mul_pd(ka, gla);
  gb  = _mm256_mul_pd(kb, DemSQComb3V3(glb, c0, c1, c2));
  Phi = _mm256_fmadd_pd(m2, gb, ga);
  /* four-wide stores in the order of the fields (ga, gb, Hl follow each other): each one's lane 3
     is overwritten by the next; Hl's xx, yy, zz, then the off-diagonal zeros */
  _mm256_storeu_pd(s->ga, ga);
  _mm256_storeu_pd(s->gb, gb);
  _mm256_storeu_pd(s->Hl[0], ha);
  _mm256_storeu_pd(s->Hl[1], hb);
  s->Hl[0][4] = s->Hl[0][5] = s->Hl[1][4] = s->Hl[1][5] = 0;
  _mm256_storeu_pd(s->Phi, Phi);
  s->hl     = PETSC_TRUE;
  s->F[0]   = Fa;
  s->F[1]   = Fb;
  s->Phi[3] = Fa - Fb;
  p2        = DemSQSum3V3(_mm256_mul_pd(Phi, Phi));
  s->merit  = p2 + s->Phi[3] * s->Phi[3];
  na = s->na = PetscSqrtReal(DemSQSum3V3(_mm256_mul_pd(ga, ga)));
  nb        = PetscSqrtReal(DemSQSum3V3(_mm256_mul_pd(gb, gb)));
  rg        = PetscSqrtReal(p2) / (na + Z[3] * Z[3] * nb + 1e-300);
  rf        = PetscAbsReal(s->Phi[3]) / (Fa + Fb + 2);
  s->rel    = PetscMax(rg, rf);
}
#endif

static inline void DemSQSystem(const DemSQSide S[2], const PetscReal Z[4], PetscBool hess, DemSQSys *s)
{
  PetscReal       y[3];
  const PetscReal mu = Z[3], m2 = mu * mu;

#if defined(DEM_SQ_CONTACT_V3)
  if (S[0].g->k1 >= 0 && S[1].g->k1 >= 0 && S[0].g->same && S[1].g->same && S[0].ident && !S[1].ident) {
    DemSQSystemIV3(S, Z, s);
    return;
  }
#endif

  s->hl   = hess || (S[0].g->same && S[1].g->same) ? PETSC_TRUE : PETSC_FALSE;
  s->F[0] = DemSQSideEval(&S[0], Z, s->ga, s->hl ? s->Hl[0] : NULL, y);
  s->F[1] = DemSQSideEval(&S[1], Z, s->gb, s->hl ? s->Hl[1] : NULL, y);
#pragma GCC unroll 3
  for (int j = 0; j < 3; j++) s->Phi[j] = s->ga[j] + m2 * s->gb[j];
  s->Phi[3] = s->F[0] - s->F[1];
  s->merit  = s->Phi[0] * s->Phi[0] + s->Phi[1] * s->Phi[1] + s->Phi[2] * s->Phi[2] + s->Phi[3] * s->Phi[3];
  {
    PetscReal na = s->na = PetscSqrtReal(s->ga[0] * s->ga[0] + s->ga[1] * s->ga[1] + s->ga[2] * s->ga[2]);
    PetscReal nb = PetscSqrtReal(s->gb[0] * s->gb[0] + s->gb[1] * s->gb[1] + s->gb[2] * s->gb[2]);
    PetscReal rg = PetscSqrtReal(s->Phi[0] * s->Phi[0] + s->Phi[1] * s->Phi[1] + s->Phi[2] * s->Phi[2]) / (na + m2 * nb + 1e-300);
    PetscReal rf = PetscAbsReal(s->Phi[3]) / (s->F[0] + s->F[1] + 2);
    s->rel       = PetscMax(rg, rf);
  }
}

/* J of eq. (25) at the point of s (evaluated with its Hessians); J is not part of s, so that
   the system of an accepted iterate is copied without it */
static inline void DemSQJacobian(const DemSQSide S[2], const PetscReal Z[4], const DemSQSys *s, PetscReal J[16])
{
  PetscReal       Ha[6], Hb[6];
  const PetscReal mu = Z[3], m2 = mu * mu;

  DemSQSideHess(&S[0], s->Hl[0], Ha);
  DemSQSideHess(&S[1], s->Hl[1], Hb);
  J[0] = Ha[0] + m2 * Hb[0], J[1] = Ha[3] + m2 * Hb[3], J[2] = Ha[4] + m2 * Hb[4];
  J[4] = J[1], J[5] = Ha[1] + m2 * Hb[1], J[6] = Ha[5] + m2 * Hb[5];
  J[8] = J[2], J[9] = J[6], J[10] = Ha[2] + m2 * Hb[2];
  J[3] = 2 * mu * s->gb[0], J[7] = 2 * mu * s->gb[1], J[11] = 2 * mu * s->gb[2];
  J[12] = s->ga[0] - s->gb[0], J[13] = s->ga[1] - s->gb[1], J[14] = s->ga[2] - s->gb[2], J[15] = 0;
}

/* solves the 4x4 system A x = b by Gaussian elimination with partial pivoting (A
   overwritten, b not); PETSC_FALSE when singular */
static inline PetscBool DemSQSolve4(PetscReal A[16], PetscReal b[4], PetscReal x[4])
{
  PetscReal scale = 0, *row[4] = {A, A + 4, A + 8, A + 12}, rhs[4] = {b[0], b[1], b[2], b[3]};
  int       ix[4] = {0, 1, 2, 3}; /* rows are exchanged through these (the arithmetic is that of
                                     exchanging them in place) */
#pragma GCC unroll 16
  for (int k = 0; k < 16; k++) scale = PetscMax(scale, PetscAbsReal(A[k]));
  if (!(scale > 0)) return PETSC_FALSE;
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) {
    int       p = c;
    PetscReal m = PetscAbsReal(row[c][c]);
#pragma GCC unroll 3
    for (int r = c + 1; r < 4; r++)
      if (PetscAbsReal(row[r][c]) > m) m = PetscAbsReal(row[r][c]), p = r;
    if (!(m > 1e-14 * scale)) return PETSC_FALSE;
    if (p != c) {
      PetscReal *t = row[c];
      int        i = ix[c];
      row[c] = row[p], row[p] = t;
      ix[c] = ix[p], ix[p] = i;
    }
#pragma GCC unroll 3
    for (int r = c + 1; r < 4; r++) {
      PetscReal f = row[r][c] / row[c][c];
      if (f == 0) continue;
#pragma GCC unroll 3
      for (int k = c + 1; k < 4; k++) row[r][k] -= f * row[c][k]; /* column c is not read again */
      rhs[ix[r]] -= f * rhs[ix[c]];
    }
  }
#pragma GCC unroll 4
  for (int r = 3; r >= 0; r--) {
    PetscReal s = rhs[ix[r]];
#pragma GCC unroll 3
    for (int k = r + 1; k < 4; k++) s -= row[r][k] * x[k];
    x[r] = s / row[r][r];
  }
  return PETSC_TRUE;
}

/* Newton with backtracking on ||Phi||^2 from Z, where *sys holds the system (DemSQNewton
   evaluated it); Z holds the last accepted iterate and *sys the system there. The Jacobian is
   assembled only at points from which a step is taken (a trial point of the line search that
   meets the tolerance needs none). */
static PetscBool DemSQNewtonSteps(const DemSQSide S[2], PetscReal Z[4], PetscReal tol, PetscInt *its, DemSQSys *sys)
{
  DemSQSys  buf, *s = sys, *t = &buf;

  for (PetscInt it = 0; it < DEM_SQ_MAXIT; it++) {
    PetscReal dZ[4], rhs[4], lam = 1, J[16];
    PetscBool ok = PETSC_FALSE;
    if (it && s->rel <= tol && !(Z[3] == 0)) break; /* (the caller checked the start point) */
    for (int k = 0; k < 4; k++) rhs[k] = -s->Phi[k];
    if (!s->hl) DemSQSystem(S, Z, PETSC_TRUE, s); /* non-separable shapes: the Hessians now */
    DemSQJacobian(S, Z, s, J);
    if (!DemSQSolve4(J, rhs, dZ)) {
      /* singular: two flat faces (n >= 4: f's Hessian vanishes at a face's centre) aligned,
         the midway point free to slide along them. grad F_a + mu^2 grad F_b is then
         stationary in those directions; a Levenberg-Marquardt term on the X block picks the
         step of least length there (dX = 0 along an exactly flat direction) */
      PetscReal sc = 0;
      DemSQJacobian(S, Z, s, J); /* again: the elimination overwrote it */
      for (int k = 0; k < 16; k++) sc = PetscMax(sc, PetscAbsReal(J[k]));
      J[0] += 1e-8 * sc, J[5] += 1e-8 * sc, J[10] += 1e-8 * sc;
      for (int k = 0; k < 4; k++) rhs[k] = -s->Phi[k];
      if (!DemSQSolve4(J, rhs, dZ)) break;
    }
    for (int ls = 0; ls < 40; ls++) {
      PetscReal Zt[4] = {Z[0] + lam * dZ[0], Z[1] + lam * dZ[1], Z[2] + lam * dZ[2], Z[3] + lam * dZ[3]};
      DemSQSystem(S, Zt, PETSC_FALSE, t);
      if (t->merit < (1 - 1e-4 * lam) * s->merit || t->rel <= tol) {
        DemSQSys *x = s;
        for (int j = 0; j < 4; j++) Z[j] = Zt[j];
        s  = t;
        t  = x;
        ok = PETSC_TRUE;
        break;
      }
      lam *= 0.5;
    }
    (*its)++;
    if (!ok) break;
  }
  if (s != sys) *sys = *s;
  return sys->rel <= tol ? PETSC_TRUE : PETSC_FALSE;
}

/* Newton from Z: the system there, then the steps if it does not meet the tolerance */
DEM_HOT_INLINE PetscBool DemSQNewton(const DemSQSide S[2], PetscReal Z[4], PetscReal tol, PetscInt *its, DemSQSys *sys)
{
  DemSQSystem(S, Z, PETSC_FALSE, sys);
  if (sys->rel <= tol && !(Z[3] == 0)) return PETSC_TRUE; /* a resting contact's warm start, mostly */
  return DemSQNewtonSteps(S, Z, tol, its, sys);
}

/* the stage-t shape of the continuation: half-axes and blockiness between the volume-
   equivalent sphere's (r, r, r, 2, 2) and the body's (002 steps 2-3) */
static void DemSQStageGeom(const DemSQGeom *g, PetscReal t, DemSQGeom *h)
{
  const PetscReal r = g->rvol;

  h->a  = r + t * (g->a - r);
  h->b  = r + t * (g->b - r);
  h->c  = r + t * (g->c - r);
  h->n1 = 2 + t * (g->n1 - 2);
  h->n2 = 2 + t * (g->n2 - 2);
  h->ia   = 1.0 / h->a;
  h->ib   = 1.0 / h->b;
  h->ic   = 1.0 / h->c;
  h->e12  = h->n1 / h->n2 - 2.0;
  h->in1  = 1.0 / h->n1;
  h->k1   = (h->n1 - 2 == PetscFloorReal(h->n1 - 2) && h->n1 - 2 <= 30) ? (int)(h->n1 - 2) : -1;
  h->k2   = (h->n2 - 2 == PetscFloorReal(h->n2 - 2) && h->n2 - 2 <= 30) ? (int)(h->n2 - 2) : -1;
  h->same = h->n1 == h->n2 ? PETSC_TRUE : PETSC_FALSE;
  DemSQGeomFactors_Private(h);
}

/* the root alpha of F(X + alpha n) = 0 where the line leaves the body in direction n (the
   outward side: dF/dalpha > 0 there), by Newton's method (eq. (37)) from alpha0. From a cold
   start (alpha0 = 0) Newton runs on the gauge G = (F + 1)^(1/n1) - 1, which has the same zero
   and grows linearly along rays, so that it converges in a few steps even for large n1; by
   convexity the iterates approach the root monotonically from outside after the first step.
   From a warm start (the previous step's root, close) F itself is used. The line is followed
   in the body frame (y = y0 + alpha kap R^T n), so no rotation is needed per iteration.
   gl, Hl: gradient and Hessian of f in the body frame (unscaled shape) at the last
   evaluation, within the last step of the root. Newton stops after a step below 1e-5
   (solver units): by quadratic convergence the root is then known to ~1e-10 L, far below any
   overlap a contact law acts on. */
DEM_HOT_INLINE PetscReal DemSQLineRoot(const DemSQSide *S, const PetscReal X[3], const PetscReal n[3], PetscReal al, PetscBool gauge, PetscReal gl[4], PetscReal Hl[6])
{
  const PetscReal *R = S->R, k = S->kap;
  PetscReal        y0[4], nl[4], y[3];
  int              it0 = 0, done = 0;

#if defined(DEM_SQ_CONTACT_V3)
  if (S->g->k1 >= 0 && S->g->same && !gauge) { /* the AVX2 copy, integer blockiness, a warm start: the
                                                  set-up and the peeled first iteration below in
                                                  four-wide registers */
    const __m256d kv = _mm256_set1_pd(k);
    const __m256d d = _mm256_sub_pd(DemSQLoad3V3(X), DemSQLoad3V3(S->c)), nv = DemSQLoad3V3(n);
    __m256d       vy0, vnl, g, h;
    PetscReal     F, dF, step;
    if (S->ident) vy0 = _mm256_mul_pd(kv, d), vnl = _mm256_mul_pd(kv, nv);
    else {
      const __m256d r0 = _mm256_loadu_pd(S->Rr), r1 = _mm256_loadu_pd(S->Rr + 4), r2 = _mm256_loadu_pd(S->Rr + 8);
      vy0 = _mm256_mul_pd(kv, DemSQComb3V3(d, r0, r1, r2));
      vnl = _mm256_mul_pd(kv, DemSQComb3V3(nv, r0, r1, r2));
    }
    F  = DemSQEvalIV3(S->g, _mm256_fmadd_pd(_mm256_set1_pd(al), vnl, vy0), &g, &h);
    dF = DemSQSum3V3(_mm256_mul_pd(g, vnl));
    _mm256_storeu_pd(gl, g); /* gl has four */
    _mm256_storeu_pd(Hl, h);
    Hl[4] = Hl[5] = 0;
    step = F / dF;
    if (!(dF > 0) || !(PetscAbsReal(step) < 10)) gauge = PETSC_TRUE, al = 0; /* far off: as below */
    else {
      al -= step;
      if (PetscAbsReal(step) <= 1e-5 * (1 + PetscAbsReal(al))) return al;
    }
    _mm256_storeu_pd(y0, vy0); /* for the loop below, from its second iteration */
    _mm256_storeu_pd(nl, vnl);
    it0 = done = 1;
  }
#endif
  if (!done) {
    {
      const PetscReal d0 = X[0] - S->c[0], d1 = X[1] - S->c[1], d2 = X[2] - S->c[2];
      if (S->ident) {
        y0[0] = k * d0, y0[1] = k * d1, y0[2] = k * d2;
        nl[0] = k * n[0], nl[1] = k * n[1], nl[2] = k * n[2];
      } else {
        y0[0] = k * (R[0] * d0 + R[3] * d1 + R[6] * d2);
        y0[1] = k * (R[1] * d0 + R[4] * d1 + R[7] * d2);
        y0[2] = k * (R[2] * d0 + R[5] * d1 + R[8] * d2);
        nl[0] = k * (R[0] * n[0] + R[3] * n[1] + R[6] * n[2]);
        nl[1] = k * (R[1] * n[0] + R[4] * n[1] + R[7] * n[2]);
        nl[2] = k * (R[2] * n[0] + R[5] * n[1] + R[8] * n[2]);
      }
    }
    if (!gauge) { /* a warm start: the loop's first iteration, peeled (one evaluation settles a
                     resting contact's root) */
      PetscReal F, dF, step;
#pragma GCC unroll 3
      for (int j = 0; j < 3; j++) y[j] = y0[j] + al * nl[j];
      F    = DemSQEval_Private(S->g, y, gl, Hl);
      dF   = gl[0] * nl[0] + gl[1] * nl[1] + gl[2] * nl[2];
      step = F / dF;
      if (!(dF > 0) || !(PetscAbsReal(step) < 10)) gauge = PETSC_TRUE, al = 0; /* far off: as below */
      else {
        al -= step;
        if (PetscAbsReal(step) <= 1e-5 * (1 + PetscAbsReal(al))) return al;
      }
      it0 = 1;
    }
  }
  for (int it = it0; it < 60; it++) {
    PetscReal F, dF, step;
#pragma GCC unroll 3
    for (int j = 0; j < 3; j++) y[j] = y0[j] + al * nl[j];
    F  = DemSQEval_Private(S->g, y, gl, Hl);
    dF = gl[0] * nl[0] + gl[1] * nl[1] + gl[2] * nl[2];
    if (gauge) {
      PetscReal G, Fp = F + 1 > 1e-300 ? F + 1 : 1e-300;
      G    = PetscPowReal(Fp, S->g->in1);
      step = (G - 1) / (S->g->in1 * G / Fp * dF);
    } else step = F / dF;
    if (!(dF > 0) || !(PetscAbsReal(step) < 10)) { /* far off: restart from the midway point on the gauge */
      if (gauge) break;
      gauge = PETSC_TRUE;
      al    = 0;
      continue;
    }
    al -= step;
    /* quadratic convergence: what remains after a step s is of order s^2 */
    if (PetscAbsReal(step) <= 1e-5 * (1 + PetscAbsReal(al))) break;
  }
  return al;
}

#if defined(DEM_SQ_CONTACT_V3)
/* the AVX2 copy's frame of b relative to a (R_a^T R_b) and the centres c_b = R_a^T d,
   c_a = -c_b, as DemSQCollideRot's scalar loops compute them, by rows of three in four-wide
   registers (the last row loaded and stored masked); also R's rows and columns padded to four
   (Rr, Rc) for the four-wide system and line root, in the order in which GCC contracts the
   scalar a b + c d + e f: fma(e, f, fma(a, b, c d)) - bitwise the same results (checked on the
   static n = 10 bed, superquadric_settle README session 12). The target attribute as well as
   the file's pragma: clang ignores the pragma (and then calls it: not always_inline). */
DEM_ISA_V3 static inline void DemSQFrameRelV3(const PetscReal *RA, const PetscReal *RB, const PetscReal d[3], DemSQSide S[2])
{
  const __m256i m3 = _mm256_setr_epi64x(-1, -1, -1, 0);
  const __m256d a0 = _mm256_loadu_pd(RA), a1 = _mm256_loadu_pd(RA + 3), a2 = _mm256_maskload_pd(RA + 6, m3);
  const __m256d b0 = _mm256_loadu_pd(RB), b1 = _mm256_loadu_pd(RB + 3), b2 = _mm256_maskload_pd(RB + 6, m3);
  const __m256d c  = _mm256_fmadd_pd(a2, _mm256_set1_pd(d[2]), _mm256_fmadd_pd(a0, _mm256_set1_pd(d[0]), _mm256_mul_pd(a1, _mm256_set1_pd(d[1]))));

  _mm256_maskstore_pd(S[1].c, m3, c);
  _mm256_maskstore_pd(S[0].c, m3, _mm256_xor_pd(c, _mm256_set1_pd(-0.0)));
  for (int r = 0; r < 3; r++) {
    const __m256d row = _mm256_fmadd_pd(_mm256_set1_pd(RA[6 + r]), b2, _mm256_fmadd_pd(_mm256_set1_pd(RA[r]), b0, _mm256_mul_pd(_mm256_set1_pd(RA[3 + r]), b1)));
    const __m256d col = _mm256_fmadd_pd(_mm256_set1_pd(RB[6 + r]), a2, _mm256_fmadd_pd(_mm256_set1_pd(RB[r]), a0, _mm256_mul_pd(_mm256_set1_pd(RB[3 + r]), a1)));
    _mm256_maskstore_pd(S[1].R + 3 * r, m3, row);
    _mm256_storeu_pd(S[1].Rr + 4 * r, _mm256_blend_pd(row, _mm256_setzero_pd(), 8));
    _mm256_storeu_pd(S[1].Rc + 4 * r, _mm256_blend_pd(col, _mm256_setzero_pd(), 8));
  }
}
#endif

/* DemSQCollide_Private with the rotation matrices passed apart from the bodies (the collider
   passes those of its per-body cache: no copies) */
static void DemSQCollideRot(const DemSQBody *A, const PetscReal *RA, const DemSQBody *B, const PetscReal *RB, DemSQWarm *warm, DemSQResult *res)
{
  const PetscReal L  = 0.5 * (A->s * A->g->rbound + B->s * B->g->rbound), iL = 1.0 / L;
  PetscReal       O[3], Z[4], best[4] = {0, 0, 0, 1}, bestrel = PETSC_MAX_REAL, nv[3], nn, gra[4], grb[4], Ha[6], Hb[6], aa, ab;
  DemSQSide       S[2];
  DemSQSys        sys;
  PetscBool       ok = PETSC_FALSE, warmline = PETSC_FALSE;
  const DemSQBody *Bd[2] = {A, B};

  res->iterations = 0;
  res->stages     = 0;
#pragma GCC unroll 3
  for (int j = 0; j < 3; j++) O[j] = 0.5 * (A->x[j] + B->x[j]);
  /* solver frame: a's axes, origin O (the midpoint of the centres, so that c_a = -c_b), unit L */
  {
    const PetscReal  d[3] = {0.5 * (B->x[0] - A->x[0]) * iL, 0.5 * (B->x[1] - A->x[1]) * iL, 0.5 * (B->x[2] - A->x[2]) * iL};
    S[0].g     = A->g;
    S[1].g     = B->g;
    S[0].kap   = L / A->s;
    S[1].kap   = L / B->s;
    S[0].ident = PETSC_TRUE; /* a's own frame: no rotation */
    S[1].ident = PETSC_FALSE;
#if defined(DEM_SQ_CONTACT_V3)
    DemSQFrameRelV3(RA, RB, d, S);
#else
  #pragma GCC unroll 3
    for (int j = 0; j < 3; j++) S[1].c[j] = RA[j] * d[0] + RA[3 + j] * d[1] + RA[6 + j] * d[2], S[0].c[j] = -S[1].c[j];
  #pragma GCC unroll 3
    for (int r = 0; r < 3; r++)
  #pragma GCC unroll 3
      for (int c = 0; c < 3; c++) S[1].R[3 * r + c] = RA[r] * RB[c] + RA[3 + r] * RB[3 + c] + RA[6 + r] * RB[6 + c];
#endif
  }
  if (warm && warm->valid) { /* the previous solution, carried with body a */
#if defined(DEM_SQ_CONTACT_V3)
    if (warm->hasb) { /* as below, in four-wide registers (b's rotation by R's padded columns) */
      const __m256d m3 = _mm256_castsi256_pd(_mm256_setr_epi64x(-1, -1, -1, 0)), il = _mm256_set1_pd(iL);
      const __m256d za = _mm256_fmadd_pd(_mm256_and_pd(_mm256_loadu_pd(warm->X), m3), il, DemSQLoad3V3(S[0].c));
      const __m256d rx = DemSQComb3V3(_mm256_and_pd(_mm256_loadu_pd(warm->Xb), m3), _mm256_loadu_pd(S[1].Rc), _mm256_loadu_pd(S[1].Rc + 4), _mm256_loadu_pd(S[1].Rc + 8));
      _mm256_storeu_pd(Z, _mm256_mul_pd(_mm256_set1_pd(0.5), _mm256_fmadd_pd(il, rx, _mm256_add_pd(za, DemSQLoad3V3(S[1].c)))));
    } else
#endif
    {
#pragma GCC unroll 3
    for (int j = 0; j < 3; j++) Z[j] = warm->X[j] * iL + S[0].c[j];
    }
    if (!DEM_SQ_V3_ON && warm->hasb) { /* the point moves with both bodies: the mean of the two predictions */
      const PetscReal *R = S[1].R, *xb = warm->Xb;
#pragma GCC unroll 3
      for (int j = 0; j < 3; j++) Z[j] = 0.5 * (Z[j] + S[1].c[j] + iL * (R[3 * j] * xb[0] + R[3 * j + 1] * xb[1] + R[3 * j + 2] * xb[2]));
    }
    Z[3] = warm->mu;
    ok   = DemSQNewton(S, Z, DEM_SQ_TOL, &res->iterations, &sys);
    if (!ok && sys.rel < bestrel) bestrel = sys.rel, best[0] = Z[0], best[1] = Z[1], best[2] = Z[2], best[3] = Z[3];
    warmline = ok && (warm->al[0] != 0 || warm->al[1] != 0) ? PETSC_TRUE : PETSC_FALSE;
  }
  if (!ok) { /* shape continuation, 002 steps 1-5 */
    const PetscReal ra = A->s * A->g->rvol, rb = B->s * B->g->rvol;
    PetscReal       t = 0, h = 1.0 / DEM_SQ_NCONT;
    DemSQGeom       G[2];
    for (int j = 0; j < 3; j++) Z[j] = (rb * S[0].c[j] + ra * S[1].c[j]) / (ra + rb);
    Z[3] = PetscSqrtReal(rb / ra);
    while (t < 1) {
      PetscReal tn = t + h > 1 - 1e-12 ? 1 : t + h, Zt[4] = {Z[0], Z[1], Z[2], Z[3]};
      PetscBool sok;
      DemSQStageGeom(Bd[0]->g, tn, &G[0]);
      DemSQStageGeom(Bd[1]->g, tn, &G[1]);
      S[0].g = &G[0];
      S[1].g = &G[1];
      sok    = DemSQNewton(S, Zt, tn < 1 ? DEM_SQ_TOL_MID : DEM_SQ_TOL, &res->iterations, &sys);
      res->stages++;
      if (sok) {
        for (int j = 0; j < 4; j++) Z[j] = Zt[j];
        t = tn;
        h = PetscMin(2 * h, 1.0 / DEM_SQ_NCONT);
      } else {
        if (tn == 1 && sys.rel < bestrel) bestrel = sys.rel, best[0] = Zt[0], best[1] = Zt[1], best[2] = Zt[2], best[3] = Zt[3];
        h *= 0.5;
        if (h < 1.0 / 4096) break;
      }
    }
    S[0].g = A->g;
    S[1].g = B->g;
    ok     = t >= 1 ? PETSC_TRUE : PETSC_FALSE;
  }
  if (!ok) {
    for (int j = 0; j < 4; j++) Z[j] = best[j];
    DemSQSystem(S, Z, PETSC_FALSE, &sys);
  }
  res->converged = ok;
  res->Fmid      = sys.F[0];
  /* contact line through X along n = grad F_a / |grad F_a| (from a towards b), eq. (36)-(37) */
  nn = sys.na > 0 ? 1 / sys.na : 0; /* |grad F_a|, from the system */
#pragma GCC unroll 3
  for (int j = 0; j < 3; j++) nv[j] = nn > 0 ? sys.ga[j] * nn : (S[1].c[j] - S[0].c[j]);
  aa = DemSQLineRoot(&S[0], Z, nv, warmline ? warm->al[0] : 0, warmline ? PETSC_FALSE : PETSC_TRUE, gra, Ha);
  {
    PetscReal mn[3] = {-nv[0], -nv[1], -nv[2]};
    ab = -DemSQLineRoot(&S[1], Z, mn, warmline ? -warm->al[1] : 0, warmline ? PETSC_FALSE : PETSC_TRUE, grb, Hb);
  }
  res->gap = (ab - aa) * L;
  { /* back to the world frame */
    const PetscReal *R = RA;
    PetscReal        pm[3];
#pragma GCC unroll 3
    for (int j = 0; j < 3; j++) pm[j] = Z[j] + 0.5 * (aa + ab) * nv[j];
#pragma GCC unroll 3
    for (int j = 0; j < 3; j++) {
      res->nrm[j] = -(R[3 * j] * nv[0] + R[3 * j + 1] * nv[1] + R[3 * j + 2] * nv[2]);
      res->p[j]   = O[j] + L * (R[3 * j] * pm[0] + R[3 * j + 1] * pm[1] + R[3 * j + 2] * pm[2]);
    }
  }
  res->Ra = DemSQHertzRadiusFromInline_Private(A->g, A->s, gra, Ha, A->s);
  res->Rb = DemSQHertzRadiusFromInline_Private(B->g, B->s, grb, Hb, B->s);
  /* separated: the plane through X normal to n separates the copies scaled by
     lambda = (1 + F)^(1/n1) > 1, hence the bodies by at least
     (1 - 1/lambda_a) n.(X - x_a) + (1 - 1/lambda_b) n.(x_b - X) */
  res->sep = 0;
  if (ok && sys.F[0] > 0) {
    PetscReal la = PetscPowReal(1 + sys.F[0], A->g->in1), lb = PetscPowReal(1 + sys.F[1], B->g->in1), da = 0, db = 0;
    for (int j = 0; j < 3; j++) da += nv[j] * (Z[j] - S[0].c[j]), db += nv[j] * (S[1].c[j] - Z[j]);
    if (da > 0 && db > 0) res->sep = L * ((1 - 1 / la) * da + (1 - 1 / lb) * db);
  }
  if (warm) {
    if (ok) {
#if defined(DEM_SQ_CONTACT_V3) /* as below, in four-wide registers (R's padded rows) */
      const __m256d lv = _mm256_set1_pd(L), zv = DemSQLoad3V3(Z);
      /* four-wide stores: lane 3 of X's is mu (the next field), Xb's lands on al[0], set below */
      _mm256_storeu_pd(warm->X, _mm256_blend_pd(_mm256_mul_pd(lv, _mm256_sub_pd(zv, DemSQLoad3V3(S[0].c))), _mm256_set1_pd(Z[3]), 8));
      _mm256_storeu_pd(warm->Xb, DemSQComb3V3(_mm256_mul_pd(lv, _mm256_sub_pd(zv, DemSQLoad3V3(S[1].c))), _mm256_loadu_pd(S[1].Rr), _mm256_loadu_pd(S[1].Rr + 4), _mm256_loadu_pd(S[1].Rr + 8)));
#else
      const PetscReal *R = S[1].R;
      PetscReal        d[3] = {L * (Z[0] - S[1].c[0]), L * (Z[1] - S[1].c[1]), L * (Z[2] - S[1].c[2])};
  #pragma GCC unroll 3
      for (int j = 0; j < 3; j++) warm->X[j] = L * (Z[j] - S[0].c[j]);
  #pragma GCC unroll 3
      for (int j = 0; j < 3; j++) warm->Xb[j] = R[j] * d[0] + R[3 + j] * d[1] + R[6 + j] * d[2];
#endif
      warm->hasb = PETSC_TRUE;
      warm->mu    = Z[3];
      warm->al[0] = aa;
      warm->al[1] = ab;
      warm->valid = PETSC_TRUE;
    } else warm->valid = PETSC_FALSE;
    warm->sep = 0;
  }
}

#if !defined(DEM_SQ_CONTACT_V3)
void DemSQCollide_Private(const DemSQBody *A, const DemSQBody *B, DemSQWarm *warm, DemSQResult *res)
{
  DemSQCollideRot(A, A->R, B, B->R, warm, res);
}
#endif

/* ---------------------------------------------------------------- colliders */

static inline void DemSQAppend(DemContactList *out, PetscInt c, PetscInt a, PetscInt b, PetscInt hist, const DemSQResult *r, const PetscReal xa[3], const PetscReal xb[3])
{
  out->a[c]       = a;
  out->b[c]       = b;
  out->feature[c] = 0;
  out->hist[c]    = hist;
  out->gap[c]     = r->gap;
  out->reff[c]    = r->Ra * r->Rb / (r->Ra + r->Rb);
  for (int j = 0; j < 3; j++) {
    out->nrm[3 * c + j] = r->nrm[j];
    out->p[3 * c + j]   = r->p[j];
    out->ra[3 * c + j]  = r->p[j] - xa[j];
    out->rb[3 * c + j]  = r->p[j] - xb[j];
  }
}

/* a bound on how far any point of a body of bounding radius r moved between orientations q0
   and q (rotation angle theta <= pi sin(theta/2), sin(theta/2) = sqrt(1 - (q.q0)^2)) */
static inline PetscReal DemSQRotBound(const PetscReal q[4], const PetscReal q0[4], PetscReal r)
{
  PetscReal c = q[0] * q0[0] + q[1] * q0[1] + q[2] * q0[2] + q[3] * q0[3], s2 = 1 - c * c;
  return s2 > 0 ? PETSC_PI * r * PetscSqrtReal(s2) : 0;
}

/* body i's rotation matrix from the call's per-body cache (computed at its first use in the
   call: a body takes part in several pairs, the quaternion-to-matrix conversion is done once) */
static inline const PetscReal *DemSQFrame(PetscReal *fR, int64_t *fst, int64_t call, PetscInt i, const PetscReal *q)
{
  PetscReal *C = fR + 9 * i;
  if (fst[i] != call) {
    DemQuatToMatrix(q + 4 * i, C);
    fst[i] = call;
  }
  return C;
}

#if defined(DEM_SQ_CONTACT_V3) && !defined(PETSC_USE_64BIT_INDICES)
/* DemSQPrefilterCompact's short loop four pairs at a time (the AVX2 copy): the margins and
   motion bounds gathered, the same subtractions and comparison per lane; the kept pairs' k
   packed to the front of the four (a shuffle per mask) and stored, sel has room for n + 4;
   kind is read as 32-bit words at byte offsets (its array has 4 bytes of padding). Returns
   the first pair not done. The target attribute as well as the file's pragma: clang (the fuzz
   build) ignores the pragma. */
DEM_ISA_V3 static PetscInt DemSQPrefilterCompact4(PetscInt n, const PetscInt *pa, const PetscInt *pb, const PetscInt *pidx, const PetscReal *m, const PetscReal *M, const unsigned char *kind, PetscReal guard, PetscInt *sel, PetscInt *nsel, PetscInt64 *ncert)
{
#define DEM_L(i) 4 * (i), 4 * (i) + 1, 4 * (i) + 2, 4 * (i) + 3
  static const signed char pack[16][16] = {
    {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(0), -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(1), -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(0), DEM_L(1), -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(2), -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(0), DEM_L(2), -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(1), DEM_L(2), -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(0), DEM_L(1), DEM_L(2), -1, -1, -1, -1},
    {DEM_L(3), -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(0), DEM_L(3), -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(1), DEM_L(3), -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(0), DEM_L(1), DEM_L(3), -1, -1, -1, -1},
    {DEM_L(2), DEM_L(3), -1, -1, -1, -1, -1, -1, -1, -1},
    {DEM_L(0), DEM_L(2), DEM_L(3), -1, -1, -1, -1},
    {DEM_L(1), DEM_L(2), DEM_L(3), -1, -1, -1, -1},
    {DEM_L(0), DEM_L(1), DEM_L(2), DEM_L(3)},
  };
#undef DEM_L
  const __m256d gv   = _mm256_set1_pd(guard);
  const __m128i lane = _mm_setr_epi32(0, 1, 2, 3), ff = _mm_set1_epi32(0xff), zero = _mm_setzero_si128();
  PetscInt      k = 0, nt = *nsel;
  PetscInt64    nc = *ncert;

  for (; k + 4 <= n; k += 4) {
    const __m128i vp   = _mm_loadu_si128((const __m128i *)(pidx + k));
    const __m128i va   = _mm_loadu_si128((const __m128i *)(pa + k)), vb = _mm_loadu_si128((const __m128i *)(pb + k));
    const __m256d d    = _mm256_sub_pd(_mm256_sub_pd(_mm256_i32gather_pd(m, vp, 8), _mm256_i32gather_pd(M, va, 8)), _mm256_i32gather_pd(M, vb, 8));
    const int     pass = _mm256_movemask_pd(_mm256_cmp_pd(d, gv, _CMP_GT_OQ)), keep = ~pass & 15;
    const __m128i kd   = _mm_and_si128(_mm_i32gather_epi32((const int *)kind, vp, 1), ff);
    const int     cert = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(kd, zero)));
    const __m128i ks   = _mm_add_epi32(_mm_set1_epi32((int)k), lane);
    _mm_storeu_si128((__m128i *)(sel + nt), _mm_shuffle_epi8(ks, _mm_loadu_si128((const __m128i *)pack[keep])));
    nt += __builtin_popcount((unsigned)keep);
    nc += __builtin_popcount((unsigned)(cert & pass));
  }
  *nsel = nt;
  *ncert = nc;
  return k;
}
#endif

/* the colliders' prefilter over the pairs of a batch (bodies pa[k], pb[k], index pidx[k] in
   the neighbour list): passes over those whose margin m[p] at the reference poses exceeds the
   two bodies' motion bounds M since then by more than guard, and writes the others' k to sel (the selected pairs, to be solved)
   (returns their number). A pair passed over on its separation certificate's margin (kind[p])
   is counted in *ncert when the shape of its body so[k] is own (else it goes to sel: the
   caller counts it for its shape). No branch on the outcome (random in a packed bed); one
   pass before the solves instead of one call per solved pair (superquadric_settle README,
   session 12). Each pair's outcome depends only on its own m[p], which only that pair's
   turn in the pair loop changes, so filtering first is the same as filtering in turn. */
static PetscInt DemSQPrefilterCompact(PetscInt n, const PetscInt *pa, const PetscInt *pb, const PetscInt *pidx, const PetscReal *m, const PetscReal *M, const unsigned char *kind, PetscInt cap, PetscReal guard, const PetscInt *so, const PetscInt *shape, PetscInt own, PetscInt *sel, PetscInt64 *ncert)
{
  PetscInt64 nc = 0;
  PetscInt   nt = 0;

  if (!so) { /* every pair's index below cap and every pair's shape own: the common case */
    PetscInt k = 0;
#if defined(DEM_SQ_CONTACT_V3) && !defined(PETSC_USE_64BIT_INDICES)
    k = DemSQPrefilterCompact4(n, pa, pb, pidx, m, M, kind, guard, sel, &nt, &nc);
#endif
    for (; k < n; k++) {
      const PetscInt p    = pidx[k];
      const int      pass = m[p] - M[pa[k]] - M[pb[k]] > guard;
      sel[nt] = k;
      nt += !pass;
      nc += pass & kind[p]; /* kind is 0 or 1 */
    }
  } else {
    for (PetscInt k = 0; k < n; k++) {
      const PetscInt p    = pidx[k];
      const int      pass = p < cap && m[p] - M[pa[k]] - M[pb[k]] > guard;
      const int      cert = pass && kind[p] != 0, mine = shape[so[k]] == own;
      sel[nt] = k;
      nt += (!pass) | (cert & !mine);
      nc += cert & mine;
    }
  }
  *ncert += nc;
  return nt;
}

/* the pairs of a batch between two bodies that are superquadrics or spheres (sphere first) */
static PetscErrorCode DemCollideSQ(const DemPairBatch *pb, PetscReal skin, DemContactList *out, PetscBool asphere)
{
  DemSim           sim = pb->sim;
  DemBodyStore    *bs;
  const PetscReal *x = pb->state->x, *q = pb->state->q;
  static const PetscReal qid[4] = {1, 0, 0, 0}, zero[3] = {0, 0, 0}, Rid[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  struct timespec  t0, t1;
  DemSQStats      *st0 = NULL, *st = NULL;
  int              lasta = -1, lastb = -1;
  const DemSQGeom *gA = NULL, *gB = NULL;
  DemShape         own = NULL;
  PetscInt         wcap = 0;
  DemSQWarm       *warr = NULL;
  PetscReal       *fR   = NULL;
  int64_t         *fst  = NULL, fcall = 0;
  const PetscReal *pM = NULL;
  PetscReal       *pm = NULL, guard = 0;
  unsigned char   *pk = NULL;
  PetscInt         pcap = 0, nsel;
  PetscInt64       npre = 0;
  DemSQStats      *stpre = NULL;
  PetscInt        *sel = NULL;
  PetscBool        mixed = PETSC_TRUE, allframes = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0); /* CPU time: not inflated by other processes */
  const PetscInt   npair = pb->n, *pa = pb->a, *pbb = pb->b, *pidx = pb->pair;
  const PetscReal *rad = bs->radius, *shift = pb->shift;

  if (pidx && npair > 0) { /* the prefilter's motion bounds and pair margins (of the batch's first owner) */
    const PetscInt nb = bs->n + bs->nghost;
    PetscReal      rmax = 0;
    DemShape       own0 = sim->shapes[bs->shape[asphere ? pbb[0] : pa[0]]];
    PetscCall(DemShapeSuperquadricPrefilter_Private(own0, sim, x, q, nb, &pM, &pm, &pk, &pcap));
    stpre = DemShapeSuperquadricStats_Private(own0); /* the batch's prefilter count goes to this shape */
    for (PetscInt i = 0; i < nb; i++) rmax = PetscMax(rmax, rad[i]);
    /* a skip needs the bound to clear zero by more than the rounding of the tests it stands
       for (the rotation bound's sqrt(1 - c^2) resolves ~1e-8 of r) */
    guard = 1e-6 * rmax;
  }
  /* the prefilter (DemSQPrefilterCompact): a pair shown apart at the reference poses by more
     than the two bodies could have moved since is passed over. A margin comes from a
     bounding-sphere rejection below (then the test below would reject it again) or from the
     pair's current separation certificate (then the certificate test below would skip it:
     its motion since the certificate is at most the motion bounds since the reference at
     both times, the rotation part by the subadditivity of sin(theta/2)); so the prefilter
     changes nothing but the work. */
  nsel = npair;
  if (pcap) {
    PetscInt64     ncert = 0;
    const PetscInt so0   = bs->shape[asphere ? pbb[0] : pa[0]];
    PetscInt       nsq   = 0;
    for (PetscInt i = 0; i < sim->nshape; i++) nsq += DemShapeSuperquadricGeom_Private(sim->shapes[i]) ? 1 : 0;
    PetscCall(DemShapeSuperquadricScratch_Private(sim->shapes[so0], npair + 4, &sel)); /* + 4: DemSQPrefilterCompact's stores of four */
    /* one superquadric shape, and the batch's pair indices (forces.c: nl->pairidx, below
       nl.npairs) below pcap: the short loop, and no pair passed over goes to sel */
    mixed = nsq == 1 && sim->nl.npairs <= pcap ? PETSC_FALSE : PETSC_TRUE;
    nsel = DemSQPrefilterCompact(npair, pa, pbb, pidx, pm, pM, pk, pcap, guard, mixed ? (asphere ? pbb : pa) : NULL, bs->shape, so0, sel, &ncert);
    stpre->skipped += ncert;
    npre = npair - nsel;
  }
  for (PetscInt t = 0; t < nsel; t++) {
    const PetscInt   k = sel ? sel[t] : t;
    PetscInt         a, b, p;
    const PetscReal *qa, *qb, *sh, *RA, *RB;
    DemSQBody        A, B;
    DemSQWarm       *w = NULL;
    DemSQResult      r;
    PetscReal        d2, dx[3], rs;

    a = pa[k], b = pbb[k], p = pidx ? pidx[k] : PETSC_MAX_INT;
    if (mixed && p < pcap && pm[p] - pM[a] - pM[b] > guard) { /* a certificate's of another shape than the batch's first */
      DemSQStats *stso = DemShapeSuperquadricStats_Private(sim->shapes[bs->shape[asphere ? b : a]]);
      stso->skipped++;
      npre++;
      continue;
    }
    sh = shift ? shift + 3 * k : zero;
    rs = rad[a] + rad[b] + skin;
    /* bounding spheres apart: nothing to do (most pairs of the list; the locals above keep
       this test free of reloads through pb and bs). The pair's slot is left as it is: a warm
       start is only a starting point, and a certificate stays valid (it bounds all motion
       since) */
    dx[0] = x[3 * b] + sh[0] - x[3 * a];
    dx[1] = x[3 * b + 1] + sh[1] - x[3 * a + 1];
    dx[2] = x[3 * b + 2] + sh[2] - x[3 * a + 2];
    d2    = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2];
    if (d2 >= rs * rs) {
      if (p < pcap) { /* the margin at the reference poses this shows */
        const PetscReal m = PetscSqrtReal(d2) - rs - pM[a] - pM[b];
        if (m > pm[p]) pm[p] = m, pk[p] = 0;
      }
      continue;
    }
    qa = asphere ? qid : q + 4 * a;
    qb = q + 4 * b;
    if (bs->shape[a] != lasta || bs->shape[b] != lastb) { /* shapes repeat along a batch */
      DemShape sha = sim->shapes[bs->shape[a]], shb = sim->shapes[bs->shape[b]];
      lasta = bs->shape[a];
      lastb = bs->shape[b];
      own   = asphere ? shb : sha;
      st    = DemShapeSuperquadricStats_Private(own);
      gA    = asphere ? DemSQUnitSphere_Private() : DemShapeSuperquadricGeom_Private(sha);
      gB    = DemShapeSuperquadricGeom_Private(shb);
      if (!st0) {
        st0 = st;
        PetscCall(DemShapeSuperquadricFrames_Private(own, bs->n + bs->nghost, &fR, &fst, &fcall));
        if (2 * (nsel - t) >= bs->n + bs->nghost) { /* a packed batch: every body's matrix now, in
                                                       one pass (no cache check per pair) */
          for (PetscInt i = 0; i < bs->n + bs->nghost; i++) DemQuatToMatrix(q + 4 * i, fR + 9 * i), fst[i] = fcall;
          allframes = PETSC_TRUE;
        }
      }
      if (pb->pair) PetscCall(DemShapeSuperquadricWarmArrays_Private(own, sim, &wcap, &warr));
    }
    A.g = gA;
    B.g = gB;
    A.s = bs->radius[a] * gA->irbound;
    B.s = bs->radius[b] * gB->irbound;
    for (int j = 0; j < 3; j++) {
      A.x[j] = x[3 * a + j];
      B.x[j] = x[3 * b + j] + sh[j];
    }
    if (pidx) {
      if (p < wcap && warr[p].ga == bs->gid[a] && warr[p].gb == bs->gid[b]) w = &warr[p];
      else {
        PetscCall(DemShapeSuperquadricWarm_Private(own, sim, p, bs->gid[a], bs->gid[b], &w));
        PetscCall(DemShapeSuperquadricWarmArrays_Private(own, sim, &wcap, &warr)); /* may have grown */
      }
    }
    if (w && w->sep > skin) { /* still certainly farther apart than skin since the last solve? */
      PetscReal m0 = dx[0] - w->dx0[0], m1 = dx[1] - w->dx0[1], m2 = dx[2] - w->dx0[2], room = w->sep - skin;
      PetscReal mv = m0 * m0 + m1 * m1 + m2 * m2;
      if (mv < room * room) {
        mv = PetscSqrtReal(mv) + DemSQRotBound(qa, w->qa0, bs->radius[a]) + DemSQRotBound(qb, w->qb0, bs->radius[b]);
        if (mv < room) {
          st->skipped++;
          continue;
        }
      }
    }
    RA = asphere ? Rid : allframes ? fR + 9 * a : DemSQFrame(fR, fst, fcall, a, q);
    RB = allframes ? fR + 9 * b : DemSQFrame(fR, fst, fcall, b, q);
    if (!(w && w->valid)) { /* a pair solved last time is close: no box test */
      PetscReal sep;
      memcpy(A.R, RA, 9 * sizeof(PetscReal));
      memcpy(B.R, RB, 9 * sizeof(PetscReal));
      sep = DemSQOBBSeparation_Private(&A, &B, skin);
      if (sep > skin) { /* the boxes are apart: a certificate as well */
        if (w) {
          w->valid = PETSC_FALSE;
          w->sep   = sep;
          for (int j = 0; j < 3; j++) w->dx0[j] = dx[j];
          for (int j = 0; j < 4; j++) w->qa0[j] = qa[j], w->qb0[j] = qb[j];
        }
        if (p < pcap) pm[p] = sep - skin - pM[a] - pM[b], pk[p] = 1;
        st->obbreject++;
        continue;
      }
    }
    {
      PetscBool wasvalid = (w && w->valid) ? PETSC_TRUE : PETSC_FALSE;
      DemSQCollideRot(&A, RA, &B, RB, w, &r);
      st->solves++;
      st->iterations += r.iterations;
      if (r.stages) st->continuations++;
      else if (wasvalid) st->warm++;
      if (w && r.sep > skin) { /* the certificate for the next steps */
        w->sep = r.sep;
        for (int j = 0; j < 3; j++) w->dx0[j] = dx[j];
        for (int j = 0; j < 4; j++) w->qa0[j] = qa[j], w->qb0[j] = qb[j];
      }
      if (p < pcap) { /* the margin follows the pair's certificate (a solve replaced it) */
        if (w && r.sep > skin) pm[p] = r.sep - skin - pM[a] - pM[b], pk[p] = 1;
        else pm[p] = -PETSC_MAX_REAL, pk[p] = 0;
      }
      if (!r.converged) {
        st->failures++;
        if (!(r.Fmid < 0)) continue; /* counted; no overlap to report from the best iterate */
      }
    }
    if (r.gap < skin) { /* appended in place (as sphere.c's pair loop): DemSQAppend sets every column */
      if (out->n == out->cap) PetscCall(DemContactListReserve(out, PetscMax(64, 2 * out->cap)));
      DemSQAppend(out, out->n++, a, b, pb->pair ? pb->pair[k] : -1, &r, A.x, B.x);
    }
  }
  if (stpre) stpre->prefiltered += npre;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
  if (st0) st0->seconds += (PetscLogDouble)(t1.tv_sec - t0.tv_sec) + 1e-9 * (PetscLogDouble)(t1.tv_nsec - t0.tv_nsec);
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(DEM_SQ_CONTACT_V3)
/* superquadric_contact_v3.c: the pair loop above compiled for AVX2 with FMA */
PetscErrorCode DemCollideSQ_V3_Private(const DemPairBatch *pb, PetscReal skin, DemContactList *out, PetscBool asphere)
{
  return DemCollideSQ(pb, skin, out, asphere);
}
#else
/* the pair loop of this file, or its copy compiled for AVX2 with FMA where the processor has
   them (dem_isa.h: the results differ in the last bits; MMDEM_ISA=generic for this copy) */
static PetscErrorCode DemCollideSQIsa(const DemPairBatch *pb, PetscReal skin, DemContactList *out, PetscBool asphere)
{
  #if DEM_HAVE_ISA_V3
  if (DemIsaV3()) return DemCollideSQ_V3_Private(pb, skin, out, asphere);
  #endif
  return DemCollideSQ(pb, skin, out, asphere);
}

PETSC_EXTERN PetscErrorCode DemCollide_SuperquadricSuperquadric(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
PetscErrorCode DemCollide_SuperquadricSuperquadric(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  PetscFunctionBegin;
  PetscCall(DemCollideSQIsa(pb, skin, out, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "superquadric/superquadric", DemCollide_SuperquadricSuperquadric)

PETSC_EXTERN PetscErrorCode DemCollide_SphereSuperquadric(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
PetscErrorCode DemCollide_SphereSuperquadric(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  PetscFunctionBegin;
  PetscCall(DemCollideSQIsa(pb, skin, out, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "sphere/superquadric", DemCollide_SphereSuperquadric)

/*
  Superquadric (a) against plane (b), eq. (26)-(33): with n the plane's world normal (towards
  the free side), the extreme point of a towards the plane is the support point of a in the
  direction -n; gap = its height above the plane.
*/
PETSC_EXTERN PetscErrorCode DemCollide_SuperquadricPlane(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
PetscErrorCode DemCollide_SuperquadricPlane(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  DemSim           sim = pb->sim;
  DemBodyStore    *bs;
  const PetscReal *x = pb->state->x, *q = pb->state->q;
  PetscReal        n[3] = {0, 0, 0};
  PetscInt         lastb = -1;

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(sim, &bs));
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt   a = pb->a[k], b = pb->b[k];
    const DemSQGeom *g;
    PetscReal        n0[3], d[3], y[3], ps[3], h, s;
    PetscInt         c;
    if (b != lastb) { /* pairs of one wall come together: its world normal once */
      PetscCall(DemPlaneGetNormal(sim->shapes[bs->shape[b]], n0));
      DemQuatRotate(&q[4 * b], n0, n);
      lastb = b;
    }
    /* bounding sphere first: most bodies are far from most walls */
    h = (x[3 * a] - x[3 * b]) * n[0] + (x[3 * a + 1] - x[3 * b + 1]) * n[1] + (x[3 * a + 2] - x[3 * b + 2]) * n[2];
    if (h - bs->radius[a] >= skin) continue;
    g = DemShapeSuperquadricGeom_Private(sim->shapes[bs->shape[a]]);
    s = bs->radius[a] * g->irbound;
    for (int j = 0; j < 3; j++) n0[j] = -n[j];
    DemQuatRotateInv(&q[4 * a], n0, d);
    DemSQSupport_Private(g, d, y);
    for (int j = 0; j < 3; j++) y[j] *= s;
    DemQuatRotate(&q[4 * a], y, ps);
    for (int j = 0; j < 3; j++) ps[j] += x[3 * a + j];
    h = (ps[0] - x[3 * b]) * n[0] + (ps[1] - x[3 * b + 1]) * n[1] + (ps[2] - x[3 * b + 2]) * n[2];
    if (h >= skin) continue;
    PetscCall(DemContactListAppend(out, &c));
    out->a[c]       = a;
    out->b[c]       = b;
    out->feature[c] = 0;
    out->hist[c]    = pb->pair ? pb->pair[k] : -1;
    out->gap[c]     = h;
    for (int j = 0; j < 3; j++) y[j] /= s;
    out->reff[c] = DemSQHertzRadius_Private(g, s, y);
    for (int j = 0; j < 3; j++) {
      out->nrm[3 * c + j] = n[j];
      out->p[3 * c + j]   = ps[j] - 0.5 * h * n[j];
      out->ra[3 * c + j]  = out->p[3 * c + j] - x[3 * a + j];
      out->rb[3 * c + j]  = out->p[3 * c + j] - x[3 * b + j];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "superquadric/plane", DemCollide_SuperquadricPlane)
#endif

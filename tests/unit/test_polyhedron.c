/*
  test_polyhedron.c - unit test of the polyhedron kernels (src/shapes/polyhedron.h,
  polyhedron.c) and the barrier_hybrid law (src/contact/barrier_hybrid.c),
  000_c57329b1a40312e0.txt.

  Every expected value is computed here independently of the code under test:
    - the degenerate local contact problems, eq. (34)-(36), on 10^5 random cases each
      (features with coordinates in [-1, 1]^3): the minimum distance between the two features
      by brute force (golden-section search over one parameter, the other one, if any, by
      clamped projection, which needs no linear solve). When the closed-form parameters are in
      the valid range (000 section 2.4.4, Fig. 1) the closed-form distance must equal the
      brute-force minimum within 1e-10 and the points within 1e-6; when they are not, the
      brute-force minimiser must lie on the boundary of the parameter range (the closed-form
      stationary point is then not the closest pair);
    - vertex-vertex: the distance |x_A - x_B| (no unknown);
    - mass properties (divergence theorem): a box a x b x c (m (b^2 + c^2)/12, ...) and the
      same box translated and rotated (centre and principal moments recovered); a regular
      tetrahedron (V = l^3/(6 sqrt 2), I = m l^2/20 about every axis through the centre);
    - refusal of open, non-manifold and inverted surfaces;
    - barrier_hybrid, eq. (49)-(51): continuity of fn and dfn/dg at the switch gap f g_bar,
      eq. (51)'s eps2 and c2 recomputed here, stored energy = the integral of fn (Simpson,
      2000 intervals per part), damping eq. (52)-(53), friction stick and slip (eq. (55)-(56)),
      the friction history in the contact's slot (eq. (43)-(44), (57)-(58): g_t = vt dt after a
      sticking step, accumulated by the next, |eps_t g_t| = mu_d fn and the flag after sliding,
      untouched by trial evaluations, zeroed beyond g_bar).
  Random numbers: splitmix64 with a fixed seed (no rand()).
*/
#include "../../src/shapes/polyhedron.h"
#include "dem_test.h"
#include <unistd.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double   Rand(void) /* uniform in [-1, 1) */
{
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return 2.0 * ((double)(z >> 11) / 9007199254740992.0) - 1.0;
}

static double Dist2(const double a[3], const double b[3])
{
  return (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]);
}

/* closest point of segment q0 q1 to p by clamped projection: parameter in [0, 1] */
static double SegClamp(const double p[3], const double q0[3], const double q1[3], double out[3])
{
  double w[3], a = 0, b = 0, t;
  for (int j = 0; j < 3; j++) w[j] = q1[j] - q0[j], a += w[j] * w[j], b += w[j] * (p[j] - q0[j]);
  t = b / a;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  for (int j = 0; j < 3; j++) out[j] = q0[j] + t * w[j];
  return t;
}

/* golden-section minimum of a unimodal function on [lo, hi] */
typedef double (*Fn1)(double, void *);
static double Golden(Fn1 f, void *ctx, double lo, double hi, double *xmin)
{
  const double r = 0.6180339887498949;
  double       a = lo, b = hi, c = b - r * (b - a), d = a + r * (b - a), fc = f(c, ctx), fd = f(d, ctx);
  for (int it = 0; it < 200 && b - a > 1e-15; it++) {
    if (fc < fd) b = d, d = c, fd = fc, c = b - r * (b - a), fc = f(c, ctx);
    else a = c, c = d, fc = fd, d = a + r * (b - a), fd = f(d, ctx);
  }
  {
    double fa = f(lo, ctx), fb = f(hi, ctx), fm = fc < fd ? fc : fd, xm = fc < fd ? c : d;
    if (fa < fm) fm = fa, xm = lo;
    if (fb < fm) fm = fb, xm = hi;
    *xmin = xm;
    return fm;
  }
}

/* vertex-face: the triangle x1 x2 x3 as x1 + s (x2 - x1) + t (x3 - x1), s in [0, 1],
   t in [0, 1 - s]; for fixed s the points form a segment, minimised by clamped projection */
typedef struct {
  const double *p, *x1, *x2, *x3;
} VFCtx;
static double VFInner(double s, void *c)
{
  VFCtx *v = (VFCtx *)c;
  double a[3], b[3], q[3];
  for (int j = 0; j < 3; j++) a[j] = v->x1[j] + s * (v->x2[j] - v->x1[j]), b[j] = v->x1[j] + s * (v->x2[j] - v->x1[j]) + (1 - s) * (v->x3[j] - v->x1[j]);
  SegClamp(v->p, a, b, q);
  return Dist2(v->p, q);
}
/* edge-edge: for fixed s on p0 p1, the closest point of q0 q1 by clamped projection */
typedef struct {
  const double *p0, *p1, *q0, *q1;
} EECtx;
static double EEInner(double s, void *c)
{
  EECtx *e = (EECtx *)c;
  double p[3], q[3];
  for (int j = 0; j < 3; j++) p[j] = e->p0[j] + s * (e->p1[j] - e->p0[j]);
  SegClamp(p, e->q0, e->q1, q);
  return Dist2(p, q);
}
typedef struct {
  const double *p, *q0, *q1;
} VECtx;
static double VEf(double t, void *c)
{
  VECtx *e = (VECtx *)c;
  double q[3];
  for (int j = 0; j < 3; j++) q[j] = e->q0[j] + t * (e->q1[j] - e->q0[j]);
  return Dist2(e->p, q);
}

static void RandPoint(double x[3])
{
  for (int j = 0; j < 3; j++) x[j] = Rand();
}

static PetscErrorCode TestLCP(PetscInt ncase)
{
  double errVF = 0, errEE = 0, errVE = 0, errVV = 0, perrVF = 0, perrEE = 0, perrVE = 0;
  long   validVF = 0, validEE = 0, validVE = 0, badVF = 0, badEE = 0, badVE = 0;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < ncase; k++) {
    double p[3], x1[3], x2[3], x3[3], zeta, theta, dist, smin, dmin;
    RandPoint(p), RandPoint(x1), RandPoint(x2), RandPoint(x3);
    DemPolyLCPVertexFace(p, x1, x2, x3, &zeta, &theta, &dist);
    {
      VFCtx c = {p, x1, x2, x3};
      double q[3], a[3], b[3], qb[3], N[3] = {-0.5 * (zeta + theta), 0.5 * (1 + zeta), 0.5 * (1 + theta)};
      dmin = sqrt(Golden(VFInner, &c, 0, 1, &smin));
      for (int j = 0; j < 3; j++) a[j] = x1[j] + smin * (x2[j] - x1[j]), b[j] = a[j] + (1 - smin) * (x3[j] - x1[j]);
      SegClamp(p, a, b, qb);
      if (N[0] > 1e-6 && N[1] > 1e-6 && N[2] > 1e-6) {
        validVF++;
        DemPolyFacePoint(x1, x2, x3, zeta, theta, q);
        errVF  = fmax(errVF, fabs(fabs(dist) - dmin));
        errVF  = fmax(errVF, fabs(sqrt(Dist2(p, q)) - dmin));
        perrVF = fmax(perrVF, sqrt(Dist2(q, qb)));
      } else if (N[0] < -1e-6 || N[1] < -1e-6 || N[2] < -1e-6) {
        /* brute-force minimiser on the boundary: some barycentric coordinate of qb is ~0 */
        double e1[3], e2[3], d[3], a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0, l2, l3, det;
        for (int j = 0; j < 3; j++) e1[j] = x2[j] - x1[j], e2[j] = x3[j] - x1[j], d[j] = qb[j] - x1[j];
        for (int j = 0; j < 3; j++) a11 += e1[j] * e1[j], a12 += e1[j] * e2[j], a22 += e2[j] * e2[j], b1 += e1[j] * d[j], b2 += e2[j] * d[j];
        det = a11 * a22 - a12 * a12;
        l2  = (a22 * b1 - a12 * b2) / det;
        l3  = (a11 * b2 - a12 * b1) / det;
        if (fmin(fmin(l2, l3), 1 - l2 - l3) > 1e-6 && det > 1e-6) badVF++;
      }
    }
    {
      double p0[3], p1[3], q0[3], q1[3], za, zb;
      RandPoint(p0), RandPoint(p1), RandPoint(q0), RandPoint(q1);
      if (DemPolyLCPEdgeEdge(p0, p1, q0, q1, &za, &zb)) {
        EECtx  c = {p0, p1, q0, q1};
        double pa[3], pb[3], pbr[3], pq[3];
        dmin = sqrt(Golden(EEInner, &c, 0, 1, &smin));
        for (int j = 0; j < 3; j++) pq[j] = p0[j] + smin * (p1[j] - p0[j]);
        SegClamp(pq, q0, q1, pbr);
        if (za > -1 + 1e-6 && za < 1 - 1e-6 && zb > -1 + 1e-6 && zb < 1 - 1e-6) {
          validEE++;
          DemPolyEdgePoint(p0, p1, za, pa);
          DemPolyEdgePoint(q0, q1, zb, pb);
          errEE  = fmax(errEE, fabs(sqrt(Dist2(pa, pb)) - dmin));
          perrEE = fmax(perrEE, fmax(sqrt(Dist2(pa, pq)), sqrt(Dist2(pb, pbr))));
        } else if (za < -1 - 1e-6 || za > 1 + 1e-6 || zb < -1 - 1e-6 || zb > 1 + 1e-6) {
          double t = SegClamp(pq, q0, q1, pbr);
          if (smin > 1e-6 && smin < 1 - 1e-6 && t > 1e-6 && t < 1 - 1e-6) badEE++;
        }
      }
    }
    {
      double q0[3], q1[3], z, tmin;
      VECtx  c = {p, q0, q1};
      RandPoint(q0), RandPoint(q1);
      DemPolyLCPVertexEdge(p, q0, q1, &z);
      dmin = sqrt(Golden(VEf, &c, 0, 1, &tmin));
      if (z > -1 + 1e-6 && z < 1 - 1e-6) {
        double q[3];
        validVE++;
        DemPolyEdgePoint(q0, q1, z, q);
        errVE  = fmax(errVE, fabs(sqrt(Dist2(p, q)) - dmin));
        perrVE = fmax(perrVE, fabs(0.5 * (1 + z) - tmin) * sqrt(Dist2(q0, q1)));
      } else if ((z < -1 - 1e-6 || z > 1 + 1e-6) && tmin > 1e-6 && tmin < 1 - 1e-6) badVE++;
      /* vertex-vertex: no unknown; the distance is the norm of the gap vector eq. (29) */
      {
        double g[3] = {p[0] - q0[0], p[1] - q0[1], p[2] - q0[2]};
        errVV = fmax(errVV, fabs(sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) - sqrt(Dist2(p, q0))));
      }
    }
  }
  printf("# LCP over %d cases: valid vertex-face %ld, edge-edge %ld, vertex-edge %ld; max distance errors %.3g %.3g %.3g %.3g\n", (int)ncase, validVF, validEE, validVE, errVF, errEE, errVE, errVV);
  DEM_CHECK("lcp vertex-face: distance = brute-force minimum within 1e-10 (valid cases)", errVF <= 1e-10 && validVF > ncase / 20, "max error %.3g over %ld valid", errVF, validVF);
  DEM_CHECK("lcp vertex-face: point = brute-force closest point within 1e-6", perrVF <= 1e-6, "max %.3g", perrVF);
  DEM_CHECK("lcp vertex-face: outside the valid range the closest point is on the boundary", badVF == 0, "%ld cases with an interior brute-force minimiser", badVF);
  DEM_CHECK("lcp edge-edge: distance = brute-force minimum within 1e-10 (valid cases)", errEE <= 1e-10 && validEE > ncase / 20, "max error %.3g over %ld valid", errEE, validEE);
  DEM_CHECK("lcp edge-edge: points = brute-force closest points within 1e-6", perrEE <= 1e-6, "max %.3g", perrEE);
  DEM_CHECK("lcp edge-edge: outside the valid range the closest points are on the boundary", badEE == 0, "%ld cases", badEE);
  DEM_CHECK("lcp vertex-edge: distance = brute-force minimum within 1e-10 (valid cases)", errVE <= 1e-10 && validVE > ncase / 20, "max error %.3g over %ld valid", errVE, validVE);
  DEM_CHECK("lcp vertex-edge: point = brute-force closest point within 1e-6", perrVE <= 1e-6, "max %.3g", perrVE);
  DEM_CHECK("lcp vertex-edge: outside the valid range the closest point is an end", badVE == 0, "%ld cases", badVE);
  DEM_CHECK("lcp vertex-vertex: distance = |x_A - x_B| within 1e-10", errVV <= 1e-10, "max %.3g", errVV);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const PetscInt BoxT[36] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4, 2, 3, 7, 2, 7, 6, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5};

static void BoxVerts(const double L[3], double x[24])
{
  for (int i = 0; i < 8; i++) {
    int sx = (i == 1 || i == 2 || i == 5 || i == 6), sy = (i == 2 || i == 3 || i == 6 || i == 7), sz = i >= 4;
    x[3 * i]     = (sx ? 0.5 : -0.5) * L[0];
    x[3 * i + 1] = (sy ? 0.5 : -0.5) * L[1];
    x[3 * i + 2] = (sz ? 0.5 : -0.5) * L[2];
  }
}

static int CmpD(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static PetscErrorCode TestMass(void)
{
  const double L[3] = {0.3, 0.5, 0.7};
  double       x[24], y[24], com[3], R0[9], vol, J[9], Iref[3], Ig[3];
  DemPolyGeom  g;
  const double c0[3] = {1.5, -2.0, 0.25};
  double       Rm[9], q[4] = {0.8, 0.2, -0.4, 0.4};

  PetscFunctionBegin;
  BoxVerts(L, x);
  PetscCall(PetscMemzero(&g, sizeof(g)));
  DemPolyMassProperties_Private(8, x, 12, BoxT, &vol, com, J);
  DEM_CHECK_REL("mass: box volume a b c", vol, L[0] * L[1] * L[2], 1e-13);
  DEM_CHECK_REL("mass: box Ixx = V (b^2 + c^2)/12", J[0], vol * (L[1] * L[1] + L[2] * L[2]) / 12, 1e-12);
  DEM_CHECK_REL("mass: box Izz = V (a^2 + b^2)/12", J[8], vol * (L[0] * L[0] + L[1] * L[1]) / 12, 1e-12);
  DEM_CHECK_ABS("mass: box products of inertia vanish", fabs(J[1]) + fabs(J[2]) + fabs(J[5]), 0, 1e-15);
  /* the box moved and turned: centre and principal moments recovered */
  DemQuatNormalize(q);
  DemQuatToMatrix(q, Rm);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 3; j++) y[3 * i + j] = c0[j] + Rm[3 * j] * x[3 * i] + Rm[3 * j + 1] * x[3 * i + 1] + Rm[3 * j + 2] * x[3 * i + 2];
  PetscCall(DemPolyGeomBuild_Private(8, y, 12, BoxT, "test box", &g, com, R0));
  DEM_CHECK_ABS("mass: turned box centre recovered", sqrt(Dist2(com, c0)), 0, 1e-13);
  Iref[0] = vol * (L[1] * L[1] + L[2] * L[2]) / 12, Iref[1] = vol * (L[0] * L[0] + L[2] * L[2]) / 12, Iref[2] = vol * (L[0] * L[0] + L[1] * L[1]) / 12;
  for (int j = 0; j < 3; j++) Ig[j] = g.Iunit[j];
  qsort(Ig, 3, sizeof(double), CmpD);
  qsort(Iref, 3, sizeof(double), CmpD);
  DEM_CHECK("mass: turned box principal moments recovered (1e-12)", fabs(Ig[0] - Iref[0]) < 1e-12 * Iref[2] && fabs(Ig[1] - Iref[1]) < 1e-12 * Iref[2] && fabs(Ig[2] - Iref[2]) < 1e-12 * Iref[2], "got %g %g %g expected %g %g %g", Ig[0], Ig[1], Ig[2], Iref[0], Iref[1], Iref[2]);
  DEM_CHECK_REL("mass: bounding radius = half diagonal", g.rbound, 0.5 * sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]), 1e-13);
  {
    PetscInt nflat = 0, nconc = 0;
    for (PetscInt e = 0; e < g.ne; e++) nflat += g.eflat[e], nconc += g.econcave[e];
    DEM_CHECK("topology: box has 18 edges, 6 of them face diagonals, none re-entrant", g.ne == 18 && nflat == 6 && nconc == 0, "ne %d flat %d concave %d", (int)g.ne, (int)nflat, (int)nconc);
  }
  PetscCall(DemPolyGeomDestroy_Private(&g));
  /* regular tetrahedron of edge l: V = l^3 / (6 sqrt 2), I = m l^2 / 20 */
  {
    const double   l = 0.8, s = l / (2 * sqrt(2.0));
    double         tv[12] = {s, s, s, s, -s, -s, -s, s, -s, -s, -s, s};
    const PetscInt tt[12] = {0, 1, 2, 0, 3, 1, 0, 2, 3, 1, 3, 2};
    DemPolyMassProperties_Private(4, tv, 4, tt, &vol, com, J);
    DEM_CHECK_REL("mass: regular tetrahedron volume l^3/(6 sqrt 2)", vol, l * l * l / (6 * sqrt(2.0)), 1e-13);
    DEM_CHECK_REL("mass: regular tetrahedron I = V l^2 / 20", J[0], vol * l * l / 20, 1e-12);
    DEM_CHECK_REL("mass: regular tetrahedron Iyy = Ixx", J[4], J[0], 1e-12);
  }
  /* refusals */
  {
    PetscErrorCode ierr;
    PetscInt       inv[36];
    for (int k = 0; k < 12; k++) inv[3 * k] = BoxT[3 * k], inv[3 * k + 1] = BoxT[3 * k + 2], inv[3 * k + 2] = BoxT[3 * k + 1];
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    PetscCall(PetscMemzero(&g, sizeof(g)));
    ierr = DemPolyGeomBuild_Private(8, x, 11, BoxT, "open box", &g, com, R0);
    DEM_CHECK("refusal: open surface (one triangle missing)", ierr != 0, "accepted");
    PetscCall(PetscMemzero(&g, sizeof(g)));
    ierr = DemPolyGeomBuild_Private(8, x, 12, inv, "inverted box", &g, com, R0);
    DEM_CHECK("refusal: inverted surface (normals inwards)", ierr != 0, "accepted");
    {
      PetscInt bad[36];
      for (int k = 0; k < 36; k++) bad[k] = BoxT[k];
      bad[1] = BoxT[2], bad[2] = BoxT[1]; /* one triangle flipped */
      PetscCall(PetscMemzero(&g, sizeof(g)));
      ierr = DemPolyGeomBuild_Private(8, x, 12, bad, "inconsistent box", &g, com, R0);
      DEM_CHECK("refusal: inconsistently oriented triangle", ierr != 0, "accepted");
    }
    {
      PetscInt two[72];
      double   x2[48];
      for (int k = 0; k < 36; k++) two[k] = BoxT[k], two[36 + k] = BoxT[k];
      for (int k = 0; k < 24; k++) x2[k] = x[k], x2[24 + k] = x[k];
      PetscCall(PetscMemzero(&g, sizeof(g)));
      ierr = DemPolyGeomBuild_Private(16, x2, 24, two, "doubled box", &g, com, R0);
      DEM_CHECK("refusal: non-manifold surface (edges in four triangles)", ierr != 0, "accepted");
    }
    PetscCall(PetscPopErrorHandler());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char yaml_text[] = "law:\n  g_bar: 0.01\n  f: 0.4\n  eps1: 2.0e6\n  n1: 1.5\n  n2: -2\n  zeta: 0.3\n  mu_s: 0.5\n  mu_d: 0.3\n  eps_t: 1.0e5\n";

/* one contact (normal +z) through the law; h: its history slot of law->histsize values (NULL:
   none), written when commit */
static PetscErrorCode EvalLawHist(DemContactLaw law, PetscReal gap, PetscReal vn, const PetscReal vt[3], PetscReal *h, PetscBool commit, PetscReal *fn, PetscReal *dfn, PetscReal *E, PetscReal ft[3], int *slip)
{
  DemContactBatch  cb;
  DemContactForces o;
  PetscInt         a = 0, b = 1, hist = h ? 0 : -1;
  int64_t          feat = 0;
  PetscReal        nrm[3] = {0, 0, 1}, reff = 1, ra[3] = {0}, rb[3] = {0}, vr[3] = {vt[0], vt[1], vn}, meff = 2.0;
  PetscReal        cn, kt, dis, fd[3], es;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&cb, sizeof(cb)));
  cb.n = 1, cb.a = &a, cb.b = &b, cb.hist = &hist, cb.feature = &feat, cb.nrm = nrm, cb.gap = &gap, cb.reff = &reff, cb.ra = ra, cb.rb = rb, cb.vrel = vr, cb.meff = &meff;
  cb.history = h, cb.histsize = law->histsize;
  o.fn = fn, o.ft = ft, o.dfn_dgap = dfn, o.cn = &cn, o.kt = &kt, o.energy = E, o.dissip = &dis, o.slip = slip, o.fdamp = fd, o.eslip = &es;
  PetscCall(DemContactLawCompute(law, &cb, 1e-4, commit, &o));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode EvalLaw(DemContactLaw law, PetscReal gap, PetscReal vn, const PetscReal vt[3], PetscReal *fn, PetscReal *dfn, PetscReal *E, PetscReal ft[3], int *slip)
{
  PetscFunctionBegin;
  PetscCall(EvalLawHist(law, gap, vn, vt, NULL, PETSC_FALSE, fn, dfn, E, ft, slip));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestLaw(void)
{
  char            file[PETSC_MAX_PATH_LEN];
  FILE           *fp;
  DemNode         root, cfg;
  DemContactLaw   law;
  DemMaterial     m0 = {"m", 1000, 1e9, 0.3, 0.5, 0.5, 0.5};
  DemMaterialPair mp = {&m0, &m0};
  const PetscReal gb = 0.01, f = 0.4, e1 = 2e6, n1 = 1.5, n2 = -2, gg = f * gb, zeta = 0.3, z3[3] = {0, 0, 0};
  PetscReal       fa, fb, da, db, E, ft[3], h = 1e-9 * gg;
  int             slip;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(file, sizeof(file), "/tmp/mmdem_test_poly_%d.yaml", (int)getpid()));
  fp = fopen(file, "w");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", file);
  fputs(yaml_text, fp);
  fclose(fp);
  PetscCall(DemConfigLoad(file, &root));
  PetscCall(DemNodeGet(root, "law", &cfg));
  PetscCall(DemContactLawCreate(PETSC_COMM_SELF, &law));
  PetscCall(DemContactLawSetType(law, "barrier_hybrid"));
  PetscCall(DemContactLawSetFromConfig(law, cfg, &mp));
  DEM_CHECK_REL("barrier: activation = g_bar", law->activation, gb, 0);
  /* eq. (49), part (i) */
  PetscCall(EvalLaw(law, 0.7 * gb, 0, z3, &fa, &da, &E, ft, &slip));
  DEM_CHECK_REL("barrier: part (i) fn = eps1 (g_bar - g)^n1", fa, e1 * pow(0.3 * gb, n1), 1e-13);
  PetscCall(EvalLaw(law, 1.01 * gb, 0, z3, &fa, &da, &E, ft, &slip));
  DEM_CHECK("barrier: fn = 0 beyond g_bar", fa == 0 && E == 0, "fn %g E %g", fa, E);
  /* eq. (50)-(51): value and slope continuous at gg; eps2 and c2 recomputed */
  {
    PetscReal eps2 = -e1 * n1 * pow(gb - gg, n1 - 1) / (n2 * pow(gg, n2 - 1)), c2 = e1 * pow(gb - gg, n1) - eps2 * pow(gg, n2);
    PetscCall(EvalLaw(law, gg - h, 0, z3, &fa, &da, &E, ft, &slip));
    PetscCall(EvalLaw(law, gg + h, 0, z3, &fb, &db, &E, ft, &slip));
    DEM_CHECK_REL("barrier: eq. (50) fn continuous at f g_bar", fa, fb, 1e-7);
    DEM_CHECK_REL("barrier: eq. (50) dfn/dg continuous at f g_bar", da, db, 1e-7);
    PetscCall(EvalLaw(law, 0.3 * gg, 0, z3, &fa, &da, &E, ft, &slip));
    DEM_CHECK_REL("barrier: part (ii) fn = eps2 g^n2 + c2 with eq. (51)", fa, eps2 * pow(0.3 * gg, n2) + c2, 1e-12);
    DEM_CHECK_REL("barrier: part (ii) dfn/dg = n2 eps2 g^(n2-1)", da, n2 * eps2 * pow(0.3 * gg, n2 - 1), 1e-12);
  }
  /* stored energy = int_g^g_bar fn ds (Simpson on each part) */
  {
    const PetscReal g0 = 0.2 * gg;
    double          I = 0;
    const int       N = 2000;
    double          segs[2][2] = {{g0, gg}, {gg, gb}};
    for (int s = 0; s < 2; s++) {
      double a = segs[s][0], b = segs[s][1], hh = (b - a) / N;
      for (int k = 0; k <= N; k++) {
        PetscReal fk, dk, Ek;
        double    w = (k == 0 || k == N) ? 1 : (k % 2 ? 4 : 2);
        PetscCall(EvalLaw(law, a + k * hh, 0, z3, &fk, &dk, &Ek, ft, &slip));
        I += w * fk * hh / 3;
      }
    }
    PetscCall(EvalLaw(law, g0, 0, z3, &fa, &da, &E, ft, &slip));
    DEM_CHECK_REL("barrier: stored energy = integral of fn from g to g_bar", E, I, 1e-9);
  }
  /* eq. (52)-(53): dashpot 2 zeta sqrt(-dfn/dg m) vn, never tensile */
  {
    PetscReal f0, d0, E0, fv;
    PetscCall(EvalLaw(law, 0.7 * gb, 0, z3, &f0, &d0, &E0, ft, &slip));
    PetscCall(EvalLaw(law, 0.7 * gb, -0.01, z3, &fv, &da, &E, ft, &slip));
    DEM_CHECK_REL("barrier: eq. (52) damping force 2 zeta sqrt(k m) |vn|", fv - f0, 2 * zeta * sqrt(-d0 * 2.0) * 0.01, 1e-12);
    PetscCall(EvalLaw(law, 0.7 * gb, 100, z3, &fv, &da, &E, ft, &slip));
    DEM_CHECK("barrier: eq. (53) total normal force never tensile", fv == 0, "fn %g", fv);
  }
  /* friction: one step from zero history: trial -eps_t vt dt sticks below mu_s fn, slides above */
  {
    PetscReal vt1[3] = {1e-3, 0, 0}, vt2[3] = {100, 0, 0};
    PetscCall(EvalLaw(law, 0.7 * gb, 0, vt1, &fa, &da, &E, ft, &slip));
    DEM_CHECK("barrier: eq. (55) sticking trial force -eps_t g_t", !slip && fabs(ft[0] + 1e5 * 1e-3 * 1e-4) < 1e-15 && ft[1] == 0, "ft %g slip %d", ft[0], slip);
    PetscCall(EvalLaw(law, 0.7 * gb, 0, vt2, &fa, &da, &E, ft, &slip));
    DEM_CHECK("barrier: eq. (56) sliding force mu_d fn against the motion", slip && fabs(ft[0] + 0.3 * fa) < 1e-12 * fa, "ft %g slip %d fn %g", ft[0], slip, fa);
  }
  /* history in the contact's slot (friction.h's layout: g_t[3], sliding flag), written only at
     commits: a sticking step stores g_t = vt dt (eq. (43)-(44)), the next one adds to it; a
     sliding step keeps |eps_t g_t| = mu_d fn (eq. (57)-(58)) and the flag; beyond g_bar the
     contact forgets it (zeros, as forces.c does for contacts no longer reported) */
  {
    PetscReal hs[4] = {0, 0, 0, 0}, vt1[3] = {1e-3, 0, 0}, vt2[3] = {100, 0, 0}, et = 1e5, dt = 1e-4;
    DEM_CHECK("barrier: history of 4 values per contact slot", law->histsize == 4, "histsize %d", (int)law->histsize);
    PetscCall(EvalLawHist(law, 0.7 * gb, 0, vt1, hs, PETSC_FALSE, &fa, &da, &E, ft, &slip));
    DEM_CHECK("barrier: a trial evaluation leaves the history slot alone", hs[0] == 0 && hs[1] == 0 && hs[2] == 0 && hs[3] == 0, "h %g %g %g %g", hs[0], hs[1], hs[2], hs[3]);
    PetscCall(EvalLawHist(law, 0.7 * gb, 0, vt1, hs, PETSC_TRUE, &fa, &da, &E, ft, &slip));
    DEM_CHECK_REL("barrier: a committed sticking step stores g_t = vt dt", hs[0], 1e-3 * dt, 1e-15);
    DEM_CHECK("barrier: ... in the tangent plane, sticking flag 0", hs[1] == 0 && hs[2] == 0 && hs[3] == 0 && !slip, "h %g %g %g %g", hs[0], hs[1], hs[2], hs[3]);
    PetscCall(EvalLawHist(law, 0.7 * gb, 0, vt1, hs, PETSC_TRUE, &fa, &da, &E, ft, &slip));
    DEM_CHECK_REL("barrier: the next step reads the slot: ft = -eps_t 2 vt dt", ft[0], -et * 2 * 1e-3 * dt, 1e-12);
    PetscCall(EvalLawHist(law, 0.7 * gb, 0, vt2, hs, PETSC_TRUE, &fa, &da, &E, ft, &slip));
    DEM_CHECK_REL("barrier: sliding: eps_t |g_t| = mu_d fn kept in the slot (eq. (57)-(58))", et * sqrt(hs[0] * hs[0] + hs[1] * hs[1] + hs[2] * hs[2]), 0.3 * fa, 1e-12);
    DEM_CHECK("barrier: sliding flag 1 in the slot", hs[3] == 1 && slip, "flag %g slip %d", hs[3], slip);
    PetscCall(EvalLawHist(law, 1.01 * gb, 0, vt1, hs, PETSC_TRUE, &fa, &da, &E, ft, &slip));
    DEM_CHECK("barrier: beyond g_bar the committed slot is zeroed (history forgotten)", hs[0] == 0 && hs[1] == 0 && hs[2] == 0 && hs[3] == 0 && ft[0] == 0, "h %g %g %g %g ft %g", hs[0], hs[1], hs[2], hs[3], ft[0]);
  }
  PetscCall(DemContactLawDestroy(&law));
  PetscCall(DemConfigDestroy(&root));
  remove(file);
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscInt ncase = 100000;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-cases", &ncase, NULL));
  PetscCall(DemRegisterAll());
  PetscCall(TestLCP(ncase));
  PetscCall(TestMass());
  PetscCall(TestLaw());
  PetscCall(PetscFinalize());
  return dem_test_failed;
}

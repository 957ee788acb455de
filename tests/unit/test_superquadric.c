/*
  test_superquadric.c - unit test of the superquadric shape and its contact solver
  (src/shapes/superquadric.c, superquadric_contact.c; 002_a4a9ff6a3ba65368.txt).

  Every expected value is computed here independently of the code under test:
    - bounding radius (eq. (11)): the largest |x| over a dense parametric sampling of the
      surface, x = (a C^e1(eta) C^e2(om), b C^e1(eta) S^e2(om), c S^e1(eta)), refined by
      zooming in on the best sample, for 1000 random shapes with n1, n2 in [2, 10];
    - volume and principal inertia (Jaklic et al. beta-function formulas): Monte Carlo
      integration over the bounding box, within 0.5 %, and the exact ellipsoid formulas;
    - extreme point in a direction (eq. (31)-(33)): the largest x.d over the same dense
      sampling, 500 random shapes and directions;
    - curvature (eq. (39), (40)): 1/r on a sphere; a/(b c) (Gaussian) and (a/b^2 + a/c^2)/2
      (mean) at the tip (a, 0, 0) of an ellipsoid; and eq. (40) in the printed A, B, C, D form
      (with the square root of the quotient) at random surface points where F_z != 0;
    - contact detection on 10^4 random pose pairs of random shapes (n1, n2 in [2, 8]): the
      exact signed distance of two convex bodies, sd = max over unit u of
      u.(x_b - x_a) - h_a(u) - h_b(-u) (support functions h from eq. (33), checked above),
      found by a search over 120 directions refined by BFGS. Every solve must
      converge; contact (gap < 0) must agree with sd < 0 (pairs with |sd| below 1e-7 of the
      size excepted); the overlap along the contact line (eq. (36)-(37)) must be within 1 %
      of the penetration depth -sd. Brute-force surface sampling (25 x 25 parametric points of
      each surface around the reference contact direction, tested for lying inside the other
      body) must agree with the solver on contact / no contact for every pair whose |sd|
      exceeds 1e-3 of the smaller shortest half-axis;
    - warm starts: after a small motion of every fifth pair, Newton from the stored point
      converges without the continuation and gives the gap of a solve from scratch (shape
      continuation) within 1e-8 of the size.
  Overlaps are drawn up to 1 % of the smaller body's shortest half-axis (DEM contacts; the
  contact-line overlap differs from the penetration depth by O(depth / radius of curvature):
  at 2 % the worst error measured is 0.7 %, at 5 % it is 1.8 %). Run with -pairs N and
  -depth D to vary.
  Random numbers: splitmix64 with fixed seeds (no rand()).
*/
#include "../shapes/superquadric.h"
#include "dem_test.h"

static uint64_t rng_state = 0x1234567ull;
static double   Rand(void)
{
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
static double Uniform(double lo, double hi)
{
  return lo + (hi - lo) * Rand();
}

static void RandQuat(double q[4])
{
  double u1 = Rand(), u2 = Rand(), u3 = Rand();
  q[0] = sqrt(1 - u1) * sin(2 * M_PI * u2);
  q[1] = sqrt(1 - u1) * cos(2 * M_PI * u2);
  q[2] = sqrt(u1) * sin(2 * M_PI * u3);
  q[3] = sqrt(u1) * cos(2 * M_PI * u3);
}

static void RandDir(double d[3])
{
  double z = Uniform(-1, 1), p = Uniform(0, 2 * M_PI), r = sqrt(1 - z * z);
  d[0] = r * cos(p), d[1] = r * sin(p), d[2] = z;
}

static double SPow(double t, double e)
{
  return t < 0 ? -pow(-t, e) : pow(t, e);
}

/* the parametric surface point (independent of the shape function) */
static void Param(const DemSQGeom *g, double eta, double om, double x[3])
{
  double e1 = 2.0 / g->n1, e2 = 2.0 / g->n2, ce = SPow(cos(eta), e1);
  x[0] = g->a * ce * SPow(cos(om), e2);
  x[1] = g->b * ce * SPow(sin(om), e2);
  x[2] = g->c * SPow(sin(eta), e1);
}

typedef double (*ScoreFn)(const double x[3], const void *ctx);
/* max over the surface of score(x) by a 101 x 201 parametric grid, then, from each of the 4
   best grid points, 32 zooms (window +-2.5 spacings, spacing halved) */
static double SampleMax(const DemSQGeom *g, ScoreFn score, const void *ctx, double best_x[3])
{
  double top[4], te[4], to[4], best = -1e300, bx[3], x[3];
  const double he0 = M_PI / 100, ho0 = 2 * M_PI / 200;
  for (int t = 0; t < 4; t++) top[t] = -1e300, te[t] = to[t] = 0;
  for (int i = 0; i <= 100; i++)
    for (int j = 0; j < 200; j++) {
      double eta = -M_PI / 2 + i * he0, om = j * ho0, s;
      Param(g, eta, om, x);
      s = score(x, ctx);
      if (s > top[3]) { /* insert into the sorted top list */
        int t = 3;
        while (t > 0 && s > top[t - 1]) top[t] = top[t - 1], te[t] = te[t - 1], to[t] = to[t - 1], t--;
        top[t] = s, te[t] = eta, to[t] = om;
      }
    }
  for (int t = 0; t < 4; t++) {
    double be = te[t], bo = to[t], bs = top[t], he = he0, ho = ho0;
    for (int z = 0; z < 32; z++) {
      double ce = be, co = bo;
      for (int i = -5; i <= 5; i++)
        for (int j = -5; j <= 5; j++) {
          double eta = ce + i * he / 2, om = co + j * ho / 2, s;
          /* across a pole: the same point is (-pi - eta, om + pi), (pi - eta, om + pi) */
          if (eta < -M_PI / 2) eta = -M_PI - eta, om += M_PI;
          if (eta > M_PI / 2) eta = M_PI - eta, om += M_PI;
          Param(g, eta, om, x);
          s = score(x, ctx);
          if (s > bs) bs = s, be = eta, bo = om;
        }
      he /= 2, ho /= 2;
    }
    if (bs > best) {
      best = bs;
      Param(g, be, bo, bx);
    }
  }
  if (best_x) best_x[0] = bx[0], best_x[1] = bx[1], best_x[2] = bx[2];
  return best;
}

static double ScoreNorm(const double x[3], const void *ctx)
{
  return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
}
static double ScoreDot(const double x[3], const void *ctx)
{
  const double *d = (const double *)ctx;
  return x[0] * d[0] + x[1] * d[1] + x[2] * d[2];
}

static void MakeGeom(DemSQGeom *g, double a, double b, double c, double n1, double n2)
{
  memset(g, 0, sizeof(*g));
  g->a = a, g->b = b, g->c = c, g->n1 = n1, g->n2 = n2;
  g->curv   = DEM_SQ_CURV_MEAN;
  g->qlimit = 10;
  (void)DemSQGeomSetUp_Private(g);
}

static void TestBoundingRadius(void)
{
  double worst = 0, above = 0, fsurf = 0;
  rng_state = 11;
  for (int k = 0; k < 1000; k++) {
    DemSQGeom g;
    double    xs[3], grad[3], rs;
    /* every tenth shape hits the special cases of the paper: ellipsoid, cylinder n2 = 2,
       n1 = 2 with flat sides */
    double n1 = Uniform(2, 10), n2 = Uniform(2, 10);
    if (k % 10 == 1) n1 = n2 = 2;
    if (k % 10 == 2) n2 = 2;
    if (k % 10 == 3) n1 = 2;
    MakeGeom(&g, Uniform(0.3, 2), Uniform(0.3, 2), Uniform(0.3, 2), n1, n2);
    rs = SampleMax(&g, ScoreNorm, NULL, xs);
    worst = fmax(worst, fabs(g.rbound - rs) / rs);
    above = fmax(above, (rs - g.rbound) / rs);
    fsurf = fmax(fsurf, fabs(DemSQEval_Private(&g, xs, grad, NULL)));
  }
  DEM_CHECK("bounding radius: parametric samples lie on f = 0", fsurf < 1e-9, "max |f| %.3g", fsurf);
  DEM_CHECK("bounding radius eq. (11) = sampled max |x| within 1e-5 (1000 shapes, n in [2, 10]; the sampling converges slowly near the poles)", worst < 1e-5, "worst rel. difference %.3g", worst);
  DEM_CHECK("bounding radius bounds every sample", above < 1e-12, "a sample is %.3g beyond", above);
  printf("# bounding radius: worst relative difference to sampling %.2e\n", worst);
}

static void TestMassProperties(void)
{
  const double shapes[][5] = {
    {1, 1, 1, 2, 2}, {3, 2, 1, 2, 2}, {2, 2, 1, 4, 4}, {1, 2, 3, 8, 3}, {1.5, 1, 2, 3, 7}, {2, 2, 1, 10, 2}, {1, 1, 2, 2, 10}, {1, 1.2, 0.8, 10, 10}, {2, 1, 1, 6, 2}, {0.7, 1.1, 1.9, 2.5, 5.5},
  };
  const int ns = (int)(sizeof(shapes) / sizeof(shapes[0]));
  double    worst = 0;
  rng_state = 22;
  for (int s = 0; s < ns; s++) {
    DemSQGeom g;
    double    a = shapes[s][0], b = shapes[s][1], c = shapes[s][2], V, I[3], cnt = 0, J[3] = {0, 0, 0}, box = 8 * a * b * c, grad[3];
    const int N = 1000000;
    MakeGeom(&g, a, b, c, shapes[s][3], shapes[s][4]);
    V = g.vol;
    for (int j = 0; j < 3; j++) I[j] = g.Iunit[j];
    for (int k = 0; k < N; k++) {
      double x[3] = {Uniform(-a, a), Uniform(-b, b), Uniform(-c, c)};
      if (DemSQEval_Private(&g, x, grad, NULL) < 0) {
        cnt++;
        J[0] += x[1] * x[1] + x[2] * x[2];
        J[1] += x[0] * x[0] + x[2] * x[2];
        J[2] += x[0] * x[0] + x[1] * x[1];
      }
    }
    worst = fmax(worst, fabs(V / (cnt / N * box) - 1));
    for (int j = 0; j < 3; j++) worst = fmax(worst, fabs(I[j] / (J[j] / N * box) - 1));
    if (shapes[s][3] == 2 && shapes[s][4] == 2) {
      double Ve = 4.0 / 3.0 * M_PI * a * b * c;
      char   name[128];
      snprintf(name, sizeof(name), "ellipsoid %g %g %g: exact volume and inertia m (b^2 + c^2)/5 etc.", a, b, c);
      DEM_CHECK(name, fabs(V / Ve - 1) < 1e-12 && fabs(I[0] / (Ve * (b * b + c * c) / 5) - 1) < 1e-12 && fabs(I[1] / (Ve * (a * a + c * c) / 5) - 1) < 1e-12 && fabs(I[2] / (Ve * (a * a + b * b) / 5) - 1) < 1e-12, "V %g vs %g", V, Ve);
    }
  }
  DEM_CHECK("volume and inertia (beta functions) = Monte Carlo (10^6 points) within 0.5 % (10 shapes)", worst < 5e-3, "worst rel. difference %.3g", worst);
  printf("# mass properties: worst relative difference to Monte Carlo %.2e\n", worst);
}

static void TestSupport(void)
{
  double worst = 0, fs = 0;
  rng_state = 33;
  for (int k = 0; k < 500; k++) {
    DemSQGeom g;
    double    d[3], x[3], grad[3], hs, h;
    MakeGeom(&g, Uniform(0.3, 2), Uniform(0.3, 2), Uniform(0.3, 2), Uniform(2, 10), Uniform(2, 10));
    RandDir(d);
    if (k % 50 == 0) d[0] = 0; /* zero components (eq. (33) as printed divides by them) */
    if (k % 50 == 1) d[0] = d[1] = 0, d[2] = 1;
    DemSQSupport_Private(&g, d, x);
    h  = x[0] * d[0] + x[1] * d[1] + x[2] * d[2];
    hs = SampleMax(&g, ScoreDot, d, NULL);
    worst = fmax(worst, fabs(h - hs) / g.rbound);
    fs    = fmax(fs, fabs(DemSQEval_Private(&g, x, grad, NULL)));
  }
  DEM_CHECK("extreme point eq. (33) lies on the surface", fs < 1e-12, "max |f| %.3g", fs);
  DEM_CHECK("extreme point eq. (33): support value = sampled max x.d within 1e-7 r (500 shapes, directions)", worst < 1e-7, "worst %.3g", worst);
}

static void TestCurvature(void)
{
  DemSQGeom g;
  double    x[3] = {3, 0, 0}, grad[3], H[6], Km, Kg, worst = 0;

  MakeGeom(&g, 2, 2, 2, 2, 2);
  {
    double y[3] = {1.2, -1.6, 0}, r;
    (void)DemSQEval_Private(&g, y, grad, H);
    DemSQCurvatures_Private(grad, H, &Km, &Kg);
    r = 2;
    DEM_CHECK("sphere r = 2: mean and Gaussian curvature 1/r", fabs(Km * r - 1) < 1e-12 && fabs(Kg * r - 1) < 1e-12, "K_mean %g K_gauss %g", Km, Kg);
  }
  MakeGeom(&g, 3, 2, 1.5, 2, 2);
  (void)DemSQEval_Private(&g, x, grad, H);
  DemSQCurvatures_Private(grad, H, &Km, &Kg);
  DEM_CHECK("ellipsoid tip: sqrt(k1 k2) = a/(b c)", fabs(Kg / (3.0 / (2 * 1.5)) - 1) < 1e-12, "got %.12g", Kg);
  DEM_CHECK("ellipsoid tip: (k1 + k2)/2 = (a/b^2 + a/c^2)/2", fabs(Km / (0.5 * (3.0 / 4 + 3.0 / 2.25)) - 1) < 1e-12, "got %.12g", Km);
  /* eq. (40) as printed, with the square root over the quotient */
  rng_state = 44;
  for (int k = 0; k < 200; k++) {
    double p[3], Fx, Fy, Fz, A, B, C, D, K40;
    MakeGeom(&g, Uniform(0.5, 2), Uniform(0.5, 2), Uniform(0.5, 2), Uniform(2, 6), Uniform(2, 6));
    Param(&g, Uniform(0.2, 1.3), Uniform(0.2, 1.3), p);
    (void)DemSQEval_Private(&g, p, grad, H);
    DemSQCurvatures_Private(grad, H, &Km, &Kg);
    Fx = grad[0], Fy = grad[1], Fz = grad[2];
    A   = Fz * (H[0] * Fz - 2 * Fx * H[4]) + Fx * Fx * H[2];
    B   = Fz * (H[1] * Fz - 2 * Fy * H[5]) + Fy * Fy * H[2];
    C   = Fz * (H[3] * Fz - H[4] * Fy - Fx * H[5]) + Fx * Fy * H[2];
    D   = Fz * Fz * pow(Fx * Fx + Fy * Fy + Fz * Fz, 2);
    K40 = sqrt((A * B - C * C) / D);
    worst = fmax(worst, fabs(Kg / K40 - 1));
  }
  DEM_CHECK("Gaussian curvature = eq. (40) (A, B, C, D form) at 200 random surface points", worst < 1e-9, "worst rel. difference %.3g", worst);
}

/* ---------------------------------------------------------------- contact */

static void MakeBody(DemSQBody *B, const DemSQGeom *g, double s, const double x[3], const double q[4])
{
  B->g = g;
  B->s = s;
  for (int j = 0; j < 3; j++) B->x[j] = x[j];
  DemQuatToMatrix(q, B->R);
}

/* support point (world vector from the centre) and value of a body in world direction u */
static double Hw(const DemSQBody *B, const double u[3], double p[3])
{
  double d[3], y[3];
  for (int i = 0; i < 3; i++) d[i] = B->R[i] * u[0] + B->R[3 + i] * u[1] + B->R[6 + i] * u[2];
  DemSQSupport_Private(B->g, d, y);
  if (p)
    for (int i = 0; i < 3; i++) p[i] = B->s * (B->R[3 * i] * y[0] + B->R[3 * i + 1] * y[1] + B->R[3 * i + 2] * y[2]);
  return B->s * (d[0] * y[0] + d[1] * y[1] + d[2] * y[2]);
}

/* separation of the projections on u, f(u) = u.(x_b - x_a) - h_a(u) - h_b(-u), and its
   gradient d - p_a(u) + p_b(-u) */
static double GapDir(const DemSQBody *A, const DemSQBody *B, const double u[3], double grad[3])
{
  double mu[3] = {-u[0], -u[1], -u[2]}, pa[3], pb[3], f;
  f = u[0] * (B->x[0] - A->x[0]) + u[1] * (B->x[1] - A->x[1]) + u[2] * (B->x[2] - A->x[2]) - Hw(A, u, pa) - Hw(B, mu, pb);
  if (grad)
    for (int j = 0; j < 3; j++) grad[j] = B->x[j] - A->x[j] - pa[j] + pb[j];
  return f;
}

static void Normalize(double u[3])
{
  double l = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  u[0] /= l, u[1] /= l, u[2] /= l;
}

static void Tangents(const double u[3], double t1[3], double t2[3])
{
  double a[3] = {1, 0, 0};
  if (fabs(u[0]) > 0.8) a[0] = 0, a[1] = 1;
  t1[0] = u[1] * a[2] - u[2] * a[1];
  t1[1] = u[2] * a[0] - u[0] * a[2];
  t1[2] = u[0] * a[1] - u[1] * a[0];
  Normalize(t1);
  t2[0] = u[1] * t1[2] - u[2] * t1[1];
  t2[1] = u[2] * t1[0] - u[0] * t1[2];
  t2[2] = u[0] * t1[1] - u[1] * t1[0];
}

/* f and its gradient in the gnomonic chart u = (u0 + x1 t1 + x2 t2)/|.| around u0 */
static double ChartEval(const DemSQBody *A, const DemSQBody *B, const double u0[3], const double t1[3], const double t2[3], const double xi[2], double gx[2], double u[3])
{
  double v[3], nv, g[3], f, ut1, ut2;
  for (int j = 0; j < 3; j++) v[j] = u0[j] + xi[0] * t1[j] + xi[1] * t2[j];
  nv = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  for (int j = 0; j < 3; j++) u[j] = v[j] / nv;
  f   = GapDir(A, B, u, g);
  ut1 = u[0] * t1[0] + u[1] * t1[1] + u[2] * t1[2];
  ut2 = u[0] * t2[0] + u[1] * t2[1] + u[2] * t2[2];
  gx[0] = 0, gx[1] = 0;
  for (int j = 0; j < 3; j++) {
    gx[0] += g[j] * (t1[j] - u[j] * ut1) / nv;
    gx[1] += g[j] * (t2[j] - u[j] * ut2) / nv;
  }
  return f;
}

/* sd = max over |u| = 1 of f(u): the exact signed distance of two convex bodies (distance if
   separated, minus the penetration depth if they overlap). 120 Fibonacci directions, then
   BFGS (maximizing) in a gnomonic chart around the best one, re-centred when the iterate
   moves far, with an Armijo backtracking line search */
static double SignedDistance(const DemSQBody *A, const DemSQBody *B, double ub[3])
{
  double best = -1e300, u[3], L = A->s * A->g->rbound + B->s * B->g->rbound;
  for (int k = 0; k < 120; k++) {
    double z = 1 - (2 * k + 1) / 120.0, r = sqrt(1 - z * z), p = k * M_PI * (3 - sqrt(5.0)), gu;
    u[0] = r * cos(p), u[1] = r * sin(p), u[2] = z;
    gu   = GapDir(A, B, u, NULL);
    if (gu > best) best = gu, ub[0] = u[0], ub[1] = u[1], ub[2] = u[2];
  }
  for (int chart = 0; chart < 20; chart++) {
    double u0[3] = {ub[0], ub[1], ub[2]}, t1[3], t2[3], xi[2] = {0, 0}, g[2], Hi[4] = {1e-3 * L, 0, 0, 1e-3 * L}, f;
    int    recentre = 0, done = 0;
    Tangents(u0, t1, t2);
    f = ChartEval(A, B, u0, t1, t2, xi, g, u);
    for (int it = 0; it < 200; it++) {
      double d[2] = {Hi[0] * g[0] + Hi[1] * g[1], Hi[2] * g[0] + Hi[3] * g[1]}, lam = 1, xn[2], gn[2], fn = 0, sdg, nd;
      int    ok = 0;
      if (sqrt(g[0] * g[0] + g[1] * g[1]) < 1e-14 * L) { done = 1; break; }
      sdg = d[0] * g[0] + d[1] * g[1];
      if (!(sdg > 0)) d[0] = g[0] * 1e-3 * L, d[1] = g[1] * 1e-3 * L, sdg = d[0] * g[0] + d[1] * g[1], Hi[0] = Hi[3] = 1e-3 * L, Hi[1] = Hi[2] = 0;
      nd = sqrt(d[0] * d[0] + d[1] * d[1]);
      if (nd > 0.1) lam = 0.1 / nd;
      for (int ls = 0; ls < 80; ls++, lam *= 0.5) {
        xn[0] = xi[0] + lam * d[0], xn[1] = xi[1] + lam * d[1];
        fn    = ChartEval(A, B, u0, t1, t2, xn, gn, u);
        if (fn >= f + 1e-4 * lam * sdg) { ok = 1; break; }
      }
      if (!ok) { done = 1; break; }
      { /* BFGS update of the inverse Hessian of -f */
        double sv[2] = {xn[0] - xi[0], xn[1] - xi[1]}, yv[2] = {-(gn[0] - g[0]), -(gn[1] - g[1])}, sy = sv[0] * yv[0] + sv[1] * yv[1];
        if (sy > 1e-300) {
          double Hy[2] = {Hi[0] * yv[0] + Hi[1] * yv[1], Hi[2] * yv[0] + Hi[3] * yv[1]}, yHy = yv[0] * Hy[0] + yv[1] * Hy[1], r = 1 / sy;
          for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) Hi[2 * i + j] += (1 + yHy * r) * r * sv[i] * sv[j] - r * (Hy[i] * sv[j] + sv[i] * Hy[j]);
        }
      }
      xi[0] = xn[0], xi[1] = xn[1], g[0] = gn[0], g[1] = gn[1];
      if (fn > best) best = fn, ub[0] = u[0], ub[1] = u[1], ub[2] = u[2];
      f = fn;
      if (lam * nd < 1e-15) { done = 1; break; }
      if (xi[0] * xi[0] + xi[1] * xi[1] > 0.25) { recentre = 1; break; }
    }
    if (done || !recentre) break;
  }
  return best;
}

/* the parameters (eta, om) of the surface point y of Param() */
static void ParamInverse(const DemSQGeom *g, const double y[3], double *eta, double *om)
{
  double se = SPow(y[2] / g->c, g->n1 / 2), ce = sqrt(fmax(0, 1 - se * se)), cea, co, so;
  *eta = asin(fmax(-1, fmin(1, se)));
  cea  = pow(ce, 2.0 / g->n1);
  co   = cea > 0 ? SPow(y[0] / (g->a * cea), g->n2 / 2) : 1;
  so   = cea > 0 ? SPow(y[1] / (g->b * cea), g->n2 / 2) : 0;
  *om  = atan2(so, co);
}

/* brute force: the deepest of 25 x 25 samples of P's surface around its extreme point in
   direction u (+-0.2 rad in both parameters) inside Q: min F_Q over the samples (< 0: a
   surface point of P inside Q) */
static double SurfaceInside(const DemSQBody *P, const DemSQBody *Q, const double u[3])
{
  double d[3], y[3], e0, o0, fmin_ = 1e300;
  for (int i = 0; i < 3; i++) d[i] = P->R[i] * u[0] + P->R[3 + i] * u[1] + P->R[6 + i] * u[2];
  DemSQSupport_Private(P->g, d, y);
  ParamInverse(P->g, y, &e0, &o0);
  for (int i = -12; i <= 12; i++)
    for (int j = -12; j <= 12; j++) {
      double X[3], z[3], grad[3], eta = fmax(-M_PI / 2, fmin(M_PI / 2, e0 + i * 0.0167)), f;
      Param(P->g, eta, o0 + j * 0.0167, y);
      for (int k = 0; k < 3; k++) X[k] = P->x[k] + P->s * (P->R[3 * k] * y[0] + P->R[3 * k + 1] * y[1] + P->R[3 * k + 2] * y[2]) - Q->x[k];
      for (int k = 0; k < 3; k++) z[k] = (Q->R[k] * X[0] + Q->R[3 + k] * X[1] + Q->R[6 + k] * X[2]) / Q->s;
      f = DemSQEval_Private(Q->g, z, grad, NULL);
      if (f < fmin_) fmin_ = f;
    }
  return fmin_;
}

/* two identical bodies stacked face to face (a = b = 2, c = 1 mm, the blocky bodies of 002's
   piling test): for n >= 4 the Hessian of f vanishes at a face's centre, so with the faces
   aligned the Jacobian of eq. (25) is singular in the directions along the faces (before the
   fix every solve of the exactly aligned pair failed and the contact was dropped: a body
   resting flat on another fell through it). Checked: converged; gap = -depth exactly for the
   aligned, centred pair (both contact-line roots at the face centres); for offsets, turns
   about the common axis and small tilts, the gap within 1 % of the exact penetration depth
   (SignedDistance above); a warm re-solve needs no continuation. */
static void TestFaceToFace(void)
{
  const double ns[3] = {2, 4, 10}, depth = 2e-6; /* m: 0.2 % of c */
  int          nconv = 0, ncase = 0, nwarm = 0, nbad = 0;
  double       worst = 0, exacterr = 0;
  char         msg[256] = "";

  for (int in = 0; in < 3; in++) {
    DemSQGeom g;
    MakeGeom(&g, 2, 2, 1, ns[in], ns[in]);
    /* offset along x (mm), turn about z, tilt about x (rad) */
    const double cs[7][3] = {{0, 0, 0}, {0.6, 0, 0}, {0.3, 0.4, 0}, {0, 0, 1e-9}, {0, 0, 1e-6}, {0, 0, 1e-3}, {0.5, 0.2, 1e-4}};
    for (int k = 0; k < 7; k++) {
      DemSQBody   A, B;
      DemSQResult r, r2;
      DemSQWarm   w;
      double      xa[3] = {0, 0, 0}, xb[3] = {cs[k][0] * 1e-3, 0, 2e-3 - depth}, qa[4] = {1, 0, 0, 0}, qb[4], q1[4], q2[4], th[3], ub[3], sd;
      th[0] = 0, th[1] = 0, th[2] = cs[k][1];
      DemQuatFromRotationVector(th, q1);
      th[0] = cs[k][2], th[2] = 0;
      DemQuatFromRotationVector(th, q2);
      DemQuatMul(q2, q1, qb);
      MakeBody(&A, &g, 1e-3, xa, qa);
      MakeBody(&B, &g, 1e-3, xb, qb);
      memset(&w, 0, sizeof(w));
      DemSQCollide_Private(&A, &B, &w, &r);
      ncase++;
      nconv += r.converged ? 1 : 0;
      if (!r.converged && !msg[0]) snprintf(msg, sizeof(msg), "n %g case %d: not converged, gap %.6g", ns[in], k, r.gap);
      if (k == 0) exacterr = fmax(exacterr, fabs(r.gap + depth) / depth);
      sd = SignedDistance(&A, &B, ub);
      {
        double e = fabs(r.gap - sd) / fabs(sd);
        if (e > worst) worst = e;
        if (e > 0.01) nbad++;
      }
      DemSQCollide_Private(&A, &B, &w, &r2); /* the same poses again, from the warm start */
      if (r2.converged && r2.stages == 0 && fabs(r2.gap - r.gap) <= 1e-12) nwarm++;
    }
  }
  DEM_CHECK("face to face (n = 2, 4, 10; aligned, offset, turned, tilted by 1e-9 to 1e-3 rad): every solve converged", nconv == ncase, "%d of %d; first: %s", nconv, ncase, msg);
  DEM_CHECK("face to face, aligned and centred: gap = -depth (both line roots at the face centres)", exacterr < 1e-6, "rel. error %.3g", exacterr);
  DEM_CHECK("face to face: gap within 1 % of the exact penetration depth", nbad == 0, "%d of %d off; worst %.3g", nbad, ncase, worst);
  DEM_CHECK("face to face: warm re-solve at the same poses converges without continuation, same gap", nwarm == ncase, "%d of %d", nwarm, ncase);
}

static PetscErrorCode TestContact(int NP, double depth)
{
  PetscLogDouble t0w, t1w, t2w, tref = 0, tsol = 0, tsamp = 0;
  int       nconv = 0, ncont = 0, nsame = 0, nsign = 0, nbad = 0, nover = 0, nsampled = 0, nsamplebad = 0, nwarm = 0, nwarmok = 0;
  double    worst = 0, sumerr = 0, maxit = 0, sumit = 0, warmdiff = 0, worstsep = 0;
  double    q1 = 0, q2 = 0, dmaxrel = 0;
  char      msg[256] = "";

  rng_state = 55;
  for (int k = 0; k < NP; k++) {
    DemSQGeom   ga, gb;
    DemSQBody   A, B;
    DemSQResult r;
    DemSQWarm   w;
    double      qa[4], qb[4], xa[3] = {0, 0, 0}, xb[3], u0[3], ub[3], t0, g, sd, L, smin, sa = Uniform(0.5, 2) * 1e-3, sb = Uniform(0.5, 2) * 1e-3;
    MakeGeom(&ga, Uniform(0.4, 1.6), Uniform(0.4, 1.6), Uniform(0.4, 1.6), Uniform(2, 8), Uniform(2, 8));
    MakeGeom(&gb, Uniform(0.4, 1.6), Uniform(0.4, 1.6), Uniform(0.4, 1.6), Uniform(2, 8), Uniform(2, 8));
    memset(&w, 0, sizeof(w));
    if (k % 20 == 0) MakeGeom(&gb, 1, 1, 1, 2, 2); /* a sphere, as in sphere/superquadric */
    RandQuat(qa);
    RandQuat(qb);
    RandDir(u0);
    for (int j = 0; j < 3; j++) xa[j] = Uniform(-1, 1) * 1e-3;
    MakeBody(&A, &ga, sa / ga.rbound * 1.0, xa, qa);
    /* scale so that the bodies' bounding radii are sa and sb (m) */
    MakeBody(&B, &gb, sb / gb.rbound, xa, qb);
    /* place b along u0 so that the projections on u0 touch, then move it along the optimal
       direction to a signed distance in [-1 %, +0.5 %] of the smaller shortest half-axis */
    smin = fmin(A.s * fmin(ga.a, fmin(ga.b, ga.c)), B.s * fmin(gb.a, fmin(gb.b, gb.c)));
    {
      double mu0[3] = {-u0[0], -u0[1], -u0[2]};
      t0 = Hw(&A, u0, NULL) + Hw(&B, mu0, NULL);
    }
    g = Uniform(-depth, 0.5 * depth) * smin;
    for (int j = 0; j < 3; j++) xb[j] = xa[j] + t0 * u0[j];
    MakeBody(&B, &gb, sb / gb.rbound, xb, qb);
    L = 0.5 * (sa + sb);
    PetscCall(PetscTime(&t0w));
    sd = SignedDistance(&A, &B, ub);
    for (int j = 0; j < 3; j++) xb[j] += (g - sd) * ub[j];
    MakeBody(&B, &gb, sb / gb.rbound, xb, qb);
    sd = SignedDistance(&A, &B, ub);
    PetscCall(PetscTime(&t1w));
    DemSQCollide_Private(&A, &B, &w, &r);
    PetscCall(PetscTime(&t2w));
    tref += t1w - t0w, tsol += t2w - t1w;
    nconv += r.converged ? 1 : 0;
    ncont += r.stages > 0;
    sumit += r.iterations;
    maxit = fmax(maxit, r.iterations);
    if (fabs(sd) > 1e-7 * L) {
      nsign++;
      if ((r.gap < 0) == (sd < 0)) nsame++;
      else if (!msg[0]) snprintf(msg, sizeof(msg), "pair %d: gap %.6g sd %.6g (L %.3g)", k, r.gap, sd, L);
    }
    if (sd < 0 && r.gap < 0) {
      double e = fabs(-r.gap - (-sd)) / (-sd);
      nover++;
      sumerr += e;
      if (e > worst) worst = e, dmaxrel = -sd / smin;
      if (e > 0.01) {
        nbad++;
        if (getenv("SQ_DEBUG")) {
          double cosang = -(r.nrm[0] * ub[0] + r.nrm[1] * ub[1] + r.nrm[2] * ub[2]), fu;
          double un[3] = {-r.nrm[0], -r.nrm[1], -r.nrm[2]};
          fu = GapDir(&A, &B, un, NULL);
          printf("# bad pair %d: gap %.10g sd %.10g smin %.4g n1a %.3f n2a %.3f n1b %.3f n2b %.3f angle(n, u*) %.3g rad, f(solver n) %.10g\n", k, r.gap, sd, smin, ga.n1, ga.n2, gb.n1, gb.n2, acos(fmin(1, cosang)), fu);
        }
      }
      if (e > 0.001) q1++;
      if (e > 0.005) q2++;
    } else if (sd > 1e-7 * L && r.gap > 0) worstsep = fmax(worstsep, fabs(r.gap - sd) / sd);
    PetscCall(PetscTime(&t0w));
    { /* brute-force surface sampling around the reference contact: a surface point of one
         body inside the other exactly when the solver reports an overlap (pairs whose depth
         or distance exceeds 1e-3 of the smallest half-axis, so that the samples, 0.0167 rad
         apart, resolve them) */
      double mu[3] = {-ub[0], -ub[1], -ub[2]};
      int    in    = SurfaceInside(&A, &B, ub) < 0 || SurfaceInside(&B, &A, mu) < 0;
      if (fabs(sd) > 1e-3 * smin) {
        nsampled++;
        if (in != (r.gap < 0)) nsamplebad++;
      }
    }
    PetscCall(PetscTime(&t1w));
    tsamp += t1w - t0w;
    if (r.converged && k % 5 == 0) { /* warm start after a small motion */
      DemSQResult r2, r3;
      double      dq[4], qn[4], th[3] = {Uniform(-1, 1) * 1e-3, Uniform(-1, 1) * 1e-3, Uniform(-1, 1) * 1e-3};
      DemQuatFromRotationVector(th, dq);
      DemQuatMul(dq, qb, qn);
      for (int j = 0; j < 3; j++) xb[j] += Uniform(-1, 1) * 1e-3 * smin;
      MakeBody(&B, &gb, sb / gb.rbound, xb, qn);
      DemSQCollide_Private(&A, &B, &w, &r2);
      DemSQCollide_Private(&A, &B, NULL, &r3);
      nwarm++;
      if (r2.converged && r2.stages == 0) nwarmok++;
      warmdiff = fmax(warmdiff, fabs(r2.gap - r3.gap) / L);
    }
  }
  DEM_CHECK("contact solve converged for every one of 10^4 random pose pairs (n1, n2 in [2, 8])", nconv == NP, "%d of %d converged", nconv, NP);
  DEM_CHECK("contact / no contact agrees with the exact signed distance (|sd| > 1e-7 size)", nsame == nsign, "%d of %d agree; first: %s", nsame, nsign, msg);
  DEM_CHECK("overlap along the contact line within 1 % of the penetration depth (every overlapping pair)", nbad == 0, "%d of %d overlapping pairs off by more than 1 %%; worst %.3g at depth %.3g of the smallest half-axis", nbad, nover, worst, dmaxrel);
  DEM_CHECK("brute-force surface sampling (25 x 25 points around the contact on each body) agrees with the solver on contact / no contact (|sd| > 1e-3 of the smallest half-axis)", nsamplebad == 0, "%d of %d disagree", nsamplebad, nsampled);
  DEM_CHECK("warm start from the previous point after a small motion: Newton only, no continuation", nwarmok == nwarm, "%d of %d", nwarmok, nwarm);
  DEM_CHECK("warm start and a fresh solve give the same gap within 1e-8 of the size (Newton tolerance 1e-6 on the midway point)", warmdiff < 1e-8, "max difference %.3g", warmdiff);
  printf("# contact: %d pairs, %d overlapping (sign checked on %d), %d continuation starts, Newton iterations mean %.2f max %.0f\n", NP, nover, nsign, ncont, sumit / NP, maxit);
  printf("# contact: overlap error vs penetration depth: mean %.2e, max %.2e (depth %.3g of the smallest half-axis); > 0.1 %%: %.0f, > 0.5 %%: %.0f pairs\n", sumerr / (nover ? nover : 1), worst, dmaxrel, q1, q2);
  printf("# contact: time: reference %.2f s, solver %.3f s (%.2f us per pair from scratch), sampling %.2f s\n", tref, tsol, 1e6 * tsol / NP, tsamp);
  printf("# contact: separated pairs, |gap - distance| / distance max %.2e (not asserted: the gap of a separated pair only gates reporting)\n", worstsep);
  return PETSC_SUCCESS;
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  TestBoundingRadius();
  TestMassProperties();
  TestSupport();
  TestCurvature();
  TestFaceToFace();
  {
    PetscInt  np = 10000;
    PetscReal depth = 0.01;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-pairs", &np, NULL));
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-depth", &depth, NULL));
    PetscCall(TestContact((int)np, (double)depth));
  }
  PetscCall(PetscFinalize());
  return dem_test_failed;
}

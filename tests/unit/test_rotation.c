/*
  test_rotation.c - unit test of src/core/rotation.c (quaternions, rescaled Rodrigues vector).

  Every check compares against a value computed independently in this file: the axis-angle
  (Euler-Rodrigues) matrix cos(t) I + sin(t) [e]x + (1 - cos(t)) e e^T and the quaternion
  (cos(t/2), sin(t/2) e) built with sin/cos, a local Hamilton product, matrix products, and
  central finite differences. Inputs come from fixed values and a small LCG (no rand()).
*/
#include <petscsys.h>
#undef I /* <complex.h>, included by petscsys.h, defines I; dem.h uses I as a name */
#include "dem.h"
#include "dem_test.h"

static unsigned long long lcg_state = 0x2545F4914F6CDD1DULL;

/* uniform in [-1, 1) */
static double Lcg(void)
{
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static void RandUnit(PetscReal e[3])
{
  double n;

  do {
    e[0] = Lcg();
    e[1] = Lcg();
    e[2] = Lcg();
    n = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
  } while (n < 0.1 || n > 1.0);
  e[0] /= n;
  e[1] /= n;
  e[2] /= n;
}

static void RandVec(PetscReal v[3])
{
  v[0] = Lcg();
  v[1] = Lcg();
  v[2] = Lcg();
}

/* Euler-Rodrigues matrix of a rotation t about unit axis e (001 eq. (1), written by hand). */
static void RefAxisAngleMatrix(const PetscReal e[3], double t, PetscReal R[9])
{
  double c = cos(t), s = sin(t), C = 1 - c;

  R[0] = c + C * e[0] * e[0];
  R[1] = C * e[0] * e[1] - s * e[2];
  R[2] = C * e[0] * e[2] + s * e[1];
  R[3] = C * e[1] * e[0] + s * e[2];
  R[4] = c + C * e[1] * e[1];
  R[5] = C * e[1] * e[2] - s * e[0];
  R[6] = C * e[2] * e[0] - s * e[1];
  R[7] = C * e[2] * e[1] + s * e[0];
  R[8] = c + C * e[2] * e[2];
}

static void RefAxisAngleQuat(const PetscReal e[3], double t, PetscReal q[4])
{
  q[0] = cos(0.5 * t);
  q[1] = sin(0.5 * t) * e[0];
  q[2] = sin(0.5 * t) * e[1];
  q[3] = sin(0.5 * t) * e[2];
}

/* Rodrigues rotation of v by t about e: v cos t + (e x v) sin t + e (e.v)(1 - cos t) */
static void RefRotateVec(const PetscReal e[3], double t, const PetscReal v[3], PetscReal out[3])
{
  double c = cos(t), s = sin(t), ev = e[0] * v[0] + e[1] * v[1] + e[2] * v[2];
  double x[3] = {e[1] * v[2] - e[2] * v[1], e[2] * v[0] - e[0] * v[2], e[0] * v[1] - e[1] * v[0]};

  for (int i = 0; i < 3; i++) out[i] = v[i] * c + x[i] * s + e[i] * ev * (1 - c);
}

/* Hamilton product in scalar/vector form (w1 w2 - v1.v2, w1 v2 + w2 v1 + v1 x v2). */
static void RefQuatMul(const PetscReal a[4], const PetscReal b[4], PetscReal c[4])
{
  const PetscReal *u = a + 1, *v = b + 1;

  c[0] = a[0] * b[0] - (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]);
  c[1] = a[0] * v[0] + b[0] * u[0] + (u[1] * v[2] - u[2] * v[1]);
  c[2] = a[0] * v[1] + b[0] * u[1] + (u[2] * v[0] - u[0] * v[2]);
  c[3] = a[0] * v[2] + b[0] * u[2] + (u[0] * v[1] - u[1] * v[0]);
}

/* Matrix of the rescaled Rodrigues vector via its axis and angle: theta = 2 atan(|alpha|/2). */
static void RefRodriguesMatrix(const PetscReal alpha[3], PetscReal R[9])
{
  double a = sqrt(alpha[0] * alpha[0] + alpha[1] * alpha[1] + alpha[2] * alpha[2]);
  PetscReal e[3] = {1, 0, 0};

  if (a > 0) {
    e[0] = alpha[0] / a;
    e[1] = alpha[1] / a;
    e[2] = alpha[2] / a;
  }
  RefAxisAngleMatrix(e, 2 * atan(0.5 * a), R);
}

static void Mat3Mul(const PetscReal A[9], const PetscReal B[9], PetscReal C[9])
{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

static void Mat3Transpose(const PetscReal A[9], PetscReal T[9])
{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) T[3 * j + i] = A[3 * i + j];
}

static void Mat3Vec(const PetscReal A[9], const PetscReal v[3], PetscReal out[3])
{
  for (int i = 0; i < 3; i++) out[i] = A[3 * i] * v[0] + A[3 * i + 1] * v[1] + A[3 * i + 2] * v[2];
}

static double Mat3Det(const PetscReal A[9])
{
  return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) + A[2] * (A[3] * A[7] - A[4] * A[6]);
}

static double MaxDiff(const PetscReal *a, const PetscReal *b, int n)
{
  double m = 0;

  for (int i = 0; i < n; i++) {
    double d = fabs(a[i] - b[i]);
    if (!(d <= m)) m = d; /* also propagates NaN */
  }
  return m;
}

static double MaxAbs(const PetscReal *a, int n)
{
  double m = 0;

  for (int i = 0; i < n; i++)
    if (!(fabs(a[i]) <= m)) m = fabs(a[i]);
  return m;
}

/* max |R R^T - I| */
static double OrthoError(const PetscReal R[9])
{
  PetscReal Rt[9], P[9], Id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

  Mat3Transpose(R, Rt);
  Mat3Mul(R, Rt, P);
  return MaxDiff(P, Id, 9);
}

/* max |q - ref| up to the sign of q (q and -q are the same rotation) */
static double QuatDiffSigned(const PetscReal q[4], const PetscReal r[4])
{
  PetscReal m[4] = {-r[0], -r[1], -r[2], -r[3]};
  double d1 = MaxDiff(q, r, 4), d2 = MaxDiff(q, m, 4);

  return d1 < d2 ? d1 : d2;
}

#define CHECK_SMALL(name, err, tol) DEM_CHECK(name, (err) <= (tol), "error %.3g > %.3g", (double)(err), (double)(tol))

static void TestSkew(void)
{
  PetscReal v[3] = {0.3, -1.7, 2.2}, u[3] = {-0.4, 0.9, 1.3}, S[9], Su[3], St[9], neg[9];
  PetscReal x[3] = {v[1] * u[2] - v[2] * u[1], v[2] * u[0] - v[0] * u[2], v[0] * u[1] - v[1] * u[0]};

  DemSkew(v, S);
  Mat3Vec(S, u, Su);
  CHECK_SMALL("skew: Skew(v) u = v x u", MaxDiff(Su, x, 3), 1e-15);
  Mat3Transpose(S, St);
  for (int i = 0; i < 9; i++) neg[i] = -S[i];
  CHECK_SMALL("skew: antisymmetric", MaxDiff(St, neg, 9), 0.0);
}

static void TestQuatMul(void)
{
  PetscReal i[4] = {0, 1, 0, 0}, j[4] = {0, 0, 1, 0}, k[4] = {0, 0, 0, 1}, mk[4] = {0, 0, 0, -1}, m1[4] = {-1, 0, 0, 0};
  PetscReal r[4], a[4], b[4], c[4], ab[4], abc1[4], abc2[4], t[4], ref[4];
  PetscReal ea[3], eb[3], Ra[9], Rb[9], Rab[9], Rq[9];
  double    err = 0;

  DemQuatMul(i, j, r);
  CHECK_SMALL("quatmul: i j = k", MaxDiff(r, k, 4), 0.0);
  DemQuatMul(j, i, r);
  CHECK_SMALL("quatmul: j i = -k", MaxDiff(r, mk, 4), 0.0);
  DemQuatMul(k, k, r);
  CHECK_SMALL("quatmul: k k = -1", MaxDiff(r, m1, 4), 0.0);

  for (int n = 0; n < 20; n++) {
    for (int l = 0; l < 4; l++) {
      a[l] = Lcg();
      b[l] = Lcg();
    }
    DemQuatMul(a, b, r);
    RefQuatMul(a, b, ref);
    if (MaxDiff(r, ref, 4) > err) err = MaxDiff(r, ref, 4);
  }
  CHECK_SMALL("quatmul: matches scalar/vector Hamilton product (20 random pairs)", err, 4e-16);

  for (int l = 0; l < 4; l++) c[l] = Lcg();
  DemQuatMul(a, b, ab);
  DemQuatMul(ab, c, abc1);
  DemQuatMul(b, c, t);
  DemQuatMul(a, t, abc2);
  CHECK_SMALL("quatmul: associative", MaxDiff(abc1, abc2, 4), 1e-15);

  /* rotating by q_a q_b is rotating by q_b, then q_a: matrix R_a R_b */
  RandUnit(ea);
  RandUnit(eb);
  RefAxisAngleQuat(ea, 1.1, a);
  RefAxisAngleQuat(eb, -2.3, b);
  RefAxisAngleMatrix(ea, 1.1, Ra);
  RefAxisAngleMatrix(eb, -2.3, Rb);
  Mat3Mul(Ra, Rb, Rab);
  DemQuatMul(a, b, ab);
  DemQuatToMatrix(ab, Rq);
  CHECK_SMALL("quatmul: matrix of q_a q_b is R_a R_b", MaxDiff(Rq, Rab, 9), 2e-15);

  t[0] = a[0];
  t[1] = a[1];
  t[2] = a[2];
  t[3] = a[3];
  DemQuatMul(t, b, t);
  CHECK_SMALL("quatmul: output aliasing the first input", MaxDiff(t, ab, 4), 0.0);
  t[0] = b[0];
  t[1] = b[1];
  t[2] = b[2];
  t[3] = b[3];
  DemQuatMul(a, t, t);
  CHECK_SMALL("quatmul: output aliasing the second input", MaxDiff(t, ab, 4), 0.0);
}

static void TestQuatNormalize(void)
{
  PetscReal q[4] = {3, -1, 2, 0.5}, z[4] = {0, 0, 0, 0}, id[4] = {1, 0, 0, 0};
  double    n0 = sqrt(9 + 1 + 4 + 0.25);
  PetscReal ref[4] = {3 / n0, -1 / n0, 2 / n0, 0.5 / n0};

  DemQuatNormalize(q);
  CHECK_SMALL("quatnormalize: q/|q|", MaxDiff(q, ref, 4), 2e-16);
  DEM_CHECK_ABS("quatnormalize: unit norm", sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]), 1.0, 2e-16);
  DemQuatNormalize(z);
  CHECK_SMALL("quatnormalize: zero quaternion -> identity", MaxDiff(z, id, 4), 0.0);
}

/* Rotation matrix, q v q*, and inverse rotation against axis-angle references. */
static void TestQuatToMatrixAndRotate(void)
{
  const double angles[] = {0.0, 1e-12, 0.4, -1.3, 2.0, 3.0, M_PI - 1e-9, M_PI, -M_PI + 1e-6};
  const int    na       = (int)(sizeof(angles) / sizeof(angles[0]));
  double       eR = 0, eOrtho = 0, eDet = 0, eSandwich = 0, eRot = 0, eInv = 0, eInvT = 0;

  for (int n = 0; n < na; n++) {
    for (int rep = 0; rep < 4; rep++) {
      PetscReal e[3], v[3], q[4], R[9], Rref[9], Rt[9], qc[4], p[4], vq[4], qv[4], out[3], ref[3], back[3], Rtv[3];

      RandUnit(e);
      RandVec(v);
      RefAxisAngleQuat(e, angles[n], q);
      RefAxisAngleMatrix(e, angles[n], Rref);
      DemQuatToMatrix(q, R);
      eR        = fmax(eR, MaxDiff(R, Rref, 9));
      eOrtho    = fmax(eOrtho, OrthoError(R));
      eDet      = fmax(eDet, fabs(Mat3Det(R) - 1));

      /* q (0,v) q* with the local Hamilton product vs R v */
      qc[0] = q[0];
      qc[1] = -q[1];
      qc[2] = -q[2];
      qc[3] = -q[3];
      p[0]  = 0;
      p[1]  = v[0];
      p[2]  = v[1];
      p[3]  = v[2];
      RefQuatMul(q, p, qv);
      RefQuatMul(qv, qc, vq);
      Mat3Vec(R, v, out);
      eSandwich = fmax(eSandwich, fmax(fabs(vq[0]), MaxDiff(out, vq + 1, 3)));

      DemQuatRotate(q, v, out);
      RefRotateVec(e, angles[n], v, ref);
      eRot = fmax(eRot, MaxDiff(out, ref, 3));

      DemQuatRotateInv(q, out, back);
      eInv = fmax(eInv, MaxDiff(back, v, 3));
      Mat3Transpose(Rref, Rt);
      Mat3Vec(Rt, v, Rtv);
      DemQuatRotateInv(q, v, out);
      eInvT = fmax(eInvT, MaxDiff(out, Rtv, 3));
    }
  }
  CHECK_SMALL("quattomatrix: equals axis-angle matrix (36 cases, 0..pi)", eR, 2e-15);
  CHECK_SMALL("quattomatrix: R R^T = I", eOrtho, 2e-15);
  CHECK_SMALL("quattomatrix: det R = 1", eDet, 2e-15);
  CHECK_SMALL("quattomatrix: R v = q v q*", eSandwich, 4e-15);
  CHECK_SMALL("quatrotate: equals Rodrigues rotation formula", eRot, 4e-15);
  CHECK_SMALL("quatrotateinv: undoes quatrotate", eInv, 4e-15);
  CHECK_SMALL("quatrotateinv: equals R^T v", eInvT, 4e-15);

  {
    PetscReal e[3] = {0, 0, 1}, q[4], v[3] = {1, 2, 3}, ref[3] = {-2, 1, 3};

    RefAxisAngleQuat(e, M_PI / 2, q);
    DemQuatRotate(q, v, v);
    CHECK_SMALL("quatrotate: 90 deg about z, output aliasing input", MaxDiff(v, ref, 3), 1e-15);
    DemQuatRotateInv(q, v, v);
    ref[0] = 1;
    ref[1] = 2;
    CHECK_SMALL("quatrotateinv: output aliasing input", MaxDiff(v, ref, 3), 1e-15);
  }
}

/* Euler rotation vector <-> quaternion, including tiny and near-pi angles. */
static void TestRotationVector(void)
{
  const double angles[] = {1e-300, 1e-12, 1e-8, 9.99e-5, 1.0001e-4, 0.01, 0.7, 1.5, 2.5, 3.1, M_PI - 1e-6, M_PI - 1e-10};
  const int    na       = (int)(sizeof(angles) / sizeof(angles[0]));
  double       eQ = 0, eRound = 0, eNeg = 0, eUnit = 0;

  for (int n = 0; n < na; n++) {
    for (int rep = 0; rep < 3; rep++) {
      PetscReal e[3], th[3], q[4], qref[4], back[3], mq[4], back2[3];
      double    t = angles[n];

      RandUnit(e);
      th[0] = t * e[0];
      th[1] = t * e[1];
      th[2] = t * e[2];
      DemQuatFromRotationVector(th, q);
      RefAxisAngleQuat(e, t, qref);
      /* the vector part relative to each component's own size, so that tiny angles are checked
         to round-off; w absolutely (near pi, w = cos(t/2) inherits the round-off of |theta|) */
      eQ = fmax(eQ, fabs(q[0] - qref[0]));
      for (int l = 1; l < 4; l++) eQ = fmax(eQ, fabs(q[l] - qref[l]) / fmax(fabs(qref[l]), 1e-300));
      eUnit = fmax(eUnit, fabs(sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]) - 1));

      DemQuatToRotationVector(qref, back);
      for (int l = 0; l < 3; l++) eRound = fmax(eRound, fabs(back[l] - th[l]) / t);
      mq[0] = -qref[0];
      mq[1] = -qref[1];
      mq[2] = -qref[2];
      mq[3] = -qref[3];
      DemQuatToRotationVector(mq, back2);
      eNeg = fmax(eNeg, MaxDiff(back, back2, 3));
    }
  }
  CHECK_SMALL("quatfromrotvec: equals (cos(t/2), sin(t/2) e), vector part relative (1e-300..pi)", eQ, 4e-16);
  CHECK_SMALL("quatfromrotvec: unit norm", eUnit, 4e-16);
  CHECK_SMALL("quattorotvec: round trip, relative to |theta| (1e-300..pi-1e-10)", eRound, 4e-16);
  CHECK_SMALL("quattorotvec: q and -q give the same theta", eNeg, 0.0);

  {
    PetscReal z[3] = {0, 0, 0}, q[4], id[4] = {1, 0, 0, 0}, th[3];

    DemQuatFromRotationVector(z, q);
    CHECK_SMALL("quatfromrotvec: theta = 0 gives the identity exactly", MaxDiff(q, id, 4), 0.0);
    DemQuatToRotationVector(id, th);
    CHECK_SMALL("quattorotvec: identity gives theta = 0 exactly", MaxAbs(th, 3), 0.0);
  }
  {
    /* components whose squares underflow: the norm is 0 but theta is not */
    PetscReal th[3] = {3e-170, -4e-170, 1e-170}, q[4], back[3];

    DemQuatFromRotationVector(th, q);
    DEM_CHECK("quatfromrotvec: underflowing norm gives q = (1, theta/2)",
              q[0] == 1 && q[1] == 1.5e-170 && q[2] == -2e-170 && q[3] == 0.5e-170, "got (%g, %g, %g, %g)", q[0], q[1], q[2], q[3]);
    DemQuatToRotationVector(q, back);
    DEM_CHECK("quattorotvec: underflowing norm round trip", back[0] == th[0] && back[1] == th[1] && back[2] == th[2], "got (%g, %g, %g)", back[0], back[1], back[2]);
  }
  {
    /* theta = 1e-12 about x: q = (1 - t^2/8, t/2, 0, 0) and back */
    PetscReal th[3] = {1e-12, 0, 0}, q[4], back[3];

    DemQuatFromRotationVector(th, q);
    DEM_CHECK_REL("quatfromrotvec: theta 1e-12, x = theta/2", q[1], 0.5e-12, 2e-16);
    DEM_CHECK_ABS("quatfromrotvec: theta 1e-12, w = 1", q[0], 1.0, 0.0);
    DemQuatToRotationVector(q, back);
    DEM_CHECK_REL("quattorotvec: theta 1e-12 round trip", back[0], 1e-12, 2e-16);
  }
  {
    /* exactly pi about a unit axis: |theta| = pi, and the matrix is right */
    PetscReal e[3], q[4], th[3], R[9], Rref[9];

    RandUnit(e);
    RefAxisAngleQuat(e, M_PI, q);
    DemQuatToRotationVector(q, th);
    DEM_CHECK_REL("quattorotvec: angle pi has |theta| = pi", sqrt(th[0] * th[0] + th[1] * th[1] + th[2] * th[2]), M_PI, 4e-16);
    RefAxisAngleMatrix(e, M_PI, Rref);
    DemQuatFromRotationVector(th, q);
    DemQuatToMatrix(q, R);
    CHECK_SMALL("quattorotvec: angle pi round trip through the matrix", MaxDiff(R, Rref, 9), 2e-15);
  }
  {
    /* angle 4 rad (w < 0) comes back as the equivalent rotation of 2 pi - 4 about -e */
    PetscReal e[3], th[3], q[4], back[3], ref[3];

    RandUnit(e);
    for (int l = 0; l < 3; l++) th[l] = 4.0 * e[l];
    DemQuatFromRotationVector(th, q);
    DemQuatToRotationVector(q, back);
    for (int l = 0; l < 3; l++) ref[l] = (4.0 - 2 * M_PI) * e[l];
    CHECK_SMALL("quattorotvec: angle > pi maps to |theta| <= pi", MaxDiff(back, ref, 3), 2e-15);
  }
  {
    /* a non-unit quaternion: theta depends only on the direction of q */
    PetscReal e[3], q[4], th[3], ref[3];

    RandUnit(e);
    RefAxisAngleQuat(e, 2.2, q);
    for (int l = 0; l < 4; l++) q[l] *= 3.5;
    DemQuatToRotationVector(q, th);
    for (int l = 0; l < 3; l++) ref[l] = 2.2 * e[l];
    CHECK_SMALL("quattorotvec: scale of q does not matter", MaxDiff(th, ref, 3), 2e-15);
  }
}

/* Rescaled Rodrigues vector alpha = 2 tan(theta/2) e (001 eq. (9)). */
static void TestRodrigues(void)
{
  const double angles[] = {0.0, 1e-12, 1e-6, 0.3, 1.0, 2.0, 2.9, M_PI - 1e-4, M_PI - 1e-7, -1.2};
  const int    na       = (int)(sizeof(angles) / sizeof(angles[0]));
  double       eQ = 0, eA = 0, eNeg = 0, eM = 0, eMq = 0, eOrtho = 0, eDet = 0;

  for (int n = 0; n < na; n++) {
    for (int rep = 0; rep < 3; rep++) {
      PetscReal e[3], al[3], q[4], qref[4], back[3], mq[4], back2[3], Q[9], Rref[9], Rq[9];
      double    t = angles[n], a = 2 * tan(0.5 * t);

      RandUnit(e);
      for (int l = 0; l < 3; l++) al[l] = a * e[l];
      RefAxisAngleQuat(e, t, qref);
      RefAxisAngleMatrix(e, t, Rref);

      DemQuatFromRodrigues(al, q);
      eQ = fmax(eQ, QuatDiffSigned(q, qref));

      DemRodriguesFromQuat(qref, back);
      for (int l = 0; l < 3; l++) eA = fmax(eA, fabs(back[l] - al[l]) / fmax(fabs(a), 1e-300));
      for (int l = 0; l < 4; l++) mq[l] = -qref[l];
      DemRodriguesFromQuat(mq, back2);
      eNeg = fmax(eNeg, MaxDiff(back, back2, 3));

      DemRodriguesToMatrix(al, Q);
      eM     = fmax(eM, MaxDiff(Q, Rref, 9));
      eOrtho = fmax(eOrtho, OrthoError(Q));
      eDet   = fmax(eDet, fabs(Mat3Det(Q) - 1));
      DemQuatToMatrix(q, Rq);
      eMq = fmax(eMq, MaxDiff(Q, Rq, 9));
    }
  }
  CHECK_SMALL("quatfromrodrigues: equals (cos(t/2), sin(t/2) e), alpha = 2 tan(t/2) e", eQ, 4e-16);
  CHECK_SMALL("rodriguesfromquat: equals 2 tan(t/2) e, relative to |alpha| (up to pi - 1e-7)", eA, 1e-14);
  CHECK_SMALL("rodriguesfromquat: q and -q give the same alpha", eNeg, 0.0);
  CHECK_SMALL("rodriguestomatrix: equals axis-angle matrix (000 eq. (6))", eM, 4e-15);
  CHECK_SMALL("rodriguestomatrix: Q Q^T = I", eOrtho, 4e-15);
  CHECK_SMALL("rodriguestomatrix: det Q = 1", eDet, 4e-15);
  CHECK_SMALL("rodriguestomatrix: equals quattomatrix(quatfromrodrigues)", eMq, 4e-15);

  {
    /* 90 deg about z: alpha = (0, 0, 2), Q exactly known */
    PetscReal al[3] = {0, 0, 2}, Q[9], ref[9] = {0, -1, 0, 1, 0, 0, 0, 0, 1}, q[4], qref[4] = {M_SQRT1_2, 0, 0, M_SQRT1_2};

    DemRodriguesToMatrix(al, Q);
    CHECK_SMALL("rodriguestomatrix: alpha = (0,0,2) is 90 deg about z", MaxDiff(Q, ref, 9), 2e-16);
    DemQuatFromRodrigues(al, q);
    CHECK_SMALL("quatfromrodrigues: alpha = (0,0,2) is 90 deg about z", MaxDiff(q, qref, 4), 2e-16);
  }
  {
    /* very large alpha (theta within 1e-200 of pi): q stays unit and finite */
    PetscReal al[3] = {0, 3e200, -4e200}, q[4], ref[4] = {0, 0, 0.6, -0.8};

    DemQuatFromRodrigues(al, q);
    CHECK_SMALL("quatfromrodrigues: huge alpha does not overflow", MaxDiff(q, ref, 4), 2e-16);
  }
  {
    /* round trip alpha -> q -> alpha */
    PetscReal al[3] = {0.7, -1.9, 3.3}, q[4], back[3];

    DemQuatFromRodrigues(al, q);
    DemRodriguesFromQuat(q, back);
    CHECK_SMALL("rodrigues: alpha -> q -> alpha round trip", MaxDiff(back, al, 3), 4e-15);
  }
}

/* 001 eq. (11): alpha_{1+2} is the Rodrigues vector of Q2 Q1. */
static void TestCompose(void)
{
  double eM = 0, eQ = 0;

  for (int n = 0; n < 30; n++) {
    PetscReal e1[3], e2[3], a1[3], a2[3], a12[3], R1[9], R2[9], R21[9], R12[9], q1[4], q2[4], q21[4], qc[4];
    double    t1 = 1.4 * Lcg(), t2 = 1.4 * Lcg();

    RandUnit(e1);
    RandUnit(e2);
    for (int l = 0; l < 3; l++) {
      a1[l] = 2 * tan(0.5 * t1) * e1[l];
      a2[l] = 2 * tan(0.5 * t2) * e2[l];
    }
    RefAxisAngleMatrix(e1, t1, R1);
    RefAxisAngleMatrix(e2, t2, R2);
    Mat3Mul(R2, R1, R21);
    DemRodriguesCompose(a1, a2, a12);
    RefRodriguesMatrix(a12, R12);
    eM = fmax(eM, MaxDiff(R12, R21, 9));

    RefAxisAngleQuat(e1, t1, q1);
    RefAxisAngleQuat(e2, t2, q2);
    RefQuatMul(q2, q1, q21);
    DemQuatFromRodrigues(a12, qc);
    eQ = fmax(eQ, QuatDiffSigned(qc, q21));
  }
  CHECK_SMALL("rodriguescompose: Q(alpha_{1+2}) = Q2 Q1 (30 random pairs, |theta| < 1.4)", eM, 4e-15);
  CHECK_SMALL("rodriguescompose: alpha_{1+2} is the rotation of q2 q1", eQ, 4e-15);

  {
    PetscReal a1[3] = {0.3, -0.2, 0.5}, a2[3] = {-0.1, 0.4, 0.2}, r12[3], r21[3], z[3] = {0, 0, 0}, t[3], neg[3];

    DemRodriguesCompose(a1, a2, r12);
    DemRodriguesCompose(a2, a1, r21);
    DEM_CHECK("rodriguescompose: order matters (Q2 Q1 != Q1 Q2)", MaxDiff(r12, r21, 3) > 1e-3, "difference %.3g", MaxDiff(r12, r21, 3));
    DemRodriguesCompose(a1, z, t);
    CHECK_SMALL("rodriguescompose: with zero is the identity map", MaxDiff(t, a1, 3), 0.0);
    for (int l = 0; l < 3; l++) neg[l] = -a1[l];
    DemRodriguesCompose(a1, neg, t);
    CHECK_SMALL("rodriguescompose: alpha then -alpha gives zero", MaxAbs(t, 3), 1e-16);
    for (int l = 0; l < 3; l++) t[l] = a1[l];
    DemRodriguesCompose(t, a2, t);
    CHECK_SMALL("rodriguescompose: output aliasing the first input", MaxDiff(t, r12, 3), 0.0);
    for (int l = 0; l < 3; l++) t[l] = a2[l];
    DemRodriguesCompose(a1, t, t);
    CHECK_SMALL("rodriguescompose: output aliasing the second input", MaxDiff(t, r12, 3), 0.0);
  }
}

/* 000 eqs. (8)-(9): omega = Xi alpha-dot with Skew(omega) = Q-dot Q^T; checked by central
   differences of the axis-angle matrix along alpha(s) = alpha + s alpha-dot. */
static void TestXi(void)
{
  const double h = 1e-5;
  double       eW = 0, eSkew = 0, eB = 0;

  for (int n = 0; n < 12; n++) {
    PetscReal e[3], al[3], ad[3], ap[3], am[3], Qp[9], Qm[9], Q[9], Qt[9], dQ[9], W[9], Wb[9], Xi[9], Xit[9], w[3], wb[3], wXi[3], wbXi[3];
    double    t = (n == 0) ? 0.0 : 2.8 * Lcg();

    RandUnit(e);
    RandVec(ad);
    for (int l = 0; l < 3; l++) {
      al[l] = 2 * tan(0.5 * t) * e[l];
      ap[l] = al[l] + h * ad[l];
      am[l] = al[l] - h * ad[l];
    }
    RefRodriguesMatrix(ap, Qp);
    RefRodriguesMatrix(am, Qm);
    RefRodriguesMatrix(al, Q);
    for (int l = 0; l < 9; l++) dQ[l] = (Qp[l] - Qm[l]) / (2 * h);
    Mat3Transpose(Q, Qt);
    Mat3Mul(dQ, Qt, W);  /* spatial: Q-dot Q^T */
    Mat3Mul(Qt, dQ, Wb); /* material: Q^T Q-dot */
    w[0]  = 0.5 * (W[7] - W[5]);
    w[1]  = 0.5 * (W[2] - W[6]);
    w[2]  = 0.5 * (W[3] - W[1]);
    wb[0] = 0.5 * (Wb[7] - Wb[5]);
    wb[1] = 0.5 * (Wb[2] - Wb[6]);
    wb[2] = 0.5 * (Wb[3] - Wb[1]);
    eSkew = fmax(eSkew, fmax(fabs(W[1] + W[3]), fmax(fabs(W[2] + W[6]), fmax(fabs(W[5] + W[7]), MaxAbs((PetscReal[3]){W[0], W[4], W[8]}, 3)))));

    DemRodriguesXi(al, Xi);
    Mat3Vec(Xi, ad, wXi);
    Mat3Transpose(Xi, Xit);
    Mat3Vec(Xit, ad, wbXi);
    eW = fmax(eW, MaxDiff(w, wXi, 3));
    eB = fmax(eB, MaxDiff(wb, wbXi, 3));
  }
  CHECK_SMALL("rodriguesxi: Q-dot Q^T is skew (finite differences)", eSkew, 1e-9);
  CHECK_SMALL("rodriguesxi: omega = Xi alpha-dot vs central differences of Q(alpha) (000 eq. (8))", eW, 1e-9);
  CHECK_SMALL("rodriguesxi: body omega = Xi^T alpha-dot vs central differences", eB, 1e-9);

  {
    PetscReal z[3] = {0, 0, 0}, Xi[9], Id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

    DemRodriguesXi(z, Xi);
    CHECK_SMALL("rodriguesxi: Xi(0) = I", MaxDiff(Xi, Id, 9), 0.0);
  }
  {
    /* Xi = Q Xi^T (a consequence of the two angular velocities differing by Q) */
    PetscReal al[3] = {0.9, -1.6, 0.4}, Xi[9], Xit[9], Q[9], P[9];

    DemRodriguesXi(al, Xi);
    DemRodriguesToMatrix(al, Q);
    Mat3Transpose(Xi, Xit);
    Mat3Mul(Q, Xit, P);
    CHECK_SMALL("rodriguesxi: Xi = Q Xi^T", MaxDiff(P, Xi, 9), 4e-16);
  }
}

int main(void)
{
  TestSkew();
  TestQuatMul();
  TestQuatNormalize();
  TestQuatToMatrixAndRotate();
  TestRotationVector();
  TestRodrigues();
  TestCompose();
  TestXi();
  return dem_test_failed != 0;
}

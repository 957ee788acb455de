/*
  rotation.c - rotation math: unit quaternions and the rescaled Rodrigues rotation vector.

  Model: orientations are unit quaternions q = (w,x,y,z) = (cos(theta/2), sin(theta/2) e),
  body -> world, Hamilton product. Integrators that work with incremental rotations use the
  rescaled Rodrigues vector alpha = 2 tan(theta/2) e of 001_558b02b5fc003581.txt eq. (9),
  its rotation tensor Q(alpha) (001 eq. (10); 000_c57329b1a40312e0.txt eq. (6)), the
  composition rule alpha_{1+2} of Q2 Q1 (001 eq. (11); 000 eq. (7)) and the matrix Xi that
  maps alpha-dot to the spatial angular velocity, omega = Xi alpha-dot (000 eqs. (8)-(9)).

  Conventions: matrices are row-major double[9]; Skew(v) u = v x u; theta denotes the Euler
  rotation vector (angle * axis). Every function accepts an output that aliases an input.
  These are plain inline-math functions: no PetscErrorCode, no collectives, no config keys.
*/
#include <petscsys.h>
#undef I /* <complex.h>, included by petscsys.h, defines I; dem.h uses I as a name */
#include "dem.h"
#include "quat_inline.h"

/* Below this angle (rad) the Euler-vector conversions use Taylor series: the first omitted
   term is O(1e-24) relative, far below round-off, and no division by a tiny norm happens. */
#define DEM_ROT_SERIES_EPS 1.0e-4

static inline PetscReal Dot3(const PetscReal a[3], const PetscReal b[3])
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void Cross3(const PetscReal a[3], const PetscReal b[3], PetscReal c[3])
{
  PetscReal t0 = a[1] * b[2] - a[2] * b[1];
  PetscReal t1 = a[2] * b[0] - a[0] * b[2];
  PetscReal t2 = a[0] * b[1] - a[1] * b[0];

  c[0] = t0;
  c[1] = t1;
  c[2] = t2;
}

/* Hamilton product ab = (a_w b_w - a_v . b_v, a_w b_v + b_w a_v + a_v x b_v). Rotating by ab
   is rotating by b first, then by a. */
void DemQuatMul(const PetscReal a[4], const PetscReal b[4], PetscReal ab[4])
{
  PetscReal w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  PetscReal x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  PetscReal y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  PetscReal z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];

  ab[0] = w;
  ab[1] = x;
  ab[2] = y;
  ab[3] = z;
}

/* Scales q to unit length. A zero quaternion carries no rotation: it becomes the identity. */
void DemQuatNormalize(PetscReal q[4])
{
  PetscReal n = PetscSqrtReal(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);

  if (n > 0) {
    PetscReal s = 1.0 / n;
    q[0] *= s;
    q[1] *= s;
    q[2] *= s;
    q[3] *= s;
  } else {
    q[0] = 1;
    q[1] = q[2] = q[3] = 0;
  }
}

/* R with R v = q v q*, for unit q (the arithmetic: quat_inline.h). */
void DemQuatToMatrix(const PetscReal q[4], PetscReal R[9])
{
  DemQuatToMatrix_Inline(q, R);
}

/* out = q v q* for unit q (body -> world) (the arithmetic: quat_inline.h). */
void DemQuatRotate(const PetscReal q[4], const PetscReal v[3], PetscReal out[3])
{
  DemQuatRotate_Inline(q, v, out);
}

/* out = q* v q for unit q (world -> body): the rotation by the conjugate quaternion. */
void DemQuatRotateInv(const PetscReal q[4], const PetscReal v[3], PetscReal out[3])
{
  DemQuatRotateInv_Inline(q, v, out);
}

/* q = (cos(theta/2), sin(theta/2)/theta * theta_vec). sin(theta/2)/theta is replaced by its
   series 1/2 (1 - theta^2/24 + theta^4/1920) for small theta, so theta = 0 (or a norm that
   underflows) needs no division. */
void DemQuatFromRotationVector(const PetscReal theta[3], PetscReal q[4])
{
  PetscReal t2 = Dot3(theta, theta), t = PetscSqrtReal(t2), s;
  PetscReal v[3] = {theta[0], theta[1], theta[2]};

  if (t < DEM_ROT_SERIES_EPS) s = 0.5 * (1.0 - t2 / 24.0 + t2 * t2 / 1920.0);
  else s = PetscSinReal(0.5 * t) / t;
  q[0] = PetscCosReal(0.5 * t);
  q[1] = s * v[0];
  q[2] = s * v[1];
  q[3] = s * v[2];
}

/* Inverse of DemQuatFromRotationVector with |theta| <= pi: q and -q give the same theta.
   The angle is 2 atan2(|u|, |w|), accurate near 0 and near pi (unlike acos(w)); the factor
   angle/|u| = (2/|w|) atan(t)/t, t = |u|/|w|, uses the series 1 - t^2/3 + t^4/5 for small t. */
void DemQuatToRotationVector(const PetscReal q[4], PetscReal theta[3])
{
  PetscReal u[3] = {q[1], q[2], q[3]};
  PetscReal aw = PetscAbsReal(q[0]), un = PetscSqrtReal(Dot3(u, u)), f;

  if (aw == 0 && un == 0) {
    theta[0] = theta[1] = theta[2] = 0;
    return;
  }
  if (un < DEM_ROT_SERIES_EPS * aw) {
    PetscReal t2 = (un / aw) * (un / aw);
    f = (2.0 / aw) * (1.0 - t2 / 3.0 + t2 * t2 / 5.0);
  } else f = 2.0 * PetscAtan2Real(un, aw) / un;
  if (q[0] < 0) f = -f;
  theta[0] = f * u[0];
  theta[1] = f * u[1];
  theta[2] = f * u[2];
}

/* With alpha = 2 tan(theta/2) e (001_558b02b5fc003581.txt eq. (9)): cos(theta/2) = 2/sqrt(4+a^2)
   and sin(theta/2) e = alpha/sqrt(4+a^2), so q = (2, alpha)/|(2, alpha)|, free of
   trigonometric functions. The norm is taken scaled so that a huge alpha does not overflow. */
void DemQuatFromRodrigues(const PetscReal alpha[3], PetscReal q[4])
{
  PetscReal m = 2.0, s, n;

  if (PetscAbsReal(alpha[0]) > m) m = PetscAbsReal(alpha[0]);
  if (PetscAbsReal(alpha[1]) > m) m = PetscAbsReal(alpha[1]);
  if (PetscAbsReal(alpha[2]) > m) m = PetscAbsReal(alpha[2]);
  s = 1.0 / m;
  q[0] = 2.0 * s;
  q[1] = alpha[0] * s;
  q[2] = alpha[1] * s;
  q[3] = alpha[2] * s;
  n = PetscSqrtReal(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  q[0] /= n;
  q[1] /= n;
  q[2] /= n;
  q[3] /= n;
}

/* alpha = 2 tan(theta/2) e = 2 u / w (001 eq. (9)); q and -q give the same alpha. Singular at
   theta = pi (w = 0): the caller keeps rotations below pi, as the Rodrigues parameterization
   requires (001, text after eq. (7)); w = 0 gives infinite components. */
void DemRodriguesFromQuat(const PetscReal q[4], PetscReal alpha[3])
{
  PetscReal s = 2.0 / q[0];

  alpha[0] = s * q[1];
  alpha[1] = s * q[2];
  alpha[2] = s * q[3];
}

/* Q = I + 4/(4 + a^2) (A + A^2/2), A = Skew(alpha): 000_c57329b1a40312e0.txt eq. (6). 001 eq. (10)
   prints the factor as 4/(1 + a^2); with alpha = 2 tan(theta/2) e only 4/(4 + a^2) reproduces the
   Euler-Rodrigues formula (001 eq. (1)), so 000 eq. (6) is used. A^2 = alpha alpha^T - a^2 I. */
void DemRodriguesToMatrix(const PetscReal alpha[3], PetscReal Q[9])
{
  PetscReal a0 = alpha[0], a1 = alpha[1], a2 = alpha[2];
  PetscReal aa = a0 * a0 + a1 * a1 + a2 * a2, h = 4.0 / (4.0 + aa), hh = 0.5 * h;

  Q[0] = 1 + hh * (a0 * a0 - aa);
  Q[1] = h * (-a2) + hh * a0 * a1;
  Q[2] = h * a1 + hh * a0 * a2;
  Q[3] = h * a2 + hh * a1 * a0;
  Q[4] = 1 + hh * (a1 * a1 - aa);
  Q[5] = h * (-a0) + hh * a1 * a2;
  Q[6] = h * (-a1) + hh * a2 * a0;
  Q[7] = h * a0 + hh * a2 * a1;
  Q[8] = 1 + hh * (a2 * a2 - aa);
}

/* alpha_{1+2} = 4/(4 - a1.a2) (a1 + a2 - 1/2 a1 x a2), the Rodrigues vector of Q2 Q1 (rotation
   a1 first, then a2): 001_558b02b5fc003581.txt eq. (11), equal to 000 eq. (7) with
   a1 = alpha^i, a2 = alpha^Delta. Singular when the total rotation reaches pi (a1.a2 = 4). */
void DemRodriguesCompose(const PetscReal a1[3], const PetscReal a2[3], PetscReal a12[3])
{
  PetscReal c[3], s = 4.0 / (4.0 - Dot3(a1, a2));

  Cross3(a1, a2, c);
  c[0] = s * (a1[0] + a2[0] - 0.5 * c[0]);
  c[1] = s * (a1[1] + a2[1] - 0.5 * c[1]);
  c[2] = s * (a1[2] + a2[2] - 0.5 * c[2]);
  a12[0] = c[0];
  a12[1] = c[1];
  a12[2] = c[2];
}

/* Xi = 4/(4 + alpha.alpha) (I + A/2), A = Skew(alpha): 000_c57329b1a40312e0.txt eq. (9). It maps
   the time derivative of alpha to the spatial angular velocity, omega = Xi alpha-dot with
   Skew(omega) = Q-dot Q^T (000 eq. (8)); the material (body) angular velocity is Xi^T alpha-dot,
   and Xi^T maps a moment to the pseudo-moment conjugate to delta alpha (000 eq. (24)). */
void DemRodriguesXi(const PetscReal alpha[3], PetscReal Xi[9])
{
  PetscReal h = 4.0 / (4.0 + Dot3(alpha, alpha)), hh = 0.5 * h;
  PetscReal a0 = alpha[0], a1 = alpha[1], a2 = alpha[2];

  Xi[0] = h;
  Xi[1] = -hh * a2;
  Xi[2] = hh * a1;
  Xi[3] = hh * a2;
  Xi[4] = h;
  Xi[5] = -hh * a0;
  Xi[6] = -hh * a1;
  Xi[7] = hh * a0;
  Xi[8] = h;
}

/* S = Skew(v), the matrix with S u = v x u. */
void DemSkew(const PetscReal v[3], PetscReal S[9])
{
  PetscReal v0 = v[0], v1 = v[1], v2 = v[2];

  S[0] = 0;
  S[1] = -v2;
  S[2] = v1;
  S[3] = v2;
  S[4] = 0;
  S[5] = -v0;
  S[6] = -v1;
  S[7] = v0;
  S[8] = 0;
}

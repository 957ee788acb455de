/*
  rotor.c - free rotation of a rigid body with principal inertia I over a time step, for the
  drift of the explicit integrators (verlet's aspherical path).

  Model: 002_a4a9ff6a3ba65368.txt eq. (5)-(7): the quaternion follows q' = 1/2 q o omega with
  omega the body-frame angular velocity, and omega obeys Euler's equations
  I omega' + omega x I omega = t in the body frame. Between the two half-kicks of velocity
  Verlet (which apply the torque to the angular momentum at fixed orientation) the body
  rotates freely, L_world constant. That free rotation is integrated by the symmetric
  splitting of Dullweber, Leimkuhler and McLachlan (J. Chem. Phys. 107, 1997) - the
  rotational part of Miller et al.'s NO_SQUISH scheme, 002 ref. [38]: the Hamiltonian
  T = sum_k pi_k^2 / (2 I_k) (pi = I omega, body frame) is split into its three terms, each of
  which is integrated exactly - a rotation of the body about its principal axis k by
  phi = tau pi_k / I_k, during which pi turns by -phi about the same axis - and composed as
    R1(dt/2) R2(dt/2) R3(dt) R2(dt/2) R1(dt/2).
  The composition is symplectic and time-reversible, so the energy of a free asymmetric top
  stays within O(dt^2) of its initial value for all time (no drift), and each sub-rotation
  keeps L_world exactly, so |L| and its direction are conserved to round-off.
  Input and output are the world-frame angular velocity w and the unit quaternion q
  (body -> world, w,x,y,z); these are plain math functions without collectives.
*/
#include "demimpl.h"
#include "dem_isa.h"
#include "quat_inline.h"

/* body rotation by phi = tau pi_k / I_k (iI = 1/I) about principal axis k:
   q <- q o (cos phi/2, sin phi/2 e_k), pi <- R_k(phi)^T pi. The series constants are
   reciprocals (multiplications: this runs five times per body and step) */
DEM_HOT_INLINE void DemRotorSub(int k, PetscReal tau, const PetscReal iI[3], PetscReal q[4], PetscReal pi[3])
{
  const PetscReal phi = tau * pi[k] * iI[k], h = 0.5 * phi, h2 = h * h;
  const int       i = k == 2 ? 0 : k + 1, j = k == 0 ? 2 : k - 1;
  PetscReal       ch, sh, c, s, q0 = q[0], qv[3] = {q[1], q[2], q[3]}, pi_i, pi_j;

  if (PetscAbsReal(h) < 1e-2) { /* the series to round-off (next terms ~ h^10/10! < 1e-26) */
    ch = 1 - 0.5 * h2 * (1 - (1.0 / 12) * h2 * (1 - (1.0 / 30) * h2 * (1 - (1.0 / 56) * h2)));
    sh = h * (1 - (1.0 / 6) * h2 * (1 - (1.0 / 20) * h2 * (1 - (1.0 / 42) * h2 * (1 - (1.0 / 72) * h2))));
  } else {
    ch = PetscCosReal(h);
    sh = PetscSinReal(h);
  }
  c = 1 - 2 * sh * sh; /* cos phi, sin phi from the half angle */
  s = 2 * sh * ch;
  /* Hamilton product q o (ch, sh e_k): w = q0 ch - sh qv_k, v = ch qv + sh (q0 e_k + qv x e_k) */
  q[0]     = q0 * ch - sh * qv[k];
  q[1 + k] = ch * qv[k] + sh * q0;
  q[1 + i] = ch * qv[i] + sh * qv[j];  /* (qv x e_k)_i = qv_j for (i, j, k) cyclic */
  q[1 + j] = ch * qv[j] - sh * qv[i];  /* (qv x e_k)_j = -qv_i */
  /* components (i, j) of pi rotate by -phi in the plane normal to e_k */
  pi_i  = c * pi[i] + s * pi[j];
  pi_j  = -s * pi[i] + c * pi[j];
  pi[i] = pi_i;
  pi[j] = pi_j;
}

DEM_HOT_INLINE void DemRigidRotorStep_Inline(const PetscReal I[3], PetscReal dt, PetscReal q[4], PetscReal w[3])
{
  PetscReal       R[9], pi[3], nq;
  const PetscReal iI[3] = {1 / I[0], 1 / I[1], 1 / I[2]};

  DemQuatToMatrix_Inline(q, R); /* body -> world; R^T w is the body-frame angular velocity */
  for (int k = 0; k < 3; k++) pi[k] = I[k] * (R[k] * w[0] + R[3 + k] * w[1] + R[6 + k] * w[2]);
  DemRotorSub(0, 0.5 * dt, iI, q, pi);
  DemRotorSub(1, 0.5 * dt, iI, q, pi);
  DemRotorSub(2, dt, iI, q, pi);
  DemRotorSub(1, 0.5 * dt, iI, q, pi);
  DemRotorSub(0, 0.5 * dt, iI, q, pi);
  nq = 1 / PetscSqrtReal(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int k = 0; k < 4; k++) q[k] *= nq;
  DemQuatToMatrix_Inline(q, R);
  for (int k = 0; k < 3; k++) pi[k] *= iI[k];
  for (int r = 0; r < 3; r++) w[r] = R[3 * r] * pi[0] + R[3 * r + 1] * pi[1] + R[3 * r + 2] * pi[2];
}

/* the step twice (dem_isa.h): for the baseline (MMDEM_ISA=generic: the arithmetic of the
   out-of-line DemQuatToMatrix, bitwise as before) and for AVX2 with FMA (the products of the
   matrices, the series and the sub-rotations fused: last-bit differences) */
static void DemRigidRotorStep_Generic(const PetscReal I[3], PetscReal dt, PetscReal q[4], PetscReal w[3])
{
  DemRigidRotorStep_Inline(I, dt, q, w);
}
#if DEM_HAVE_ISA_V3
DEM_ISA_V3 static void DemRigidRotorStep_V3(const PetscReal I[3], PetscReal dt, PetscReal q[4], PetscReal w[3])
{
  DemRigidRotorStep_Inline(I, dt, q, w);
}
#endif

/*
  DemRigidRotorStep_Private - advances q and the world angular velocity w of a body with
  principal inertia I[3] (body frame) by dt of torque-free motion. Not collective.
*/
void DemRigidRotorStep_Private(const PetscReal I[3], PetscReal dt, PetscReal q[4], PetscReal w[3])
{
#if DEM_HAVE_ISA_V3
  if (DemIsaV3()) {
    DemRigidRotorStep_V3(I, dt, q, w);
    return;
  }
#endif
  DemRigidRotorStep_Generic(I, dt, q, w);
}

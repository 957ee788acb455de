/*
  verlet.c - integrator `verlet`: explicit velocity Verlet (kick-drift-kick), the scheme of
  LAMMPS's fix nve/sphere that 003 compares against (003 section 3).

    v(n+1/2) = v(n) + dt/2 a(n)          w(n+1/2) = w(n) + dt/2 I^-1 t(n)
    x(n+1)   = x(n) + dt v(n+1/2)         q(n+1)   = exp(dt/2 w(n+1/2)) q(n)
    forces at x(n+1) (velocity-dependent terms use v(n+1/2), as LAMMPS does)
    v(n+1)   = v(n+1/2) + dt/2 a(n+1)    w(n+1)   = w(n+1/2) + dt/2 I^-1 t(n+1)

  Angular velocities and torques are in the world frame. For isotropic inertia (spheres) the
  rotational update is exact in the sense above; the angular update uses
  I_world^-1 = R diag(1/I) R^T and no gyroscopic term, which is right for spheres. Bodies whose
  principal inertia differ (002 eq. (5)-(7)) take the same kicks (the torque changes the
  angular momentum at fixed orientation) and drift by the torque-free rotation of rotor.c, a
  symplectic splitting that updates q and w together (angular momentum kept, energy of a
  free asymmetric top bounded).
  Dissipated energy: velocity Verlet changes the kinetic energy by exactly
  dt/2 (F(n) + F(n+1)).v(n+1/2) plus a telescoping term, so the energy taken by the dashpots over
  a step is -dt/2 (fd(n) + fd(n+1)).v(n+1/2) (fd: the dissipative part of the body forces and
  torques), plus what the friction return mappings remove (eslip). The bookkeeping then closes
  to the same bounded, second-order error as the conservative energy.

  On steps after which nothing reads the state (DemVerletMayDefer) the second kick is deferred
  to the next step's first pass over the bodies, which does both kicks and the drift body by
  body with the same operations (bitwise the undeferred scheme; tests/cases/verlet_defer.py);
  ops->sync completes a deferred kick when the state must be read after all (a signal, a failure).

  Keys: type, dt, dt_fraction, petsc_options (none of its own).
*/
#include "demimpl.h"
#include "dem_isa.h"
#include "quat_inline.h"

typedef struct {
  /* DemVerletIsotropic's answer and what it was decided for */
  int              iso;
  PetscInt         iso_n, iso_builds;
  const PetscReal *iso_I;
  /* a second kick deferred to the next step's pass (DemIntegratorStep_Verlet): its half step,
     and the step's dt, power of fd(n) at v(n+1/2) and friction return-mapping energy, which
     complete the dissipation when its power is known */
  PetscBool pend;
  PetscReal pend_h, pend_dt, pend_pold, pend_eslip;
} DemIntegrator_Verlet;

/* what the two passes over the bodies check on the way (DemIntegratorStep_Verlet) */
typedef struct {
  int       moved; /* some body moved more than half the skin since the last neighbour build */
  PetscReal nf;    /* 0 * (sum of the new x, q, v, w): not finite iff one of them is not */
} DemVerletChecks;

static PetscErrorCode DemIntegratorSetFromConfig_Verlet(DemIntegrator ig, DemNode cfg)
{
  PetscFunctionBegin;
  PetscCall(DemIntegratorAllowKeys_Private(cfg, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* q <- dq q with the Cayley form dq = (1, dt w / 2) / |.|: a unit quaternion without
   trigonometry, rotating by 2 atan(|w| dt / 2) = |w| dt (1 + O((w dt)^2)), an error of the
   order of the scheme's */
DEM_HOT_INLINE void DemVerletCayley(PetscReal *q, const PetscReal *w, PetscReal dt)
{
  PetscReal hx = 0.5 * dt * w[0], hy = 0.5 * dt * w[1], hz = 0.5 * dt * w[2];
  PetscReal q0 = q[0] - hx * q[1] - hy * q[2] - hz * q[3];
  PetscReal q1 = q[1] + hx * q[0] + hy * q[3] - hz * q[2];
  PetscReal q2 = q[2] - hx * q[3] + hy * q[0] + hz * q[1];
  PetscReal q3 = q[3] + hx * q[2] - hy * q[1] + hz * q[0];
  PetscReal r  = 1.0 / PetscSqrtReal(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3);
  q[0] = q0 * r, q[1] = q1 * r, q[2] = q2 * r, q[3] = q3 * r;
}

/*
  The first half of a step in one pass over the bodies: kick by h = dt/2 (plane problems:
  the constraint of DemSimConstrain), the power of the last evaluation's dissipative forces at
  the new velocities (sum over bodies of fd.v + td.w; one addition per body into the running
  sum, so that the sum does not chain six additions per body), and the drift of positions and
  orientations. Returns that power.
*/
DEM_HOT_INLINE PetscReal DemVerletKickDrift_Inline(DemSim sim, PetscReal dt, const int iso, DemVerletChecks *ck, PetscInt i0, PetscReal s)
{
  DemBodyStore *bs = &sim->bodies;
  const PetscInt n = bs->n, plane = sim->dim == 2;
  const PetscReal h = 0.5 * dt, *restrict iI = bs->inv_I, *restrict im = bs->inv_m, *restrict mass = bs->m;
  const PetscReal g0 = sim->gravity[0], g1 = sim->gravity[1], g2 = sim->gravity[2], *restrict I = bs->I;
  PetscReal *restrict f = bs->f, *restrict t = bs->t, *restrict fd = sim->fd, *restrict td = sim->td;
  PetscReal *restrict v = bs->v, *restrict w = bs->w, *restrict x = bs->x, *restrict q = bs->q;
  const PetscReal *restrict x0 = sim->nl.x0;
  const PetscReal lim = 0.25 * sim->skin * sim->skin;
  const int       havex0 = x0 && sim->nl.x0cap >= 3 * n;
  PetscReal nf0 = 0, nf1 = 0;
  int       moved = !havex0;

  for (PetscInt i = i0; i < n; i++) {
    PetscReal *restrict vi = v + 3 * i, *restrict wi = w + 3 * i;
    const PetscReal hm = h * im[i];
    const int       sphere = iso || (iI[3 * i] == iI[3 * i + 1] && iI[3 * i + 1] == iI[3 * i + 2]); /* fixed bodies have 0 */
    const int       drift  = im[i] != 0 || (bs->flags[i] & DEM_PRESCRIBED);
    vi[0] += hm * f[3 * i];
    vi[1] += hm * f[3 * i + 1];
    vi[2] += hm * f[3 * i + 2];
    if (sphere) {
      const PetscReal hI = h * iI[3 * i];
      wi[0] += hI * t[3 * i];
      wi[1] += hI * t[3 * i + 1];
      wi[2] += hI * t[3 * i + 2];
    } else {
      PetscReal tb[3], dw[3];
      DemQuatRotateInv_Inline(q + 4 * i, t + 3 * i, tb);
      tb[0] *= h * iI[3 * i], tb[1] *= h * iI[3 * i + 1], tb[2] *= h * iI[3 * i + 2];
      DemQuatRotate_Inline(q + 4 * i, tb, dw);
      wi[0] += dw[0], wi[1] += dw[1], wi[2] += dw[2];
    }
    if (plane) vi[2] = 0, wi[0] = wi[1] = 0;
    s += (fd[3 * i] * vi[0] + td[3 * i] * wi[0]) + (fd[3 * i + 1] * vi[1] + td[3 * i + 1] * wi[1]) + (fd[3 * i + 2] * vi[2] + td[3 * i + 2] * wi[2]); /* fd(n) at v(n+1/2) */
    { /* f, t, fd, td are used up: the next evaluation's start (gravity on mobile bodies, zero
         torques and dissipative parts; forces.c skips its own pass, sim->prezeroed) */
      const PetscReal m = im[i] == 0 ? 0.0 : mass[i];
      f[3 * i] = 0.0 + m * g0, f[3 * i + 1] = 0.0 + m * g1, f[3 * i + 2] = 0.0 + m * g2;
      t[3 * i] = t[3 * i + 1] = t[3 * i + 2] = 0;
      fd[3 * i] = fd[3 * i + 1] = fd[3 * i + 2] = 0;
      td[3 * i] = td[3 * i + 1] = td[3 * i + 2] = 0;
    }
    if (drift) {
      x[3 * i] += dt * vi[0];
      x[3 * i + 1] += dt * vi[1];
      x[3 * i + 2] += dt * vi[2];
      if (!iso && (I[3 * i] != I[3 * i + 1] || I[3 * i + 1] != I[3 * i + 2])) { /* aspherical: torque-free rotation, 002 eq. (5)-(7) (rotor.c) */
        if (im[i] > 0 && (wi[0] != 0 || wi[1] != 0 || wi[2] != 0)) DemRigidRotorStep_Private(I + 3 * i, dt, q + 4 * i, wi);
      } else if (wi[0] != 0 || wi[1] != 0 || wi[2] != 0) DemVerletCayley(q + 4 * i, wi, dt);
    }
    /* the checks run.c and neighbour.c would make in passes of their own, on the new x and q:
       the neighbour list's displacement rule (DemSimUpdateNeighbours) and finite values (NaN
       and Inf propagate through 0 * (...); two sums so that the additions do not chain) */
    if (havex0) {
      const PetscReal d0 = x[3 * i] - x0[3 * i], d1 = x[3 * i + 1] - x0[3 * i + 1], d2 = x[3 * i + 2] - x0[3 * i + 2];
      moved |= d0 * d0 + d1 * d1 + d2 * d2 > lim;
    }
    nf0 += 0 * ((x[3 * i] + x[3 * i + 1]) + x[3 * i + 2]);
    nf1 += 0 * ((q[4 * i] + q[4 * i + 1]) + (q[4 * i + 2] + q[4 * i + 3]));
  }
  ck->moved = moved;
  ck->nf    = nf0 + nf1;
  return s;
}

/* the second half kick; returns the power of the new dissipative forces at v(n+1/2), before
   the kick (summed as in DemVerletKickDrift) */
DEM_HOT_INLINE PetscReal DemVerletKickPower_Inline(DemSim sim, PetscReal h, const int iso, DemVerletChecks *ck, PetscInt i0, PetscReal s)
{
  DemBodyStore *bs = &sim->bodies;
  const PetscInt n = bs->n, plane = sim->dim == 2;
  const PetscReal *restrict f = bs->f, *restrict t = bs->t, *restrict iI = bs->inv_I, *restrict im = bs->inv_m;
  const PetscReal *restrict fd = sim->fd, *restrict td = sim->td;
  PetscReal *restrict v = bs->v, *restrict w = bs->w;
  PetscReal nf0 = 0, nf1 = 0;

  for (PetscInt i = i0; i < n; i++) {
    PetscReal *restrict vi = v + 3 * i, *restrict wi = w + 3 * i;
    const PetscReal hm = h * im[i];
    s += (fd[3 * i] * vi[0] + td[3 * i] * wi[0]) + (fd[3 * i + 1] * vi[1] + td[3 * i + 1] * wi[1]) + (fd[3 * i + 2] * vi[2] + td[3 * i + 2] * wi[2]); /* fd(n+1) at v(n+1/2) */
    vi[0] += hm * f[3 * i];
    vi[1] += hm * f[3 * i + 1];
    vi[2] += hm * f[3 * i + 2];
    if (iso || (iI[3 * i] == iI[3 * i + 1] && iI[3 * i + 1] == iI[3 * i + 2])) { /* spheres; fixed bodies have 0 */
      const PetscReal hI = h * iI[3 * i];
      wi[0] += hI * t[3 * i];
      wi[1] += hI * t[3 * i + 1];
      wi[2] += hI * t[3 * i + 2];
    } else {
      PetscReal tb[3], dw[3];
      DemQuatRotateInv_Inline(bs->q + 4 * i, t + 3 * i, tb);
      tb[0] *= h * iI[3 * i], tb[1] *= h * iI[3 * i + 1], tb[2] *= h * iI[3 * i + 2];
      DemQuatRotate_Inline(bs->q + 4 * i, tb, dw);
      wi[0] += dw[0], wi[1] += dw[1], wi[2] += dw[2];
    }
    if (plane) vi[2] = 0, wi[0] = wi[1] = 0;
    nf0 += 0 * ((vi[0] + vi[1]) + vi[2]); /* finite v and w after the kick (see KickDrift) */
    nf1 += 0 * ((wi[0] + wi[1]) + wi[2]);
  }
  ck->nf += nf0 + nf1;
  return s;
}

/* each loop twice: baseline and AVX2+FMA (dem_isa.h); and in each a variant for stores whose
   bodies all have isotropic inertia (spheres, walls), without the per-body test */
static PetscReal DemVerletKickDrift_Generic(DemSim sim, PetscReal dt, int iso, DemVerletChecks *ck)
{
  return iso ? DemVerletKickDrift_Inline(sim, dt, 1, ck, 0, 0.0) : DemVerletKickDrift_Inline(sim, dt, 0, ck, 0, 0.0);
}
static PetscReal DemVerletKickPower_Generic(DemSim sim, PetscReal h, int iso, DemVerletChecks *ck)
{
  return iso ? DemVerletKickPower_Inline(sim, h, 1, ck, 0, 0.0) : DemVerletKickPower_Inline(sim, h, 0, ck, 0, 0.0);
}
#if DEM_HAVE_ISA_V3
DEM_ISA_V3 static PetscReal DemVerletKickDrift_V3(DemSim sim, PetscReal dt, int iso, DemVerletChecks *ck)
{
  return iso ? DemVerletKickDrift_Inline(sim, dt, 1, ck, 0, 0.0) : DemVerletKickDrift_Inline(sim, dt, 0, ck, 0, 0.0);
}
DEM_ISA_V3 static PetscReal DemVerletKickPower_V3(DemSim sim, PetscReal h, int iso, DemVerletChecks *ck)
{
  return iso ? DemVerletKickPower_Inline(sim, h, 1, ck, 0, 0.0) : DemVerletKickPower_Inline(sim, h, 0, ck, 0, 0.0);
}
#endif

#if DEM_HAVE_ISA_V4
/*
  The two passes once more, for AVX-512 (dem_isa.h), when every body is isotropic and the
  problem is not a plane one (the settle and chute benchmarks): eight bodies per iteration,
  their x, v, w, f, t, fd, td as three 8-double vectors each (the arrays' xyz interleaving
  kept), per-body values (1/m, m, the drift flag) spread to the three lanes of their body by a
  permute, and the quaternions transposed to four vectors of eight for the Cayley rotation.
  Lane by lane the operations and their roundings are the scalar loops' as the AVX2+FMA copy
  compiles them (a*b + c*d as fma(a, b, c*d), a - b*c as fnmadd), and the power sums add the
  bodies' terms one after another in body order, so the results are bitwise those of
  MMDEM_ISA=avx2 (tests/cases/fused_kernel.py compares the two). Bodies past the last multiple
  of eight take the scalar loop.
*/
  #include <immintrin.h>

static const long long DemV4Spread[3][8] = {{0, 0, 0, 1, 1, 1, 2, 2}, {2, 3, 3, 3, 4, 4, 4, 5}, {5, 5, 6, 6, 6, 7, 7, 7}};
/* x, y, z of eight bodies from their three interleaved vectors: first two sources, then the third */
static const long long DemV4Split3Idx[3][2][8] = {
  {{0, 3, 6, 9, 12, 15, 0, 0}, {0, 1, 2, 3, 4, 5, 10, 13}},
  {{1, 4, 7, 10, 13, 0, 0, 0}, {0, 1, 2, 3, 4, 8, 11, 14}},
  {{2, 5, 8, 11, 14, 0, 0, 0}, {0, 1, 2, 3, 4, 9, 12, 15}}
};
/* the 4 x 8 transposes of the quaternions */
static const long long DemV4Q[4][8] = {{0, 4, 8, 12, 1, 5, 9, 13}, {2, 6, 10, 14, 3, 7, 11, 15}, {0, 1, 2, 3, 8, 9, 10, 11}, {4, 5, 6, 7, 12, 13, 14, 15}};

  #define DEM_V4IDX(a) _mm512_loadu_si512((const void *)(a))

DEM_ISA_V4 static inline void DemV4Spread3(__m512d v8, __m512d out[3])
{
  for (int k = 0; k < 3; k++) out[k] = _mm512_permutexvar_pd(DEM_V4IDX(DemV4Spread[k]), v8);
}
DEM_ISA_V4 static inline void DemV4Split3(const __m512d in[3], __m512d out[3])
{
  for (int c = 0; c < 3; c++) out[c] = _mm512_permutex2var_pd(_mm512_permutex2var_pd(in[0], DEM_V4IDX(DemV4Split3Idx[c][0]), in[1]), DEM_V4IDX(DemV4Split3Idx[c][1]), in[2]);
}
/* q of eight bodies (four interleaved vectors) to its four components, and back */
DEM_ISA_V4 static inline void DemV4QSplit(const __m512d in[4], __m512d out[4])
{
  const __m512d ab01 = _mm512_permutex2var_pd(in[0], DEM_V4IDX(DemV4Q[0]), in[1]), cd01 = _mm512_permutex2var_pd(in[0], DEM_V4IDX(DemV4Q[1]), in[1]);
  const __m512d ab23 = _mm512_permutex2var_pd(in[2], DEM_V4IDX(DemV4Q[0]), in[3]), cd23 = _mm512_permutex2var_pd(in[2], DEM_V4IDX(DemV4Q[1]), in[3]);
  out[0] = _mm512_permutex2var_pd(ab01, DEM_V4IDX(DemV4Q[2]), ab23), out[1] = _mm512_permutex2var_pd(ab01, DEM_V4IDX(DemV4Q[3]), ab23);
  out[2] = _mm512_permutex2var_pd(cd01, DEM_V4IDX(DemV4Q[2]), cd23), out[3] = _mm512_permutex2var_pd(cd01, DEM_V4IDX(DemV4Q[3]), cd23);
}
DEM_ISA_V4 static inline void DemV4QJoin(const __m512d in[4], __m512d out[4])
{
  const __m512d ab01 = _mm512_permutex2var_pd(in[0], DEM_V4IDX(DemV4Q[2]), in[1]), ab23 = _mm512_permutex2var_pd(in[0], DEM_V4IDX(DemV4Q[3]), in[1]);
  const __m512d cd01 = _mm512_permutex2var_pd(in[2], DEM_V4IDX(DemV4Q[2]), in[3]), cd23 = _mm512_permutex2var_pd(in[2], DEM_V4IDX(DemV4Q[3]), in[3]);
  out[0] = _mm512_permutex2var_pd(ab01, DEM_V4IDX(DemV4Q[0]), cd01), out[1] = _mm512_permutex2var_pd(ab01, DEM_V4IDX(DemV4Q[1]), cd01);
  out[2] = _mm512_permutex2var_pd(ab23, DEM_V4IDX(DemV4Q[0]), cd23), out[3] = _mm512_permutex2var_pd(ab23, DEM_V4IDX(DemV4Q[1]), cd23);
}
/* s += each body's fd.v + td.w, in body order, from the per-lane fma(fd, v, td*w) */
DEM_ISA_V4 static inline PetscReal DemV4PowerChain(PetscReal s, const __m512d p[3])
{
  PetscReal c[24];
  for (int k = 0; k < 3; k++) _mm512_storeu_pd(c + 8 * k, p[k]);
  for (int j = 0; j < 8; j++) s += (c[3 * j] + c[3 * j + 1]) + c[3 * j + 2];
  return s;
}

/* with fused, the pass first completes the last step's deferred second kick (by hp = dt_last / 2;
   DemIntegratorStep_Verlet), body by body, as DemVerletKickPower_V4 would in a pass of its own:
   the same operations on each body, its power summed into *sp in body order, its finiteness
   check added to ck */
DEM_ISA_V4 static inline PetscReal DemVerletKickDrift_V4Body(DemSim sim, PetscReal dt, DemVerletChecks *ck, const int fused, PetscReal hp, PetscReal *sp)
{
  DemBodyStore *bs = &sim->bodies;
  const PetscInt n = bs->n, n8 = n - n % 8;
  const PetscReal h = 0.5 * dt, *restrict iI = bs->inv_I, *restrict im = bs->inv_m, *restrict mass = bs->m;
  PetscReal *restrict f = bs->f, *restrict t = bs->t, *restrict fd = sim->fd, *restrict td = sim->td;
  PetscReal *restrict v = bs->v, *restrict w = bs->w, *restrict x = bs->x, *restrict q = bs->q;
  const unsigned *restrict flags = bs->flags;
  const PetscReal *restrict x0 = sim->nl.x0;
  const int       havex0 = x0 && sim->nl.x0cap >= 3 * n;
  const __m512d   zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0), vh = _mm512_set1_pd(h), vdt = _mm512_set1_pd(dt), vhw = _mm512_set1_pd(0.5 * dt);
  const __m512d   lim = _mm512_set1_pd(0.25 * sim->skin * sim->skin);

  const __m512d   vhp = _mm512_set1_pd(hp);
  __m512d         g[3], nfv = zero, nfp = zero;
  PetscReal       s = 0, gl[24], s_last = fused ? *sp : 0;
  int             moved = 0;


  for (int l = 0; l < 24; l++) gl[l] = sim->gravity[l % 3];
  for (int k = 0; k < 3; k++) g[k] = _mm512_loadu_pd(gl + 8 * k);
  for (PetscInt i0 = 0; i0 < n8; i0 += 8) {
    const size_t    b3 = 3 * (size_t)i0;
    const __m512d   im8 = _mm512_loadu_pd(im + i0);
    const __mmask8  mob = _mm512_cmp_pd_mask(im8, zero, _CMP_NEQ_UQ);
    const __mmask8  pre = _mm256_test_epi32_mask(_mm256_loadu_si256((const __m256i *)(flags + i0)), _mm256_set1_epi32((int)DEM_PRESCRIBED));
    const __mmask8  drift = mob | pre;
    __m512d         hm[3], m[3], dm[3], V[3], W[3], F[3], T[3], P[3], X[3], hmp[3], Pp[3];

    DemV4Spread3(_mm512_mul_pd(vh, im8), hm);
    if (fused) DemV4Spread3(_mm512_mul_pd(vhp, im8), hmp);
    DemV4Spread3(_mm512_maskz_mov_pd(mob, _mm512_loadu_pd(mass + i0)), m); /* m = 1/m == 0 ? 0 : mass */
    DemV4Spread3(_mm512_maskz_mov_pd(drift, one), dm);
    for (int k = 0; k < 3; k++) {
      const size_t o = b3 + 8 * k;
      const __m512d I3 = _mm512_loadu_pd(iI + o), FD = _mm512_loadu_pd(fd + o), TD = _mm512_loadu_pd(td + o);
      __m512d       V0 = _mm512_loadu_pd(v + o), W0 = _mm512_loadu_pd(w + o);
      F[k] = _mm512_loadu_pd(f + o), T[k] = _mm512_loadu_pd(t + o);
      if (fused) { /* the last step's second kick: DemVerletKickPower_V4's operations */
        Pp[k] = _mm512_fmadd_pd(FD, V0, _mm512_mul_pd(TD, W0));
        V0    = _mm512_fmadd_pd(hmp[k], F[k], V0);
        W0    = _mm512_fmadd_pd(_mm512_mul_pd(vhp, I3), T[k], W0);
        nfp   = _mm512_add_pd(nfp, _mm512_add_pd(_mm512_mul_pd(zero, V0), _mm512_mul_pd(zero, W0)));
      }
      V[k] = _mm512_fmadd_pd(hm[k], F[k], V0);
      W[k] = _mm512_fmadd_pd(_mm512_mul_pd(vh, I3), T[k], W0); /* isotropic: the three 1/I of a body are equal */
      P[k] = _mm512_fmadd_pd(FD, V[k], _mm512_mul_pd(TD, W[k]));
      _mm512_storeu_pd(v + o, V[k]), _mm512_storeu_pd(w + o, W[k]);
      _mm512_storeu_pd(f + o, _mm512_fmadd_pd(m[k], g[k], zero)); /* the next evaluation's start */
      _mm512_storeu_pd(t + o, zero), _mm512_storeu_pd(fd + o, zero), _mm512_storeu_pd(td + o, zero);
      X[k] = _mm512_loadu_pd(x + o);
      X[k] = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(dm[k], zero, _CMP_NEQ_UQ), X[k], _mm512_fmadd_pd(vdt, V[k], X[k]));
      _mm512_storeu_pd(x + o, X[k]);
      nfv = _mm512_add_pd(nfv, _mm512_mul_pd(zero, X[k]));
    }
    if (fused) s_last = DemV4PowerChain(s_last, Pp);
    s = DemV4PowerChain(s, P);
    { /* Cayley rotation of the drifting bodies that spin (DemVerletCayley) */
      __m512d        wc[3];
      __mmask8       spin;
      DemV4Split3(W, wc);
      spin = drift & (_mm512_cmp_pd_mask(wc[0], zero, _CMP_NEQ_UQ) | _mm512_cmp_pd_mask(wc[1], zero, _CMP_NEQ_UQ) | _mm512_cmp_pd_mask(wc[2], zero, _CMP_NEQ_UQ));
      __m512d        Q[4], qc[4];
      for (int k = 0; k < 4; k++) Q[k] = _mm512_loadu_pd(q + 4 * (size_t)i0 + 8 * k);
      if (spin) {
        const __m512d hx = _mm512_mul_pd(vhw, wc[0]), hy = _mm512_mul_pd(vhw, wc[1]), hz = _mm512_mul_pd(vhw, wc[2]);
        __m512d       qn[4], r2, r;
        DemV4QSplit(Q, qc);
        qn[0] = _mm512_fnmadd_pd(hz, qc[3], _mm512_fnmadd_pd(hy, qc[2], _mm512_fnmadd_pd(hx, qc[1], qc[0])));
        qn[1] = _mm512_fnmadd_pd(hz, qc[2], _mm512_fmadd_pd(hy, qc[3], _mm512_fmadd_pd(hx, qc[0], qc[1])));
        qn[2] = _mm512_fmadd_pd(hz, qc[1], _mm512_fmadd_pd(hy, qc[0], _mm512_fnmadd_pd(hx, qc[3], qc[2])));
        qn[3] = _mm512_fmadd_pd(hz, qc[0], _mm512_fnmadd_pd(hy, qc[1], _mm512_fmadd_pd(hx, qc[2], qc[3])));
        r2    = _mm512_fmadd_pd(qn[3], qn[3], _mm512_fmadd_pd(qn[2], qn[2], _mm512_fmadd_pd(qn[0], qn[0], _mm512_mul_pd(qn[1], qn[1]))));
        r     = _mm512_div_pd(one, _mm512_sqrt_pd(r2));
        for (int c = 0; c < 4; c++) qc[c] = _mm512_mask_blend_pd(spin, qc[c], _mm512_mul_pd(qn[c], r));
        DemV4QJoin(qc, Q);
        for (int k = 0; k < 4; k++) _mm512_storeu_pd(q + 4 * (size_t)i0 + 8 * k, Q[k]);
      }
      for (int k = 0; k < 4; k++) nfv = _mm512_add_pd(nfv, _mm512_mul_pd(zero, Q[k]));
    }
    if (havex0) { /* the neighbour list's displacement rule on the new x */
      __m512d d[3], dc[3];
      for (int k = 0; k < 3; k++) d[k] = _mm512_sub_pd(X[k], _mm512_loadu_pd(x0 + b3 + 8 * k));
      DemV4Split3(d, dc);
      moved |= _mm512_cmp_pd_mask(_mm512_fmadd_pd(dc[2], dc[2], _mm512_fmadd_pd(dc[0], dc[0], _mm512_mul_pd(dc[1], dc[1]))), lim, _CMP_GT_OQ) != 0;
    }
  }
  if (fused) { /* the last n % 8 bodies: the deferred kick first */
    DemVerletChecks ckp = {0, 0};
    *sp = DemVerletKickPower_Inline(sim, hp, 1, &ckp, n8, s_last);
    nfp = _mm512_add_pd(nfp, _mm512_set1_pd(ckp.nf));
  }
  s = DemVerletKickDrift_Inline(sim, dt, 1, ck, n8, s); /* the last n % 8 bodies; sets ck */
  ck->moved |= moved;
  ck->nf += _mm512_reduce_add_pd(nfv);
  if (fused) ck->nf += _mm512_reduce_add_pd(nfp);
  return s;
}
DEM_ISA_V4 static PetscReal DemVerletKickDrift_V4(DemSim sim, PetscReal dt, DemVerletChecks *ck)
{
  return DemVerletKickDrift_V4Body(sim, dt, ck, 0, 0.0, NULL);
}
/* the last step's second kick (by hp, its power into *sp) and this step's kick and drift in one
   pass over the bodies: the same values as DemVerletKickPower_V4 and then DemVerletKickDrift_V4 */
DEM_ISA_V4 static PetscReal DemVerletKickKickDrift_V4(DemSim sim, PetscReal hp, PetscReal *sp, PetscReal dt, DemVerletChecks *ck)
{
  *sp = 0;
  return DemVerletKickDrift_V4Body(sim, dt, ck, 1, hp, sp);
}

DEM_ISA_V4 static PetscReal DemVerletKickPower_V4(DemSim sim, PetscReal h, DemVerletChecks *ck)
{
  DemBodyStore *bs = &sim->bodies;
  const PetscInt n = bs->n, n8 = n - n % 8;
  const PetscReal *restrict f = bs->f, *restrict t = bs->t, *restrict iI = bs->inv_I, *restrict im = bs->inv_m;
  const PetscReal *restrict fd = sim->fd, *restrict td = sim->td;
  PetscReal *restrict v = bs->v, *restrict w = bs->w;
  const __m512d   zero = _mm512_setzero_pd(), vh = _mm512_set1_pd(h);
  __m512d         nfv = zero;
  PetscReal       s = 0;

  for (PetscInt i0 = 0; i0 < n8; i0 += 8) {
    const size_t b3 = 3 * (size_t)i0;
    __m512d      hm[3], P[3];
    DemV4Spread3(_mm512_mul_pd(vh, _mm512_loadu_pd(im + i0)), hm);
    for (int k = 0; k < 3; k++) {
      const size_t  o = b3 + 8 * k;
      const __m512d V = _mm512_loadu_pd(v + o), W = _mm512_loadu_pd(w + o);
      P[k]            = _mm512_fmadd_pd(_mm512_loadu_pd(fd + o), V, _mm512_mul_pd(_mm512_loadu_pd(td + o), W)); /* fd(n+1) at v(n+1/2) */
      const __m512d Vn = _mm512_fmadd_pd(hm[k], _mm512_loadu_pd(f + o), V);
      const __m512d Wn = _mm512_fmadd_pd(_mm512_mul_pd(vh, _mm512_loadu_pd(iI + o)), _mm512_loadu_pd(t + o), W);
      _mm512_storeu_pd(v + o, Vn), _mm512_storeu_pd(w + o, Wn);
      nfv = _mm512_add_pd(nfv, _mm512_add_pd(_mm512_mul_pd(zero, Vn), _mm512_mul_pd(zero, Wn)));
    }
    s = DemV4PowerChain(s, P);
  }
  s = DemVerletKickPower_Inline(sim, h, 1, ck, n8, s); /* adds to ck->nf */
  ck->nf += _mm512_reduce_add_pd(nfv);
  return s;
}
#endif

#if DEM_HAVE_ISA_V3
/* MMDEM_ISA=avx2-scalar: the scalar AVX2+FMA loops instead of the 4-body ones (for comparing
   the two; tests/cases/fused_kernel.py) */
static int DemVerletScalarV3(void)
{
  static int scalar = -1;
  if (scalar < 0) {
    const char *e = getenv("MMDEM_ISA");
    scalar        = e && !strcmp(e, "avx2-scalar");
  }
  return scalar;
}
#endif

#if DEM_HAVE_ISA_V3
/*
  The two passes for AVX2+FMA when every body is isotropic and the problem is not a plane one:
  the AVX-512 copy's scheme above with four bodies per iteration, their x, v, w, f, t, fd, td as
  three 4-double vectors each (interleaving kept), per-body values spread to their three lanes
  by a permute, x, y, z of four bodies split out by two blends and a permute, the quaternions
  transposed 4 x 4. Lane by lane the operations and roundings are those of the scalar loops as
  the AVX2+FMA copy compiles them, and the power sums run in body order: bitwise the same
  results as the scalar AVX2 loops (tests/cases/fused_kernel.py, MMDEM_ISA=avx2 vs avx2-scalar).
  Bodies past the last multiple of four take the scalar loop.
*/
  #include <immintrin.h>
  #define DEM_V3SPREAD(v, out) (out[0] = _mm256_permute4x64_pd(v, 0x40), out[1] = _mm256_permute4x64_pd(v, 0xA5), out[2] = _mm256_permute4x64_pd(v, 0xFE))

/* x, y, z of four bodies from their three interleaved vectors */
DEM_ISA_V3 DEM_HOT_INLINE void DemV3Split3(const __m256d in[3], __m256d out[3])
{
  out[0] = _mm256_permute4x64_pd(_mm256_blend_pd(_mm256_blend_pd(in[0], in[1], 0x4), in[2], 0x2), 0x6C);
  out[1] = _mm256_permute4x64_pd(_mm256_blend_pd(_mm256_blend_pd(in[0], in[1], 0x9), in[2], 0x4), 0xB1);
  out[2] = _mm256_permute4x64_pd(_mm256_blend_pd(_mm256_blend_pd(in[0], in[1], 0x2), in[2], 0x9), 0xC6);
}
/* 4 x 4 transpose (quaternions of four bodies to their four components, and back) */
DEM_ISA_V3 DEM_HOT_INLINE void DemV3T4(const __m256d in[4], __m256d out[4])
{
  const __m256d t0 = _mm256_unpacklo_pd(in[0], in[1]), t1 = _mm256_unpackhi_pd(in[0], in[1]);
  const __m256d t2 = _mm256_unpacklo_pd(in[2], in[3]), t3 = _mm256_unpackhi_pd(in[2], in[3]);
  out[0] = _mm256_permute2f128_pd(t0, t2, 0x20), out[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  out[2] = _mm256_permute2f128_pd(t0, t2, 0x31), out[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
/* s += each body's fd.v + td.w, in body order, from the per-lane fma(fd, v, td*w) */
DEM_ISA_V3 DEM_HOT_INLINE PetscReal DemV3PowerChain(PetscReal s, const __m256d p[3])
{
  PetscReal c[12];
  for (int k = 0; k < 3; k++) _mm256_storeu_pd(c + 4 * k, p[k]);
  for (int j = 0; j < 4; j++) s += (c[3 * j] + c[3 * j + 1]) + c[3 * j + 2];
  return s;
}
DEM_ISA_V3 DEM_HOT_INLINE PetscReal DemV3Sum(__m256d v)
{
  const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

/* with fused, the last step's deferred second kick first, as in DemVerletKickDrift_V4Body */
DEM_ISA_V3 static inline PetscReal DemVerletKickDrift_V3IsoBody(DemSim sim, PetscReal dt, DemVerletChecks *ck, const int fused, PetscReal hp, PetscReal *sp)
{
  DemBodyStore *bs = &sim->bodies;
  const PetscInt n = bs->n, n4 = n - n % 4;
  const PetscReal h = 0.5 * dt, *restrict iI = bs->inv_I, *restrict im = bs->inv_m, *restrict mass = bs->m;
  PetscReal *restrict f = bs->f, *restrict t = bs->t, *restrict fd = sim->fd, *restrict td = sim->td;
  PetscReal *restrict v = bs->v, *restrict w = bs->w, *restrict x = bs->x, *restrict q = bs->q;
  const unsigned *restrict flags = bs->flags;
  const PetscReal *restrict x0 = sim->nl.x0;
  const int       havex0 = x0 && sim->nl.x0cap >= 3 * n;
  const __m256d   zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0), vh = _mm256_set1_pd(h), vdt = _mm256_set1_pd(dt), vhw = _mm256_set1_pd(0.5 * dt);
  const __m256d   lim = _mm256_set1_pd(0.25 * sim->skin * sim->skin);
  const __m128i   pflag = _mm_set1_epi32((int)DEM_PRESCRIBED);
  const __m256d   vhp = _mm256_set1_pd(hp);
  __m256d         g[3], nfv = zero, nfp = zero, movedv = zero;
  PetscReal       s = 0, gl[12], s_last = fused ? *sp : 0;

  for (int l = 0; l < 12; l++) gl[l] = sim->gravity[l % 3];
  for (int k = 0; k < 3; k++) g[k] = _mm256_loadu_pd(gl + 4 * k);
  for (PetscInt i0 = 0; i0 < n4; i0 += 4) {
    const size_t  b3 = 3 * (size_t)i0;
    const __m256d im4 = _mm256_loadu_pd(im + i0), mob = _mm256_cmp_pd(im4, zero, _CMP_NEQ_UQ);
    const __m128i fl = _mm_loadu_si128((const __m128i *)(flags + i0));
    const __m256d pre = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_xor_si128(_mm_cmpeq_epi32(_mm_and_si128(fl, pflag), _mm_setzero_si128()), _mm_set1_epi32(-1))));
    const __m256d drift = _mm256_or_pd(mob, pre);
    __m256d       hm[3], m[3], dm[3], V[3], W[3], F[3], T[3], P[3], X[3], hmp[3], Pp[3];

    DEM_V3SPREAD(_mm256_mul_pd(vh, im4), hm);
    if (fused) DEM_V3SPREAD(_mm256_mul_pd(vhp, im4), hmp);
    DEM_V3SPREAD(_mm256_and_pd(mob, _mm256_loadu_pd(mass + i0)), m); /* m = 1/m == 0 ? 0 : mass */
    DEM_V3SPREAD(drift, dm);
    for (int k = 0; k < 3; k++) {
      const size_t o = b3 + 4 * k;
      const __m256d I3 = _mm256_loadu_pd(iI + o), FD = _mm256_loadu_pd(fd + o), TD = _mm256_loadu_pd(td + o);
      __m256d       V0 = _mm256_loadu_pd(v + o), W0 = _mm256_loadu_pd(w + o);
      F[k] = _mm256_loadu_pd(f + o), T[k] = _mm256_loadu_pd(t + o);
      if (fused) { /* the last step's second kick: DemVerletKickPower_V3Iso's operations */
        Pp[k] = _mm256_fmadd_pd(FD, V0, _mm256_mul_pd(TD, W0));
        V0    = _mm256_fmadd_pd(hmp[k], F[k], V0);
        W0    = _mm256_fmadd_pd(_mm256_mul_pd(vhp, I3), T[k], W0);
        nfp   = _mm256_add_pd(nfp, _mm256_add_pd(_mm256_mul_pd(zero, V0), _mm256_mul_pd(zero, W0)));
      }
      V[k] = _mm256_fmadd_pd(hm[k], F[k], V0);
      W[k] = _mm256_fmadd_pd(_mm256_mul_pd(vh, I3), T[k], W0); /* isotropic: the three 1/I of a body are equal */
      P[k] = _mm256_fmadd_pd(FD, V[k], _mm256_mul_pd(TD, W[k]));
      _mm256_storeu_pd(v + o, V[k]), _mm256_storeu_pd(w + o, W[k]);
      _mm256_storeu_pd(f + o, _mm256_fmadd_pd(m[k], g[k], zero)); /* the next evaluation's start */
      _mm256_storeu_pd(t + o, zero), _mm256_storeu_pd(fd + o, zero), _mm256_storeu_pd(td + o, zero);
      X[k] = _mm256_loadu_pd(x + o);
      X[k] = _mm256_blendv_pd(X[k], _mm256_fmadd_pd(vdt, V[k], X[k]), dm[k]);
      _mm256_storeu_pd(x + o, X[k]);
      nfv = _mm256_add_pd(nfv, _mm256_mul_pd(zero, X[k]));
    }
    if (fused) s_last = DemV3PowerChain(s_last, Pp);
    s = DemV3PowerChain(s, P);
    { /* Cayley rotation of the drifting bodies that spin (DemVerletCayley) */
      __m256d wc[3], Q[4], qc[4], spin;
      DemV3Split3(W, wc);
      spin = _mm256_and_pd(drift, _mm256_or_pd(_mm256_or_pd(_mm256_cmp_pd(wc[0], zero, _CMP_NEQ_UQ), _mm256_cmp_pd(wc[1], zero, _CMP_NEQ_UQ)), _mm256_cmp_pd(wc[2], zero, _CMP_NEQ_UQ)));
      for (int k = 0; k < 4; k++) Q[k] = _mm256_loadu_pd(q + 4 * (size_t)i0 + 4 * k);
      if (_mm256_movemask_pd(spin)) {
        const __m256d hx = _mm256_mul_pd(vhw, wc[0]), hy = _mm256_mul_pd(vhw, wc[1]), hz = _mm256_mul_pd(vhw, wc[2]);
        __m256d       qn[4], r2, r;
        DemV3T4(Q, qc);
        qn[0] = _mm256_fnmadd_pd(hz, qc[3], _mm256_fnmadd_pd(hy, qc[2], _mm256_fnmadd_pd(hx, qc[1], qc[0])));
        qn[1] = _mm256_fnmadd_pd(hz, qc[2], _mm256_fmadd_pd(hy, qc[3], _mm256_fmadd_pd(hx, qc[0], qc[1])));
        qn[2] = _mm256_fmadd_pd(hz, qc[1], _mm256_fmadd_pd(hy, qc[0], _mm256_fnmadd_pd(hx, qc[3], qc[2])));
        qn[3] = _mm256_fmadd_pd(hz, qc[0], _mm256_fnmadd_pd(hy, qc[1], _mm256_fmadd_pd(hx, qc[2], qc[3])));
        r2    = _mm256_fmadd_pd(qn[3], qn[3], _mm256_fmadd_pd(qn[2], qn[2], _mm256_fmadd_pd(qn[0], qn[0], _mm256_mul_pd(qn[1], qn[1]))));
        r     = _mm256_div_pd(one, _mm256_sqrt_pd(r2));
        for (int c = 0; c < 4; c++) qc[c] = _mm256_blendv_pd(qc[c], _mm256_mul_pd(qn[c], r), spin);
        DemV3T4(qc, Q);
        for (int k = 0; k < 4; k++) _mm256_storeu_pd(q + 4 * (size_t)i0 + 4 * k, Q[k]);
      }
      for (int k = 0; k < 4; k++) nfv = _mm256_add_pd(nfv, _mm256_mul_pd(zero, Q[k]));
    }
    if (havex0) { /* the neighbour list's displacement rule on the new x */
      __m256d d[3], dc[3];
      for (int k = 0; k < 3; k++) d[k] = _mm256_sub_pd(X[k], _mm256_loadu_pd(x0 + b3 + 4 * k));
      DemV3Split3(d, dc);
      movedv = _mm256_or_pd(movedv, _mm256_cmp_pd(_mm256_fmadd_pd(dc[2], dc[2], _mm256_fmadd_pd(dc[0], dc[0], _mm256_mul_pd(dc[1], dc[1]))), lim, _CMP_GT_OQ));
    }
  }
  if (fused) { /* the last n % 4 bodies: the deferred kick first */
    DemVerletChecks ckp = {0, 0};
    *sp = DemVerletKickPower_Inline(sim, hp, 1, &ckp, n4, s_last);
    nfp = _mm256_add_pd(nfp, _mm256_set1_pd(ckp.nf));
  }
  s = DemVerletKickDrift_Inline(sim, dt, 1, ck, n4, s); /* the last n % 4 bodies; sets ck */
  ck->moved |= _mm256_movemask_pd(movedv) != 0;
  ck->nf += DemV3Sum(nfv);
  if (fused) ck->nf += DemV3Sum(nfp);
  return s;
}
DEM_ISA_V3 static PetscReal DemVerletKickDrift_V3Iso(DemSim sim, PetscReal dt, DemVerletChecks *ck)
{
  return DemVerletKickDrift_V3IsoBody(sim, dt, ck, 0, 0.0, NULL);
}
/* DemVerletKickKickDrift_V4's pass with four bodies at a time */
DEM_ISA_V3 static PetscReal DemVerletKickKickDrift_V3Iso(DemSim sim, PetscReal hp, PetscReal *sp, PetscReal dt, DemVerletChecks *ck)
{
  *sp = 0;
  return DemVerletKickDrift_V3IsoBody(sim, dt, ck, 1, hp, sp);
}

DEM_ISA_V3 static PetscReal DemVerletKickPower_V3Iso(DemSim sim, PetscReal h, DemVerletChecks *ck)
{
  DemBodyStore *bs = &sim->bodies;
  const PetscInt n = bs->n, n4 = n - n % 4;
  const PetscReal *restrict f = bs->f, *restrict t = bs->t, *restrict iI = bs->inv_I, *restrict im = bs->inv_m;
  const PetscReal *restrict fd = sim->fd, *restrict td = sim->td;
  PetscReal *restrict v = bs->v, *restrict w = bs->w;
  const __m256d   zero = _mm256_setzero_pd(), vh = _mm256_set1_pd(h);
  __m256d         nfv = zero;
  PetscReal       s = 0;

  for (PetscInt i0 = 0; i0 < n4; i0 += 4) {
    const size_t b3 = 3 * (size_t)i0;
    __m256d      hm[3], P[3];
    DEM_V3SPREAD(_mm256_mul_pd(vh, _mm256_loadu_pd(im + i0)), hm);
    for (int k = 0; k < 3; k++) {
      const size_t  o = b3 + 4 * k;
      const __m256d V = _mm256_loadu_pd(v + o), W = _mm256_loadu_pd(w + o);
      P[k]            = _mm256_fmadd_pd(_mm256_loadu_pd(fd + o), V, _mm256_mul_pd(_mm256_loadu_pd(td + o), W)); /* fd(n+1) at v(n+1/2) */
      const __m256d Vn = _mm256_fmadd_pd(hm[k], _mm256_loadu_pd(f + o), V);
      const __m256d Wn = _mm256_fmadd_pd(_mm256_mul_pd(vh, _mm256_loadu_pd(iI + o)), _mm256_loadu_pd(t + o), W);
      _mm256_storeu_pd(v + o, Vn), _mm256_storeu_pd(w + o, Wn);
      nfv = _mm256_add_pd(nfv, _mm256_add_pd(_mm256_mul_pd(zero, Vn), _mm256_mul_pd(zero, Wn)));
    }
    s = DemV3PowerChain(s, P);
  }
  s = DemVerletKickPower_Inline(sim, h, 1, ck, n4, s); /* adds to ck->nf */
  ck->nf += DemV3Sum(nfv);
  return s;
}
  #undef DEM_V3SPREAD
#endif

/* whether every body has isotropic inertia and inverse inertia; decided again when the store
   may have changed (its size, a neighbour rebuild: insertion, MPI migration) */
static int DemVerletIsotropic(DemIntegrator_Verlet *vv, DemSim sim)
{
  const DemBodyStore *bs = &sim->bodies;
  if (vv->iso_n != bs->n || vv->iso_builds != sim->nl.nbuilds || vv->iso_I != bs->I) {
    int iso = 1;
    for (PetscInt i = 0; i < bs->n; i++) {
      const PetscReal *I = bs->I + 3 * i, *iI = bs->inv_I + 3 * i;
      iso &= (I[0] == I[1]) & (I[1] == I[2]) & (iI[0] == iI[1]) & (iI[1] == iI[2]);
    }
    vv->iso = iso, vv->iso_n = bs->n, vv->iso_builds = sim->nl.nbuilds, vv->iso_I = bs->I;
  }
  return vv->iso;
}

/* which copy of the two passes runs: 4 the AVX-512 one, 3 the AVX2 4-body one (both when every
   body is isotropic in a 3-D problem; they alone have the one-pass form of a deferred kick,
   DemVerletKickKickDrift), 0 one of the per-body loops */
static int DemVerletVectorCopy(DemIntegrator_Verlet *vv, DemSim sim)
{
  if (!DemVerletIsotropic(vv, sim) || sim->dim == 2) return 0;
#if DEM_HAVE_ISA_V4
  if (DemIsaV4()) return 4;
#endif
#if DEM_HAVE_ISA_V3
  if (DemIsaV3() && !DemVerletScalarV3()) return 3;
#endif
  return 0;
}

static PetscReal DemVerletKickDrift(DemIntegrator_Verlet *vv, DemSim sim, PetscReal dt, DemVerletChecks *ck)
{
  const int vc = DemVerletVectorCopy(vv, sim), iso = DemVerletIsotropic(vv, sim);
  (void)vc;
#if DEM_HAVE_ISA_V4
  if (vc == 4) return DemVerletKickDrift_V4(sim, dt, ck);
#endif
#if DEM_HAVE_ISA_V3
  if (vc == 3) return DemVerletKickDrift_V3Iso(sim, dt, ck);
  if (DemIsaV3()) return DemVerletKickDrift_V3(sim, dt, iso, ck);
#endif
  return DemVerletKickDrift_Generic(sim, dt, iso, ck);
}
static PetscReal DemVerletKickPower(DemIntegrator_Verlet *vv, DemSim sim, PetscReal h, DemVerletChecks *ck)
{
  const int vc = DemVerletVectorCopy(vv, sim), iso = DemVerletIsotropic(vv, sim);
  (void)vc;
#if DEM_HAVE_ISA_V4
  if (vc == 4) return DemVerletKickPower_V4(sim, h, ck);
#endif
#if DEM_HAVE_ISA_V3
  if (vc == 3) return DemVerletKickPower_V3Iso(sim, h, ck);
  if (DemIsaV3()) return DemVerletKickPower_V3(sim, h, iso, ck);
#endif
  return DemVerletKickPower_Generic(sim, h, iso, ck);
}
/* the last step's deferred second kick and this step's kick and drift in one pass, in the copy
   DemVerletVectorCopy names (DemVerletMayDefer deferred only where it names one) */
static PetscReal DemVerletKickKickDrift(DemIntegrator_Verlet *vv, DemSim sim, PetscReal hp, PetscReal *sp, PetscReal dt, DemVerletChecks *ck)
{
  const int vc = DemVerletVectorCopy(vv, sim);
  (void)vc;
#if DEM_HAVE_ISA_V4
  if (vc == 4) return DemVerletKickKickDrift_V4(sim, hp, sp, dt, ck);
#endif
#if DEM_HAVE_ISA_V3
  if (vc == 3) return DemVerletKickKickDrift_V3Iso(sim, hp, sp, dt, ck);
#endif
  *sp = DemVerletKickPower(vv, sim, hp, ck); /* not reached; the two passes as a fallback */
  return DemVerletKickDrift(vv, sim, dt, ck);
}

/* the dissipation of a step, once both powers are known: exactly the expression, and so the
   roundings, of an undeferred step */
static void DemVerletBookDissipation(DemSim sim, PetscReal dt, PetscReal pold, PetscReal pnew, PetscReal eslip)
{
  sim->dissipated += -0.5 * dt * (pold + pnew) + eslip;
}

/* ops->sync: the deferred second kick done now, in a pass of its own (the state is then the
   step's end, v(n+1), as without deferral) */
static PetscErrorCode DemIntegratorSync_Verlet(DemIntegrator ig, DemSim sim)
{
  DemIntegrator_Verlet *vv = (DemIntegrator_Verlet *)ig->data;
  DemVerletChecks       ck = {0, 0};

  PetscFunctionBegin;
  if (!vv->pend) PetscFunctionReturn(PETSC_SUCCESS);
  vv->pend = PETSC_FALSE;
  DemVerletBookDissipation(sim, vv->pend_dt, vv->pend_pold, DemVerletKickPower(vv, sim, vv->pend_h, &ck), vv->pend_eslip);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether this step's second kick may wait for the next step's first pass (one pass over the
   bodies fewer: the kick reads v, w, f, t, fd, td, which the next pass reads again). Only when
   nothing reads the state in between: run.c's idle steps (no output, thermo row, checkpoint,
   or last step; sim->output_idle), one process, the AVX-512 or AVX2 vector passes. run.c and
   guard.c call DemIntegratorSync_Private before the state is read: a failure, a signal, a
   scan for non-finite values. Measured (benchmarks/settle/README.md, session 17):
   time per step 0.97-0.98 of the undeferred (bed-8k), 0.93-0.94 (bed-64k), 0.92-0.96 (chute) */
static int DemVerletMayDefer(DemIntegrator_Verlet *vv, DemSim sim)
{
  static int off = -1; /* MMDEM_NO_DEFER=1: never (tests/cases/verlet_defer.py compares) */
  if (off < 0) off = getenv("MMDEM_NO_DEFER") && strcmp(getenv("MMDEM_NO_DEFER"), "0") ? 1 : 0;
  return !off && sim->output_idle && !sim->decomp && DemVerletVectorCopy(vv, sim);
}

static PetscErrorCode DemIntegratorStep_Verlet(DemIntegrator ig, DemSim sim, PetscReal dt, DemStepInfo *info)
{
  DemIntegrator_Verlet *vv = (DemIntegrator_Verlet *)ig->data;
  DemBodyStore *bs = &sim->bodies;
  DemForceOut   fo = {0};
  DemState      st;
  PetscReal     pold, pnew = 0;
  PetscInt      nbuilds;
  DemVerletChecks ck;
  int           defer;

  PetscFunctionBegin;
  PetscCall(DemSimReserveDissipative_Private(sim));
  nbuilds = sim->nl.nbuilds;
  if (vv->pend) { /* the last step's second kick, in this step's pass (DemVerletMayDefer) */
    PetscReal plast;
    vv->pend = PETSC_FALSE;
    pold     = DemVerletKickKickDrift(vv, sim, vv->pend_h, &plast, dt, &ck);
    DemVerletBookDissipation(sim, vv->pend_dt, vv->pend_pold, plast, vv->pend_eslip);
  } else pold = DemVerletKickDrift(vv, sim, dt, &ck); /* kick, drift, and fd(n) at v(n+1/2) */
  sim->prezeroed = PETSC_TRUE;                     /* and f, t, fd, td of the owned bodies reset */
  PetscCall(DemSimConstrain(sim, bs->v, bs->w)); /* plane problems: ghosts too */
  sim->time += dt;
  PetscCall(DemSimApplyWalls_Private(sim));
  /* the drift pass decided the list's displacement rule, unless a wall's removal rebuilt it */
  PetscCall(DemSimUpdateNeighboursMoved_Private(sim, sim->nl.nbuilds == nbuilds ? (ck.moved ? 1 : 0) : -1));
  st    = (DemState){bs->x, bs->v, bs->w, bs->q};
  fo.f  = bs->f;
  fo.t  = bs->t;
  fo.fd = sim->fd;
  fo.td = sim->td;
  fo.J  = NULL;
  sim->skip_pe    = sim->energy_idle; /* pe_contact only where the output reads it */
  sim->defer_sums = (sim->decomp && sim->output_idle) ? PETSC_TRUE : PETSC_FALSE; /* MPI: no sums over the ranks that nothing reads */
  PetscCall(DemForcesComputeFast(sim, &st, PETSC_TRUE, &fo));
  sim->skip_pe = PETSC_FALSE;
  defer = DemVerletMayDefer(vv, sim); /* one process: defer_sums is false then */
  if (defer) { /* the kick and its dissipation wait for the next step's pass; ck then holds x, q, v(n+1/2), w */
    vv->pend = PETSC_TRUE, vv->pend_h = 0.5 * dt, vv->pend_dt = dt, vv->pend_pold = pold, vv->pend_eslip = fo.eslip;
  } else {
    pnew = DemVerletKickPower(vv, sim, 0.5 * dt, &ck); /* fd(n+1) at v(n+1/2), then the kick */
    PetscCall(DemSimConstrain(sim, bs->v, bs->w));
  }
  if (sim->defer_sums) { /* this rank's share, summed at the next step that is read */
    sim->defer_sums = PETSC_FALSE;
    sim->dissip_pending += -0.5 * dt * (pold + pnew) + fo.eslip;
  } else {
    if (sim->decomp) { /* MPI: over the ranks, with the shares of the deferred steps (decomp.c) */
      PetscCall(DemDecompSumPowersPending_Private(sim, &pold, &pnew, &sim->dissip_pending));
      sim->dissipated += sim->dissip_pending;
      sim->dissip_pending = 0;
    }
    if (!defer) DemVerletBookDissipation(sim, dt, pold, pnew, fo.eslip);
    sim->dissip_rate_prev = fo.dissip_rate;
    if (!sim->energy_idle) sim->pe_contact = fo.pe_contact; /* else left from the last step that had it */
    sim->ncontacts = fo.ncontacts;
  }
  info->iterations = 1;
  info->finite     = isfinite(ck.nf) ? 1 : -1; /* x, q, v, w of the owned bodies (run.c) */
  info->bounded    = PETSC_TRUE;               /* positions moved only under the list's rule */
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemIntegratorCreate_Verlet(DemIntegrator ig)
{
  DemIntegrator_Verlet *vv;

  PetscFunctionBegin;
  PetscCall(PetscNew(&vv));
  vv->iso_n              = -1;
  ig->data               = vv;
  ig->ops->setfromconfig = DemIntegratorSetFromConfig_Verlet;
  ig->ops->step          = DemIntegratorStep_Verlet;
  ig->ops->sync          = DemIntegratorSync_Verlet;
  ig->ops->checkpoint    = DemIntegratorCheckpointNone; /* no state between steps (checkpoint.c) */
  ig->stability          = DEM_INTEGRATOR_EXPLICIT;     /* dt above tc is refused (guard.c) */
  ig->mpi                = PETSC_TRUE;                  /* runs on several MPI ranks (decomp.c) */
  ig->fast_forces        = PETSC_TRUE;                  /* DemForcesComputeFast, no contact list between steps */
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(integrator, "verlet", DemIntegratorCreate_Verlet)

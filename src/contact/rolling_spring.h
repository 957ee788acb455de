/*
  rolling_spring.h - the tangential spring of 001_558b02b5fc003581.txt eq. (25)-(36), whose
  elongation is the sliding at the contact point: the displacement of the centres minus the
  rolling, mapped with the incremental rotation tensor Q_Delta (eq. (26)-(28)). Used by
  hertz_mindlin.c with `tangential: rolling_spring`; friction.h holds the default spring.

  Sliding increment between the last committed configuration S and the evaluated one S'
  (eq. (25)-(29)). For body i with lever arm r_C' (centre to the contact point at S'),
  centre displacement Delta x_i and incremental Rodrigues rotation alpha_i (001 eq. (9)):
      Delta r_i = (I - Q(alpha_i)) r_C'                                       eq. (26)-(28)
  001 writes the pair against a fixed obstacle; for two bodies the sliding is relative:
      u       = (Delta x_a - Delta r_a) - (Delta x_b - Delta r_b)
      Delta s = u - (u . n) n                      (projection on the tangent plane pi, eq. (29))
  Q(alpha) = I + 4/(4 + alpha^2) (A + A^2/2) (rotation.c; 001 eq. (27) prints 4/(1 + alpha^2),
  the typo of eq. (10)). A body that rolls without sliding gives Delta s = 0 to second order in
  its rotation (first order for the linearized vrel dt). The increments come from the
  integrator (sim->inc_x, sim->inc_alpha: the trapezoid rule's eq. (45) for the trial state);
  an integrator that does not provide them (verlet: its step is x(n+1) - x(n) = dt v(n+1/2))
  gets Delta s = vt dt, the linearized form, vt the tangential relative velocity.

  Spring and return mapping, per contact (history h[0..2] = s, h[3] = slip flag, h[4] = kt of
  the last commit):
    1. s_acc (the committed spring) is turned into the current tangent plane keeping its
       magnitude (001 leaves the turn of pi implicit; as friction.h);
    2. s = s_acc + Delta s (eq. (30)); trial force on a: Ft = -kt s (eq. (31) with the sign of a
       restoring spring);
    3. stick when |kt s| <= mu_s fn (eq. (32)); else slip: Ft = -mu_d fn tau, tau = s / |s|
       (eq. (33)-(34)), and the spring returns to s - s_corr, |kt s| = mu_d fn (eq. (35)-(36)).
       fn is max(normal force, 0) (|f_con| of eq. (32), which includes the normal damping).
       Interpretation for mu_s > mu_d: while the committed state is sliding, the test of (32)
       uses mu_d, so that continuous slip keeps the force at mu_d fn (eq. (33)) instead of
       sticking again at every step and sawing between mu_d fn and mu_s fn. mu_s = mu_d: the
       rule of 001 as written;
    4. no tangential dashpot (001 damps the normal direction only, eq. (19), (22));
    5. only with `commit` are s and the slip flag stored.
  Energy: 0.5 kt |s|^2 stored. The spring force is not conservative: kt = kt(delta) (eq. (37))
  changes with the overlap at constant s, which changes the stored energy without any work.
  The non-conservative energy of a step is the work the spring takes from the bodies,
  1/2 (kt_old s_old + kt s) . Delta s (trapezoid between the committed force and this one, the
  discrete work of the integrators), minus the change of the stored energy:
      loss = 1/2 kt_old s_old . s_trial + 1/2 kt s . (s_trial - s_old - s)
  which is the return mapping's loss 0.5 kt (s_old + s).(s_trial - s) of friction.h when
  kt_old = kt, plus the work of the stiffness change (negative when a loaded contact
  stiffens). It is reported as a power (/dt) in dissip and, with commit, in J in eslip, so that
  the integrators' energy balance closes; it can be negative.
*/
#pragma once
#include "demimpl.h"

#define DEM_ROLLING_SPRING_HISTSIZE 5

/*
  DemRollingSlide_Private - the sliding increment Delta s of one contact (above): from the
  increments dxa, dxb (centre displacements) and aa, ab (incremental Rodrigues rotations) of
  bodies a and b, the lever arms ra, rb and the unit normal n. Any of dxa/aa/dxb/ab may be NULL
  (zero).
*/
static inline void DemRollingSlide_Private(const PetscReal n[3], const PetscReal ra[3], const PetscReal rb[3], const PetscReal *dxa, const PetscReal *aa, const PetscReal *dxb, const PetscReal *ab, PetscReal ds[3])
{
  PetscReal u[3] = {0, 0, 0}, Q[9], un;

  if (dxa)
    for (int k = 0; k < 3; k++) u[k] += dxa[k];
  if (dxb)
    for (int k = 0; k < 3; k++) u[k] -= dxb[k];
  if (aa && (aa[0] != 0 || aa[1] != 0 || aa[2] != 0)) { /* - (I - Q_a) ra */
    DemRodriguesToMatrix(aa, Q);
    for (int k = 0; k < 3; k++) u[k] -= ra[k] - (Q[3 * k] * ra[0] + Q[3 * k + 1] * ra[1] + Q[3 * k + 2] * ra[2]);
  }
  if (ab && (ab[0] != 0 || ab[1] != 0 || ab[2] != 0)) { /* + (I - Q_b) rb */
    DemRodriguesToMatrix(ab, Q);
    for (int k = 0; k < 3; k++) u[k] += rb[k] - (Q[3 * k] * rb[0] + Q[3 * k + 1] * rb[1] + Q[3 * k + 2] * rb[2]);
  }
  un = u[0] * n[0] + u[1] * n[1] + u[2] * n[2];
  for (int k = 0; k < 3; k++) ds[k] = u[k] - un * n[k];
}

/*
  DemRollingSpring_Private - one contact of the spring above.

  Input:  n (unit normal, b to a), ds (sliding increment in the tangent plane), dt (> 0 for a
          dissipation rate), kt (>= 0), fn (normal force, may be negative), mu_s, mu_d,
          h (history slot or NULL: zero spring, nothing stored), commit
  Output: ft (force on a), energy (0.5 kt |s|^2), dissip (power, W: the non-conservative
          energy of the step / dt, above), slip (1 when sliding), eslip (J; 0 without commit)
*/
static inline void DemRollingSpring_Private(const PetscReal n[3], const PetscReal ds[3], PetscReal dt, PetscReal kt, PetscReal fn, PetscReal mu_s, PetscReal mu_d, PetscReal *h, PetscBool commit, PetscReal ft[3], PetscReal *energy, PetscReal *dissip, int *slip, PetscReal *eslip)
{
  PetscReal s[3] = {0, 0, 0}, so[3], st[3];
  PetscReal s2, sn, sr2, f2, flim, fslide, smag, loss = 0, kto = kt;
  int       sliding = 0, atlimit = 0;

  if (h) {
    s[0]    = h[0];
    s[1]    = h[1];
    s[2]    = h[2];
    sliding = h[3] > 0.5;
    kto     = h[4];
    s2      = s[0] * s[0] + s[1] * s[1] + s[2] * s[2];
    if (s2 > 0) {
      sn = s[0] * n[0] + s[1] * n[1] + s[2] * n[2];
      for (int k = 0; k < 3; k++) s[k] -= sn * n[k];
      sr2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2];
      if (sr2 > 1e-24 * s2) {
        const PetscReal r = PetscSqrtReal(s2 / sr2);
        for (int k = 0; k < 3; k++) s[k] *= r;
      } else s[0] = s[1] = s[2] = 0;
    }
  }
  for (int k = 0; k < 3; k++) {
    so[k] = s[k];
    st[k] = s[k] + ds[k];
  }
  f2     = kt * kt * (st[0] * st[0] + st[1] * st[1] + st[2] * st[2]);
  fn     = fn > 0 ? fn : 0;
  flim   = (sliding ? mu_d : mu_s) * fn;
  fslide = mu_d * fn;
  if (f2 > flim * flim) { /* eq. (33)-(36) */
    atlimit = 1;
    smag    = PetscSqrtReal(st[0] * st[0] + st[1] * st[1] + st[2] * st[2]);
    if (kt > 0 && fslide > 0 && smag > 0)
      for (int k = 0; k < 3; k++) s[k] = fslide / kt * st[k] / smag;
    else s[0] = s[1] = s[2] = 0;
  } else
    for (int k = 0; k < 3; k++) s[k] = st[k];
  for (int k = 0; k < 3; k++) ft[k] = -kt * s[k];
  *energy = 0.5 * kt * (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
  for (int k = 0; k < 3; k++) loss += 0.5 * kto * so[k] * st[k] + 0.5 * kt * s[k] * (st[k] - so[k] - s[k]);
  *dissip = dt > 0 ? loss / dt : 0;
  *eslip  = commit ? loss : 0;
  *slip   = atlimit;
  if (h && commit) {
    h[0] = s[0];
    h[1] = s[1];
    h[2] = s[2];
    h[3] = atlimit ? 1.0 : 0.0;
    h[4] = kt;
  }
}

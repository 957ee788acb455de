/*
  friction.h - the tangential spring with Coulomb stick/slip shared by the built-in contact
  laws (hooke.c, hertz_mindlin.c), and helpers for reading their parameters.

  Tangential model (003 eq. (21), (23); 001 eq. (29)-(36)): a spring s accumulates the
  tangential relative displacement at the contact point; its force is Ft = -kt s - ct vt.
  History layout, DEM_FRICTION_HISTSIZE reals per contact slot:
    h[0..2]  spring elongation s (world frame, lies in the tangent plane of the last commit)
    h[3]     slip flag: 1 while sliding (dynamic friction), 0 while sticking

  Per evaluation:
    1. s is rotated into the current tangent plane keeping its magnitude (the normal component
       is removed and the rest rescaled to |s|), so a rigid rotation of the pair neither
       creates nor destroys stored tangential energy;
    2. vt = vrel - (vrel . n) n, s_trial = s + vt dt, Ft = -kt s_trial - ct vt;
    3. Coulomb limit: mu_s max(fn, 0) while sticking, mu_d max(fn, 0) while sliding (the state
       of the committed slip flag). A sticking contact whose |Ft| exceeds the static limit is
       capped at that limit and becomes sliding; a sliding contact is capped at the dynamic
       limit and returns to sticking when |Ft| falls below it. At the limit Ft is scaled to the
       limit by the factor c = mu fn / |Ft| < 1, and so are its two parts: the spring is reset
       to s = c s_trial and the dashpot part to -c ct vt (a radial return of the whole force;
       without a dashpot, s = -Ft / kt and the spring alone carries the Coulomb force, the
       return mapping of 001 eq. (35)-(36)). The spring never stores more than its trial
       energy: resetting it to -Ft / kt also with a dashpot (the spring carrying the dashpot's
       share too) stretched a soft spring to |Ft| / kt, e.g. 0.48 m for kt = 1e-6 kn when a
       contact at a small fn was capped (val_variational_box.py: 0.03 J from nothing in one
       step, a negative `dissipated` increment, and a tangential push of mu fn that kept the
       pile creeping). LAMMPS's gran/hooke/history resets to -(Ft + ct vt)/kt; the three agree
       when ct = 0. With a zero limit (fn <= 0, e.g. while the unclamped normal
       dashpot pulls at the end of a collision, or mu = 0) no tangential force acts and the
       spring relaxes to s = 0, so an opening contact stores no tangential energy;
    4. only with `commit` are s and the slip flag written back, so that the trial evaluations
       of implicit integrators leave the history untouched.
  The dissipation power follows from the force actually applied, split as Ft = -kt s + fd:
  -fd . vt (the dashpot part: ct |vt|^2 unless capped) plus the energy the return mapping
  removes over the step, 0.5 kt (s_old + s) . (s_trial - s) / dt (the spring's work
  0.5 kt (s_old + s) . vt dt, trapezoid between two evaluations, minus the change of its
  stored energy). Sticking: ct |vt|^2; mu = 0: 0.
*/
#pragma once
#include "demimpl.h"

#define DEM_FRICTION_HISTSIZE 4

/*
  DemFrictionSpring_Private - one contact of the tangential spring above.

  Input:  n (unit normal, b to a), vrel (velocity of a relative to b at the contact point),
          dt (> 0 for a dissipation rate), kt (>= 0), ct (>= 0), fn (normal force, may be
          negative when damping pulls), mu_s, mu_d, h (history slot or NULL: zero spring and
          nothing stored), commit
  Output: ft (force on a), energy (0.5 kt |s|^2), dissip (power, W), slip (1 at the limit),
          fdamp (the non-spring part of ft, ft + kt s: -ct vt unless the limit is zero; the
          tangential part of the laws' fdamp column), eslip (J: the spring energy the return
          mapping removed over the step, dt times its share of dissip; 0 without commit)

  Inline: it is the inner loop of the laws; no allocation, no indirect call.
*/
/*
  The stick/slip active set of an implicit solve (newmark.c; 000 section 2.6.3's re-solve
  applied to the Coulomb state): Newton on the law above cycles when a contact's trial force
  crosses the Coulomb limit between iterates (the cap's kink). With `mode` (this pair's byte of
  sim->slip_mode, NULL: the law above) the state is imposed during the solve instead of decided
  by the test |Ft_trial| > mu fn, which makes the force a smooth function of the iterate:
    mode & DEM_SLIP_FREE    the law's own switching (no state imposed, no output);
    mode & DEM_SLIP_UNSET   on input: take the committed state (h[3]; sticking without history)
                            as the imposed one (with DEM_SLIP_FREE: a sliding contact gets the
                            law's own switching), and clear this bit;
    mode & DEM_SLIP_IMPOSED 1: capped at the limit, Ft = mu max(fn, 0) Ft_trial / |Ft_trial|
                            (also when |Ft_trial| < mu fn); 0: sticking, never capped;
    mode & DEM_SLIP_WRONG   on output: the Coulomb test of this evaluation disagrees with the
                            imposed state by more than DEM_SLIP_TOL of the limit (a slip imposed
                            on a trial force inside the cone, a stick outside it).
  The integrator changes the wrong ones after convergence and solves again, and evaluates the
  committed state with the law above: at a consistent active set the two give the same force
  (to DEM_SLIP_TOL of the limit), so the physics is the law's.
*/
#define DEM_SLIP_TOL 1e-8 /* the bits DEM_SLIP_IMPOSED, _WRONG, _UNSET: demimpl.h */

DEM_HOT_INLINE void DemFrictionSpringMode_Private(const PetscReal n[3], const PetscReal vrel[3], PetscReal dt, PetscReal kt, PetscReal ct, PetscReal fn, PetscReal mu_s, PetscReal mu_d, PetscReal *h, PetscBool commit, signed char *mode, PetscReal ft[3], PetscReal *energy, PetscReal *dissip, int *slip, PetscReal fdamp[3], PetscReal *eslip)
{
  PetscReal s[3] = {0, 0, 0}, so[3], vt[3], st[3], f[3];
  PetscReal vn, sn, s2, sr2, f2, flim, fmag, mu;
  int       sliding = 0, atlimit = 0;

  if (h) {
    s[0]    = h[0];
    s[1]    = h[1];
    s[2]    = h[2];
    sliding = h[3] > 0.5;
    /* rotate into the current tangent plane, keeping the magnitude */
    s2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2];
    if (s2 > 0) {
      sn = s[0] * n[0] + s[1] * n[1] + s[2] * n[2];
      s[0] -= sn * n[0];
      s[1] -= sn * n[1];
      s[2] -= sn * n[2];
      sr2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2];
      /* a spring (anti)parallel to the new normal has no tangential direction left: drop it */
      if (sr2 > 1e-24 * s2) {
        const PetscReal r = PetscSqrtReal(s2 / sr2);
        s[0] *= r;
        s[1] *= r;
        s[2] *= r;
      } else s[0] = s[1] = s[2] = 0;
    }
  }
  so[0] = s[0]; /* the spring of the last evaluation, in the current tangent plane */
  so[1] = s[1];
  so[2] = s[2];
  vn    = vrel[0] * n[0] + vrel[1] * n[1] + vrel[2] * n[2];
  vt[0] = vrel[0] - vn * n[0];
  vt[1] = vrel[1] - vn * n[1];
  vt[2] = vrel[2] - vn * n[2];
  st[0] = s[0] + vt[0] * dt;
  st[1] = s[1] + vt[1] * dt;
  st[2] = s[2] + vt[2] * dt;
  f[0]  = -kt * st[0] - ct * vt[0];
  f[1]  = -kt * st[1] - ct * vt[1];
  f[2]  = -kt * st[2] - ct * vt[2];
  f2    = f[0] * f[0] + f[1] * f[1] + f[2] * f[2];
  mu    = sliding ? mu_d : mu_s;
  flim  = mu * (fn > 0 ? fn : 0);
  /* the force splits as f = -kt s + fd. Sticking: s = s_trial, fd = -ct vt, nothing is lost
     in a return mapping. At the limit: s = c s_trial, fd = -c ct vt (c = flim / |f|), and
     the return mapping removes 0.5 kt (s_old + s).(s_trial - s) = 0.5 kt (1 - c)
     (s_old + c s_trial).s_trial, >= 0 unless one step's motion overruns the old spring: the spring's work
     0.5 kt (s_old + s).(s_trial - s_old) over the step (trapezoid between the last
     evaluation's spring, s_old rotated into the tangent plane, and this one) minus the
     change of its stored energy 0.5 kt (|s|^2 - |s_old|^2). */
  if (mode && (*mode & DEM_SLIP_UNSET)) *mode = (signed char)(sliding ? ((*mode & DEM_SLIP_FREE) ? DEM_SLIP_FREE : DEM_SLIP_IMPOSED) : 0);
  if (mode && !(*mode & DEM_SLIP_FREE)) { /* the imposed state (see above) */
    int imp;
    imp   = *mode & DEM_SLIP_IMPOSED;
    *mode = (signed char)(imp | ((imp ? f2 < flim * flim * (1 - DEM_SLIP_TOL) : f2 > flim * flim * (1 + DEM_SLIP_TOL)) ? DEM_SLIP_WRONG : 0));
    atlimit = imp;
  } else atlimit = f2 > flim * flim;
  if (atlimit) {
    PetscReal es = 0;
    if (flim > 0 && f2 > 0) {
      fmag = flim / PetscSqrtReal(f2);
      f[0] *= fmag;
      f[1] *= fmag;
      f[2] *= fmag;
      if (kt > 0) s[0] = fmag * st[0], s[1] = fmag * st[1], s[2] = fmag * st[2];
      else s[0] = s[1] = s[2] = 0; /* no spring: the capped force is the dashpot's */
    } else f[0] = f[1] = f[2] = s[0] = s[1] = s[2] = 0; /* no normal load: no force, the spring relaxes */
    for (int j = 0; j < 3; j++) es += (so[j] + s[j]) * (st[j] - s[j]);
    es *= 0.5 * kt;
    fdamp[0] = f[0] + kt * s[0]; /* -c ct vt */
    fdamp[1] = f[1] + kt * s[1];
    fdamp[2] = f[2] + kt * s[2];
    *dissip  = -(fdamp[0] * vt[0] + fdamp[1] * vt[1] + fdamp[2] * vt[2]) + (dt > 0 ? es / dt : 0);
    *eslip   = commit ? es : 0;
  } else {
    s[0]     = st[0];
    s[1]     = st[1];
    s[2]     = st[2];
    fdamp[0] = -ct * vt[0];
    fdamp[1] = -ct * vt[1];
    fdamp[2] = -ct * vt[2];
    *dissip  = ct * (vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
    *eslip   = 0;
  }
  ft[0]   = f[0];
  ft[1]   = f[1];
  ft[2]   = f[2];
  *energy = 0.5 * kt * (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
  *slip   = atlimit;
  if (h && commit) {
    h[0] = s[0];
    h[1] = s[1];
    h[2] = s[2];
    h[3] = atlimit ? 1.0 : 0.0;
  }
}

/* the law without an active set (mode NULL) */
DEM_HOT_INLINE void DemFrictionSpring_Private(const PetscReal n[3], const PetscReal vrel[3], PetscReal dt, PetscReal kt, PetscReal ct, PetscReal fn, PetscReal mu_s, PetscReal mu_d, PetscReal *h, PetscBool commit, PetscReal ft[3], PetscReal *energy, PetscReal *dissip, int *slip, PetscReal fdamp[3], PetscReal *eslip)
{
  DemFrictionSpringMode_Private(n, vrel, dt, kt, ct, fn, mu_s, mu_d, h, commit, NULL, ft, energy, dissip, slip, fdamp, eslip);
}

/* zeroes a history slot (a contact that opened) */
static inline void DemFrictionReset_Private(PetscReal *h)
{
  h[0] = h[1] = h[2] = h[3] = 0;
}

/* damping ratio of a linear spring-dashpot with restitution e in (0, 1]:
   zeta = |ln e| / sqrt(pi^2 + ln^2 e) (001 after eq. (23)); e = 1 gives 0 */
static inline PetscReal DemDampingRatio_Private(PetscReal e)
{
  const PetscReal l = PetscLogReal(e);
  return PetscAbsReal(l) / PetscSqrtReal(PETSC_PI * PETSC_PI + l * l);
}

/*
  DemLawParamReal_Private - reads an optional real `key` of the params mapping `cfg` (may be
  NULL) and checks lo < val (lo_open) or lo <= val, and val <= hi (hi_open: val < hi; hi =
  PETSC_MAX_REAL: no upper bound). A value out of range is an error at the value's node that
  names the law, the key and the allowed range. *set tells whether the key was given; *val is
  untouched when it was not.
*/
PETSC_INTERN PetscErrorCode DemLawParamReal_Private(DemNode cfg, const char law[], const char key[], PetscReal lo, PetscBool lo_open, PetscReal hi, PetscBool hi_open, PetscReal *val, PetscBool *set);

/*
  DemLawFriction_Private - mu_s and mu_d of a law: `both` (e.g. "mu" or "friction") sets the
  two, else `mu_s` and `mu_d` each from params, else the arithmetic mean of the two materials'
  values. Refuses `both` together with mu_s/mu_d, negative values and mu_d > mu_s.
*/
PETSC_INTERN PetscErrorCode DemLawFriction_Private(DemNode cfg, const char law[], const char both[], const DemMaterialPair *mp, PetscReal *mu_s, PetscReal *mu_d);

/*
  DemLawRestitution_Private - restitution e in (0, 1] from params key `restitution` (*set
  true) or the arithmetic mean of the two materials' values (*set false).
*/
PETSC_INTERN PetscErrorCode DemLawRestitution_Private(DemNode cfg, const char law[], const DemMaterialPair *mp, PetscReal *e, PetscBool *set);

/*
  friction.c - parameter helpers shared by the built-in contact laws (see friction.h for the
  tangential spring itself, which is inline so that the laws' loops make no calls).

  Mixing rule for per-material values a law needs per pair (restitution, mu_s, mu_d): the
  arithmetic mean of the two materials' values, (x_a + x_b) / 2.
*/
#include "friction.h"

PetscErrorCode DemLawParamReal_Private(DemNode cfg, const char law[], const char key[], PetscReal lo, PetscBool lo_open, PetscReal hi, PetscBool hi_open, PetscReal *val, PetscBool *set)
{
  DemNode   node;
  PetscReal v;
  PetscBool ok;
  char      range[128];

  PetscFunctionBegin;
  *set = PETSC_FALSE;
  if (!cfg) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemNodeGet(cfg, key, &node));
  if (!node) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemNodeAsReal(node, &v));
  /* written so that NaN fails every test */
  ok = (PetscBool)(lo_open ? v > lo : v >= lo);
  if (hi < PETSC_MAX_REAL) ok = (PetscBool)(ok && (hi_open ? v < hi : v <= hi));
  else ok = (PetscBool)(ok && v < PETSC_MAX_REAL);
  /* C's %g: PetscSNPrintf would print "0." for 0 */
  if (hi < PETSC_MAX_REAL) snprintf(range, sizeof(range), "in %s%g, %g%s", lo_open ? "(" : "[", (double)lo, (double)hi, hi_open ? ")" : "]");
  else snprintf(range, sizeof(range), "%s %g", lo_open ? ">" : ">=", (double)lo);
  DemNodeCheck(node, ok, "law %s: %s must be %s (got %s)", law, key, range, DemNodeScalar(node) ? DemNodeScalar(node) : "?");
  *val = v;
  *set = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemLawCheckMaterials(const char law[], const DemMaterialPair *mp)
{
  PetscFunctionBegin;
  PetscCheck(mp && mp->a && mp->b, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "law %s: no material pair given", law);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemLawFriction_Private(DemNode cfg, const char law[], const char both[], const DemMaterialPair *mp, PetscReal *mu_s, PetscReal *mu_d)
{
  PetscReal mu = 0, ms = 0, md = 0;
  PetscBool hasmu, hass, hasd;

  PetscFunctionBegin;
  PetscCall(DemLawParamReal_Private(cfg, law, both, 0, PETSC_FALSE, PETSC_MAX_REAL, PETSC_FALSE, &mu, &hasmu));
  PetscCall(DemLawParamReal_Private(cfg, law, "mu_s", 0, PETSC_FALSE, PETSC_MAX_REAL, PETSC_FALSE, &ms, &hass));
  PetscCall(DemLawParamReal_Private(cfg, law, "mu_d", 0, PETSC_FALSE, PETSC_MAX_REAL, PETSC_FALSE, &md, &hasd));
  if (hasmu) {
    DemNodeCheck(cfg, !hass && !hasd, "law %s: give either %s (static and dynamic) or mu_s/mu_d, not both", law, both);
    ms = md = mu;
  } else if (!hass || !hasd) {
    PetscCall(DemLawCheckMaterials(law, mp));
    if (!hass) ms = 0.5 * (mp->a->mu_s + mp->b->mu_s);
    if (!hasd) md = 0.5 * (mp->a->mu_d + mp->b->mu_d);
  }
  /* cfg may be NULL: the message then carries no location */
  DemNodeCheck(cfg, ms >= 0 && md >= 0 && md <= ms, "law %s: friction must satisfy 0 <= mu_d <= mu_s (got mu_s = %g, mu_d = %g; values not in params are the mean of the two materials')", law, (double)ms, (double)md);
  *mu_s = ms;
  *mu_d = md;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemLawRestitution_Private(DemNode cfg, const char law[], const DemMaterialPair *mp, PetscReal *e, PetscBool *set)
{
  PetscReal v = 1;

  PetscFunctionBegin;
  PetscCall(DemLawParamReal_Private(cfg, law, "restitution", 0, PETSC_TRUE, 1, PETSC_FALSE, &v, set));
  if (!*set) {
    PetscCall(DemLawCheckMaterials(law, mp));
    v = 0.5 * (mp->a->restitution + mp->b->restitution);
    DemNodeCheck(cfg, v > 0 && v <= 1, "law %s: the restitution of materials '%s' and '%s' averages to %g, outside (0, 1]; set restitution in params", law, mp->a->name, mp->b->name, (double)v);
  }
  *e = v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  bodystore.c - the body store: structure of arrays, one contiguous array per field,
  capacity grown geometrically; owned bodies first, ghosts after (DESIGN.md "Body store").
  Also the growable contact-list columns.
*/
#include "demimpl.h"

PetscErrorCode DemBodyStoreInit(DemBodyStore *s)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(s, sizeof(*s)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define DEM_GROW(ptr, oldn, newn) \
  do { \
    void *p_; \
    PetscCall(PetscCalloc(sizeof(*(ptr)) * (size_t)(newn), &p_)); \
    if ((oldn) > 0) PetscCall(PetscMemcpy(p_, ptr, sizeof(*(ptr)) * (size_t)(oldn))); \
    PetscCall(PetscFree(ptr)); \
    ptr = p_; \
  } while (0)

PetscErrorCode DemBodyStoreReserve(DemBodyStore *s, PetscInt cap)
{
  PetscInt n = s->n + s->nghost;

  PetscFunctionBegin;
  if (cap <= s->cap) PetscFunctionReturn(PETSC_SUCCESS);
  DEM_GROW(s->gid, n, cap);
  DEM_GROW(s->x, 3 * n, 3 * cap);
  DEM_GROW(s->v, 3 * n, 3 * cap);
  DEM_GROW(s->w, 3 * n, 3 * cap);
  DEM_GROW(s->q, 4 * n, 4 * cap);
  DEM_GROW(s->f, 3 * n, 3 * cap);
  DEM_GROW(s->t, 3 * n, 3 * cap);
  DEM_GROW(s->m, n, cap);
  DEM_GROW(s->inv_m, n, cap);
  DEM_GROW(s->I, 3 * n, 3 * cap);
  DEM_GROW(s->inv_I, 3 * n, 3 * cap);
  DEM_GROW(s->radius, n, cap);
  DEM_GROW(s->shape, n, cap);
  DEM_GROW(s->material, n, cap);
  DEM_GROW(s->flags, n, cap);
  for (PetscInt k = 0; k < s->nextra; k++) DEM_GROW(s->extra[k], s->extra_ncomp[k] * n, s->extra_ncomp[k] * cap);
  s->cap = cap;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemBodyStoreAppend(DemBodyStore *s, int64_t gid, PetscInt *idx)
{
  PetscInt i;

  PetscFunctionBegin;
  PetscCheck(s->nghost == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "append owned bodies before ghosts");
  if (s->n + 1 > s->cap) PetscCall(DemBodyStoreReserve(s, PetscMax(16, 2 * s->cap)));
  i           = s->n++;
  s->gid[i]   = gid;
  s->q[4 * i] = 1.0;
  *idx        = i;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemBodyStoreRegisterField(DemBodyStore *s, const char name[], PetscInt ncomp, PetscInt *field)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < s->nextra; k++) PetscCheck(strcmp(s->extra_name[k], name), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "per-body field '%s' is already registered", name);
  PetscCheck(s->nextra < 16, PETSC_COMM_SELF, PETSC_ERR_SUP, "at most 16 per-body fields");
  PetscCheck(ncomp > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "field '%s' needs at least one component", name);
  PetscCall(PetscStrallocpy(name, &s->extra_name[s->nextra]));
  s->extra_ncomp[s->nextra] = ncomp;
  PetscCall(PetscCalloc1(ncomp * PetscMax(s->cap, 1), &s->extra[s->nextra]));
  if (field) *field = s->nextra;
  s->nextra++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemBodyStoreGetField(DemBodyStore *s, const char name[], PetscReal **data, PetscInt *ncomp)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < s->nextra; k++) {
    if (!strcmp(s->extra_name[k], name)) {
      *data = s->extra[k];
      if (ncomp) *ncomp = s->extra_ncomp[k];
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "no per-body field '%s'", name);
}

PetscErrorCode DemBodyStoreFree(DemBodyStore *s)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(s->gid));
  PetscCall(PetscFree(s->x));
  PetscCall(PetscFree(s->v));
  PetscCall(PetscFree(s->w));
  PetscCall(PetscFree(s->q));
  PetscCall(PetscFree(s->f));
  PetscCall(PetscFree(s->t));
  PetscCall(PetscFree(s->m));
  PetscCall(PetscFree(s->inv_m));
  PetscCall(PetscFree(s->I));
  PetscCall(PetscFree(s->inv_I));
  PetscCall(PetscFree(s->radius));
  PetscCall(PetscFree(s->shape));
  PetscCall(PetscFree(s->material));
  PetscCall(PetscFree(s->flags));
  for (PetscInt k = 0; k < s->nextra; k++) {
    PetscCall(PetscFree(s->extra[k]));
    PetscCall(PetscFree(s->extra_name[k]));
  }
  PetscCall(PetscMemzero(s, sizeof(*s)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactListReserve(DemContactList *c, PetscInt cap)
{
  PetscFunctionBegin;
  if (cap <= c->cap) PetscFunctionReturn(PETSC_SUCCESS);
  DEM_GROW(c->a, c->n, cap);
  DEM_GROW(c->b, c->n, cap);
  DEM_GROW(c->feature, c->n, cap);
  DEM_GROW(c->hist, c->n, cap);
  DEM_GROW(c->law, c->n, cap);
  DEM_GROW(c->p, 3 * c->n, 3 * cap);
  DEM_GROW(c->nrm, 3 * c->n, 3 * cap);
  DEM_GROW(c->gap, c->n, cap);
  DEM_GROW(c->reff, c->n, cap);
  DEM_GROW(c->ra, 3 * c->n, 3 * cap);
  DEM_GROW(c->rb, 3 * c->n, 3 * cap);
  c->cap = cap;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactListAppend(DemContactList *c, PetscInt *slot)
{
  PetscFunctionBegin;
  if (c->n == c->cap) PetscCall(DemContactListReserve(c, PetscMax(64, 2 * c->cap)));
  *slot = c->n++;
  c->feature[*slot] = 0;
  c->hist[*slot]    = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactListFree(DemContactList *c)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(c->a));
  PetscCall(PetscFree(c->b));
  PetscCall(PetscFree(c->feature));
  PetscCall(PetscFree(c->hist));
  PetscCall(PetscFree(c->law));
  PetscCall(PetscFree(c->p));
  PetscCall(PetscFree(c->nrm));
  PetscCall(PetscFree(c->gap));
  PetscCall(PetscFree(c->reff));
  PetscCall(PetscFree(c->ra));
  PetscCall(PetscFree(c->rb));
  PetscCall(PetscMemzero(c, sizeof(*c)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  sphere.c - shape `sphere` and the sphere-sphere collider (closed form).

  Keys (under shapes: NAME:): type: sphere, radius [m, > 0].
  Bodies may carry their own radius (polydisperse sets): the store's radius column is the
  sphere's radius, and mass properties scale with (r/radius)^3 and ^5.
*/
#include "sphere.h"

typedef struct {
  PetscReal r;
} DemShape_Sphere;

static PetscErrorCode DemShapeSetFromConfig_Sphere(DemShape s, DemNode cfg)
{
  DemShape_Sphere  *sp     = (DemShape_Sphere *)s->data;
  const char *const keys[] = {"type", "radius", NULL};

  PetscFunctionBegin;
  PetscCall(DemNodeAllowKeys(cfg, keys));
  PetscCall(DemNodeGetReal(cfg, "radius", PETSC_TRUE, &sp->r));
  if (!(sp->r > 0)) {
    DemNode rn;
    PetscCall(DemNodeGet(cfg, "radius", &rn));
    return DemNodeError(rn, "radius must be > 0 (got %g)", (double)sp->r);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeMassProperties_Sphere(DemShape s, PetscReal rho, PetscReal *m, PetscReal I[3])
{
  DemShape_Sphere *sp = (DemShape_Sphere *)s->data;

  PetscFunctionBegin;
  *m   = 4.0 / 3.0 * PETSC_PI * sp->r * sp->r * sp->r * rho;
  I[0] = I[1] = I[2] = 0.4 * (*m) * sp->r * sp->r;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemShapeBoundingRadius_Sphere(DemShape s, PetscReal *r)
{
  PetscFunctionBegin;
  *r = ((DemShape_Sphere *)s->data)->r;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeCreate_Sphere(DemShape s)
{
  DemShape_Sphere *sp;

  PetscFunctionBegin;
  PetscCall(PetscNew(&sp));
  s->data                 = sp;
  s->kind                 = DEM_KIND_SPHERE;
  s->ops->setfromconfig   = DemShapeSetFromConfig_Sphere;
  s->ops->massproperties  = DemShapeMassProperties_Sphere;
  s->ops->boundingradius  = DemShapeBoundingRadius_Sphere;
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(shape, "sphere", DemShapeCreate_Sphere)

/*
  Sphere-sphere: normal n = (x_a - x_b - shift)/|.|, gap = |.| - r_a - r_b, contact point in
  the middle of the overlap, effective radius r_a r_b / (r_a + r_b) (001 eq. (20)).
  Appends a contact for every pair with gap < skin.
*/
PetscErrorCode DemCollide_SphereSphere(DemShapeKind ka, DemShapeKind kb, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  const PetscReal *x = pb->state->x, *rad;
  DemBodyStore    *bs;

  PetscFunctionBegin;
  PetscCall(DemSimGetBodies(pb->sim, &bs));
  rad = bs->radius;
  for (PetscInt k = 0; k < pb->n; k++) {
    const PetscInt a = pb->a[k], b = pb->b[k];
    PetscReal      d[3], r2, ra = rad[a], rb = rad[b], rs = ra + rb + skin;
    d[0] = x[3 * a] - x[3 * b];
    d[1] = x[3 * a + 1] - x[3 * b + 1];
    d[2] = x[3 * a + 2] - x[3 * b + 2];
    if (pb->shift) {
      d[0] -= pb->shift[3 * k];
      d[1] -= pb->shift[3 * k + 1];
      d[2] -= pb->shift[3 * k + 2];
    }
    r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    if (r2 >= rs * rs) continue;
    {
      PetscInt c;
      if (out->n == out->cap) PetscCall(DemContactListReserve(out, PetscMax(64, 2 * out->cap)));
      c               = out->n++;
      out->feature[c] = 0;
      out->a[c]       = a;
      out->b[c]       = b;
      out->hist[c]    = pb->pair ? pb->pair[k] : -1;
      out->reff[c]    = ra * rb / (ra + rb);
      DemSphereSphereGeom_Private(d, r2, ra, rb, out->nrm + 3 * c, &out->gap[c], out->ra + 3 * c, out->rb + 3 * c);
      for (int j = 0; j < 3; j++) out->p[3 * c + j] = x[3 * a + j] + out->ra[3 * c + j];
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
DEM_STYLE(collider, "sphere/sphere", DemCollide_SphereSphere)

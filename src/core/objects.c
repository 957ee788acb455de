/*
  objects.c - the generic layer of the three classes (DemShape, DemContactLaw,
  DemIntegrator): Create, SetType, SetFromConfig, dispatch through ops, Destroy.
  The generic layer never branches on a type name (STYLE.md items 3, 5, 6, 9).
*/
#include "demimpl.h"

#define DEM_OBJ_CREATE(obj, cls, OpsT) \
  do { \
    PetscCall(PetscNew(obj)); \
    PetscCall(PetscNew(&(*(obj))->ops)); \
    (*(obj))->comm      = comm; \
    (*(obj))->classname = cls; \
  } while (0)

/* SetType: destroy the old implementation, zero ops, record the name, call the constructor */
#define DEM_OBJ_SETTYPE(obj, findfn, CreateT, type) \
  do { \
    CreateT create_; \
    PetscCall(findfn(type, &create_)); \
    if ((obj)->ops->destroy) PetscCall((*(obj)->ops->destroy)(obj)); \
    PetscCall(PetscMemzero((obj)->ops, sizeof(*(obj)->ops))); \
    PetscCall(PetscFree((obj)->type_name)); \
    PetscCall(PetscFree((obj)->data)); \
    PetscCall(PetscStrallocpy(type, &(obj)->type_name)); \
    PetscCall(create_(obj)); \
  } while (0)

#define DEM_OBJ_DESTROY(obj) \
  do { \
    if (!*(obj)) PetscFunctionReturn(PETSC_SUCCESS); \
    if ((*(obj))->ops->destroy) PetscCall((*(*(obj))->ops->destroy)(*(obj))); \
    PetscCall(PetscFree((*(obj))->data)); \
    PetscCall(PetscFree((*(obj))->type_name)); \
    PetscCall(PetscFree((*(obj))->ops)); \
    PetscCall(PetscFree(*(obj))); \
  } while (0)

PetscErrorCode DemShapeCreate(MPI_Comm comm, DemShape *s)
{
  PetscFunctionBegin;
  DEM_OBJ_CREATE(s, "DemShape", DemShapeOps);
  (*s)->kind = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeSetType(DemShape s, const char type[])
{
  PetscFunctionBegin;
  DEM_OBJ_SETTYPE(s, DemShapeFind_Private, DemShapeCreateFn, type);
  PetscCheck(s->kind >= 0, s->comm, PETSC_ERR_PLIB, "shape %s did not set its kind", type);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeSetFromConfig(DemShape s, DemNode cfg)
{
  PetscFunctionBegin;
  DemTryMethod(s, setfromconfig, cfg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeGetKind(DemShape s, DemShapeKind *k)
{
  PetscFunctionBegin;
  *k = s->kind;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeMassProperties(DemShape s, PetscReal rho, PetscReal *m, PetscReal I[3])
{
  PetscFunctionBegin;
  DemUseMethod(s, massproperties, rho, m, I);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeBoundingRadius(DemShape s, PetscReal *r)
{
  PetscFunctionBegin;
  DemUseMethod(s, boundingradius, r);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeDestroy(DemShape *s)
{
  PetscFunctionBegin;
  DEM_OBJ_DESTROY(s);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemSurfaceFree(DemSurface *srf)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(srf->points));
  PetscCall(PetscFree(srf->tri));
  srf->npoints = srf->ntri = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactLawCreate(MPI_Comm comm, DemContactLaw *c)
{
  PetscFunctionBegin;
  DEM_OBJ_CREATE(c, "DemContactLaw", DemContactLawOps);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactLawSetType(DemContactLaw c, const char type[])
{
  PetscFunctionBegin;
  c->histsize   = 0;
  c->activation = 0;
  DEM_OBJ_SETTYPE(c, DemContactLawFind_Private, DemContactLawCreateFn, type);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactLawSetFromConfig(DemContactLaw c, DemNode cfg, const DemMaterialPair *mp)
{
  PetscFunctionBegin;
  c->mp = *mp;
  DemTryMethod(c, setfromconfig, cfg, mp);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactLawCompute(DemContactLaw c, const DemContactBatch *batch, PetscReal dt, PetscBool commit, DemContactForces *out)
{
  PetscFunctionBegin;
  DemUseMethod(c, compute, batch, dt, commit, out);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactLawCriticalDt(DemContactLaw c, PetscReal m_eff, PetscReal r_eff, PetscReal v_rel, PetscReal *dt)
{
  PetscFunctionBegin;
  *dt = PETSC_MAX_REAL;
  DemTryMethod(c, criticaldt, m_eff, r_eff, v_rel, dt);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactLawGetHistorySize(DemContactLaw c, PetscInt *n)
{
  PetscFunctionBegin;
  *n = c->histsize;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactLawDestroy(DemContactLaw *c)
{
  PetscFunctionBegin;
  DEM_OBJ_DESTROY(c);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemIntegratorCreate(MPI_Comm comm, DemIntegrator *ig)
{
  PetscFunctionBegin;
  DEM_OBJ_CREATE(ig, "DemIntegrator", DemIntegratorOps);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemIntegratorSetType(DemIntegrator ig, const char type[])
{
  PetscFunctionBegin;
  ig->setupcalled = PETSC_FALSE;
  DEM_OBJ_SETTYPE(ig, DemIntegratorFind_Private, DemIntegratorCreateFn, type);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemIntegratorSetFromConfig(DemIntegrator ig, DemNode cfg)
{
  PetscFunctionBegin;
  DemTryMethod(ig, setfromconfig, cfg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemIntegratorSetUp(DemIntegrator ig, DemSim sim)
{
  PetscFunctionBegin;
  if (ig->setupcalled) PetscFunctionReturn(PETSC_SUCCESS);
  DemTryMethod(ig, setup, sim);
  ig->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemIntegratorStep(DemIntegrator ig, DemSim sim, PetscReal dt, DemStepInfo *info)
{
  PetscFunctionBegin;
  PetscCall(DemIntegratorSetUp(ig, sim));
  PetscCall(PetscMemzero(info, sizeof(*info)));
  info->converged = info->accepted = PETSC_TRUE;
  DemUseMethod(ig, step, sim, dt, info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the deferred part of the last step, if the integrator deferred one (ops->sync) */
PetscErrorCode DemIntegratorSync_Private(DemSim sim)
{
  PetscFunctionBegin;
  if (sim->integ && sim->integ->ops->sync) PetscCall(sim->integ->ops->sync(sim->integ, sim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemIntegratorDestroy(DemIntegrator *ig)
{
  PetscFunctionBegin;
  DEM_OBJ_DESTROY(ig);
  PetscFunctionReturn(PETSC_SUCCESS);
}

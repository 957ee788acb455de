/* probe.c - test plugin (tests/cases/plugins.sh): registers a per-body field and two thermo
   columns that read it back through the host table, so that the test can see both hooks, and
   a shape kind, a shape and a collider (not used in a run), which `mmdem list` must show
   with this file as their origin. */
#include <demimpl.h>
#include <dem_plugin.h>

static const DemHostAPI *api;

/* components of the per-body field probe_vec in the simulation's store (3 when registered) */
static PetscErrorCode ProbeNcomp(DemSim sim, void *ctx, PetscReal *value)
{
  DemBodyStore *bs;
  PetscReal    *data;
  PetscInt      nc;

  PetscFunctionBegin;
  PetscCall(api->sim_get_bodies(sim, &bs));
  PetscCall(api->body_store_get_field(bs, "probe_vec", &data, &nc));
  for (PetscInt i = 0; i < bs->n; i++) data[nc * i] = (PetscReal)i; /* writable for every body */
  *value = (PetscReal)nc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the sum over bodies of the field's first component: n (n - 1) / 2 after ProbeNcomp */
static PetscErrorCode ProbeSum(DemSim sim, void *ctx, PetscReal *value)
{
  DemBodyStore *bs;
  PetscReal    *data, s = 0;
  PetscInt      nc;

  PetscFunctionBegin;
  PetscCall(api->sim_get_bodies(sim, &bs));
  PetscCall(api->body_store_get_field(bs, "probe_vec", &data, &nc));
  for (PetscInt i = 0; i < bs->n; i++) s += data[nc * i];
  *value = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static DemShapeKind probe_kind;

static PetscErrorCode ProbeShapeCreate(DemShape s)
{
  s->kind = probe_kind;
  return PETSC_SUCCESS;
}

static PetscErrorCode ProbeCollide(DemShapeKind a, DemShapeKind b, const DemPairBatch *pb, PetscReal skin, DemContactList *out)
{
  return PETSC_SUCCESS;
}

DEM_PLUGIN_DEFINE("probe", "0", "test plugin: a per-body field and thermo columns");

PetscErrorCode dem_plugin_init(const DemHostAPI *host, DemPlugin self)
{
  PetscFunctionBegin;
  api = host;
  PetscCheck(DEM_API_HAS(api, plugin_path), PETSC_COMM_SELF, PETSC_ERR_LIB, "host table too small");
  PetscCall(api->register_body_field(self, "probe_vec", 3));
  PetscCall(api->register_thermo(self, "probe_ncomp", ProbeNcomp, NULL));
  PetscCall(api->register_thermo(self, "probe_sum", ProbeSum, NULL));
  PetscCall(api->register_shape_kind(self, "probe_kind", &probe_kind));
  PetscCall(api->register_shape(self, "probe_shape", ProbeShapeCreate));
  PetscCall(api->register_collider(self, probe_kind, DEM_KIND_SPHERE, ProbeCollide));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  dem_plugin.h - the plugin ABI of mmdem (DESIGN.md "Plugins", STYLE.md item 7).

  A plugin is a shared object with two exported symbols of C linkage:

    dem_plugin_info  a DemPluginInfo made by DEM_PLUGIN_DEFINE(name, version, description):
                     the ABI version the plugin was compiled against, read before any of its
                     code runs (a major mismatch is refused)
    dem_plugin_init  PetscErrorCode dem_plugin_init(const DemHostAPI *api, DemPlugin self):
                     called once per process; registers the plugin's shapes, colliders,
                     contact laws, integrators, per-body fields and thermo columns through
                     `api`, passing `self`. Every registered entry records the plugin file
                     as its origin (`mmdem list`).

  The host table starts with abi_major, abi_minor and struct_size, which never move. Entries
  are only ever appended at the end, each addition bumping abi_minor; a plugin that uses an
  entry added after 1.0 checks DEM_API_HAS(api, entry) first. A change that is not an append
  bumps abi_major, and the host refuses plugins built for another major.

  The implementation structures a plugin fills (ops tables of DemContactLaw, DemIntegrator,
  DemShape) come from demimpl.h; a plugin calls mmdem only through `api` and PETSc directly.
  plugins/README.md walks through writing one; plugins/ has two complete examples.

  Minimal plugin:

    #include <demimpl.h>
    #include <dem_plugin.h>
    static PetscErrorCode MyLawCreate(DemContactLaw law) { ... }
    DEM_PLUGIN_DEFINE("mylaw", "1.0", "my contact law");
    PetscErrorCode dem_plugin_init(const DemHostAPI *api, DemPlugin self)
    {
      PetscFunctionBegin;
      PetscCall(api->register_contact_law(self, "mylaw", MyLawCreate));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
*/
#pragma once
#include "dem.h"
#include <stddef.h>

#define DEM_PLUGIN_ABI_MAJOR 1
#define DEM_PLUGIN_ABI_MINOR 0

/* the host's record of one loaded plugin file; opaque to the plugin */
typedef struct _p_DemPlugin *DemPlugin;

/* an extra column of thermo.csv: its value at the current state. Called on every rank at
   every thermo line (collective: reduce over ranks if the value is a sum). */
typedef PetscErrorCode (*DemThermoFn)(DemSim sim, void *ctx, PetscReal *value);

typedef struct {
  uint32_t    abi_major, abi_minor; /* DEM_PLUGIN_ABI_* the plugin was compiled with */
  size_t      struct_size;          /* sizeof(DemPluginInfo) of the plugin */
  const char *name, *version, *description;
  /* append only */
} DemPluginInfo;

typedef struct DemHostAPI {
  uint32_t    abi_major, abi_minor; /* the host's DEM_PLUGIN_ABI_*; never move */
  size_t      struct_size;          /* sizeof(DemHostAPI) of the host; never moves */
  const char *host_version;         /* "mmdem MAJOR.MINOR" */

  /* ---- registration; the origin of each entry is the plugin file (ABI 1.0) ---- */
  PetscErrorCode (*register_shape)(DemPlugin, const char name[], DemShapeCreateFn);
  /* a new shape kind (or the number of an existing one, by name) for colliders */
  PetscErrorCode (*register_shape_kind)(DemPlugin, const char name[], DemShapeKind *kind);
  PetscErrorCode (*register_collider)(DemPlugin, DemShapeKind a, DemShapeKind b, DemCollideFn);
  PetscErrorCode (*register_contact_law)(DemPlugin, const char name[], DemContactLawCreateFn);
  PetscErrorCode (*register_integrator)(DemPlugin, const char name[], DemIntegratorCreateFn);
  /* a per-body field of ncomp reals (zero-initialised) in the body store of every
     simulation created afterwards; find it with body_store_get_field */
  PetscErrorCode (*register_body_field)(DemPlugin, const char name[], PetscInt ncomp);
  /* a column appended to thermo.csv of every simulation */
  PetscErrorCode (*register_thermo)(DemPlugin, const char column[], DemThermoFn, void *ctx);

  /* ---- body store ---- */
  PetscErrorCode (*body_store_register_field)(DemBodyStore *, const char name[], PetscInt ncomp, PetscInt *field);
  PetscErrorCode (*body_store_get_field)(DemBodyStore *, const char name[], PetscReal **data, PetscInt *ncomp);

  /* ---- run description (see dem.h for the semantics of each getter) ---- */
  PetscErrorCode (*node_allow_keys)(DemNode map, const char *const keys[]);
  PetscErrorCode (*node_get)(DemNode map, const char key[], DemNode *child);
  PetscErrorCode (*node_get_real)(DemNode map, const char key[], PetscBool required, PetscReal *val);
  PetscErrorCode (*node_get_int)(DemNode map, const char key[], PetscBool required, PetscInt *val);
  PetscErrorCode (*node_get_bool)(DemNode map, const char key[], PetscBool required, PetscBool *val);
  PetscErrorCode (*node_get_string)(DemNode map, const char key[], PetscBool required, const char **val);
  PetscErrorCode (*node_get_real_array)(DemNode map, const char key[], PetscBool required, PetscInt n, PetscReal val[]);
  PetscErrorCode (*node_get_choice)(DemNode map, const char key[], const char *const choices[], PetscBool required, PetscInt *idx);
  const char *(*node_scalar)(DemNode);
  const char *(*node_path)(DemNode);
  /* raises PETSC_ERR_USER_INPUT with "file:line:col: path: message" (node may be NULL) */
  PetscErrorCode (*node_error)(DemNode, const char fmt[], ...) PETSC_ATTRIBUTE_FORMAT(2, 3);
  /* for an integrator's setfromconfig: the generic keys (type, dt, dt_fraction,
     petsc_options) plus the NULL-terminated `own` ones; anything else is refused */
  PetscErrorCode (*integrator_allow_keys)(DemNode cfg, const char *const own[]);

  /* ---- simulation, for integrators and thermo columns ---- */
  PetscErrorCode (*sim_get_bodies)(DemSim, DemBodyStore **);
  PetscErrorCode (*sim_get_time)(DemSim, PetscReal *t, PetscInt *step);
  PetscErrorCode (*sim_get_gravity)(DemSim, PetscReal g[3]);
  PetscErrorCode (*sim_get_dimension)(DemSim, PetscInt *dim);
  /* time += dt, then the time-dependent wall events (removal at remove_at) */
  PetscErrorCode (*sim_advance_time)(DemSim, PetscReal dt);
  PetscErrorCode (*sim_update_neighbours)(DemSim, const PetscReal *x, PetscBool force);
  PetscErrorCode (*sim_constrain)(DemSim, PetscReal *v, PetscReal *w);
  PetscErrorCode (*forces_compute)(DemSim, const DemState *, PetscBool want_jacobian, PetscBool commit, DemForceOut *);
  /* energy bookkeeping after a step whose committed force evaluation is `fo`: dissipated
     energy by the trapezoidal rule over the dissipation power, stored contact energy and
     the contact count for thermo.csv (what verlet does at the end of its step) */
  PetscErrorCode (*sim_record_step)(DemSim, PetscReal dt, const DemForceOut *fo);
  /* the contacts of the last committed force evaluation (read only) */
  PetscErrorCode (*sim_get_contacts)(DemSim, const DemContactList **, const DemContactForces **);
  /* contact law number `index` of the simulation (the `law` column of the contact list) */
  PetscErrorCode (*sim_get_contact_law)(DemSim, PetscInt index, DemContactLaw *law);
  /* the communicator of the simulation (for reductions in thermo columns) */
  MPI_Comm (*sim_get_comm)(DemSim);

  /* ---- rotation math ---- */
  void (*quat_mul)(const PetscReal a[4], const PetscReal b[4], PetscReal ab[4]);
  void (*quat_normalize)(PetscReal q[4]);
  void (*quat_rotate)(const PetscReal q[4], const PetscReal v[3], PetscReal out[3]);
  void (*quat_rotate_inv)(const PetscReal q[4], const PetscReal v[3], PetscReal out[3]);
  void (*quat_from_rotation_vector)(const PetscReal theta[3], PetscReal q[4]);

  /* ---- the plugin itself ---- */
  const char *(*plugin_path)(DemPlugin); /* the file, as recorded in the origins */
  /* append new entries here only, and bump DEM_PLUGIN_ABI_MINOR */
} DemHostAPI;

/* true when the host table has `member` (for entries added after ABI 1.0) */
#define DEM_API_HAS(api, member) ((api)->struct_size >= offsetof(DemHostAPI, member) + sizeof((api)->member))

#ifdef __cplusplus
#define DEM_PLUGIN_EXTERN extern "C" __attribute__((visibility("default")))
#else
#define DEM_PLUGIN_EXTERN extern __attribute__((visibility("default")))
#endif

/* the plugin's entry point (defined by the plugin) */
DEM_PLUGIN_EXTERN PetscErrorCode dem_plugin_init(const DemHostAPI *api, DemPlugin self);

/* defines the plugin's dem_plugin_info; use once, at file scope, in one file of the plugin */
#define DEM_PLUGIN_DEFINE(name, version, description) \
  DEM_PLUGIN_EXTERN const DemPluginInfo dem_plugin_info; \
  const DemPluginInfo dem_plugin_info = {DEM_PLUGIN_ABI_MAJOR, DEM_PLUGIN_ABI_MINOR, sizeof(DemPluginInfo), name, version, description}

/* ---- host side (src/core/plugin.c); applications may call these too ---- */
/* loads a plugin file (once per process: a second load of the same file only counts a
   reference). Errors name the file: not found, not a shared object, missing symbol, ABI
   mismatch, or whatever its dem_plugin_init refused (a name clash names both origins). */
PETSC_EXTERN PetscErrorCode DemPluginLoad(const char path[]);
/* every *.so file in the directories of MMDEM_PLUGIN_PATH (colon-separated), once */
PETSC_EXTERN PetscErrorCode DemPluginLoadPath(void);
/* drops one reference; the last one forgets the plugin's registry entries and closes it */
PETSC_EXTERN PetscErrorCode DemPluginUnload(const char path[]);
/* closes every plugin (at exit, after every object that uses one is destroyed) */
PETSC_EXTERN PetscErrorCode DemPluginFinalizeAll(void);
PETSC_EXTERN PetscErrorCode DemPluginView(FILE *);

/* extra thermo.csv columns and per-body fields, also for applications (origin: a label) */
PETSC_EXTERN PetscErrorCode DemThermoRegister(const char column[], DemThermoFn, void *ctx, const char origin[]);
PETSC_EXTERN PetscErrorCode DemBodyFieldRegister(const char name[], PetscInt ncomp, const char origin[]);

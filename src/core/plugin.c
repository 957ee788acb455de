/*
  plugin.c - loading plugins as shared objects (DESIGN.md "Plugins", STYLE.md item 7), and
  the two registries plugins add to besides shapes, colliders, laws and integrators:
  extra thermo.csv columns and per-body fields.

  Sources of plugins, in the order they are loaded:
    1. every *.so in the directories of MMDEM_PLUGIN_PATH (colon-separated; each directory's
       files in name order), once per process
    2. `--plugin PATH` on the command line (relative to the working directory), in order
    3. `plugins: [paths]` of the run description (relative to the YAML file), before its
       shapes, contact laws and integrator are read
  A file is identified by its canonical path (realpath): loading it again only counts a
  reference. Handles stay open until DemPluginFinalizeAll() at exit.

  Loading checks, each a clear error naming the file: the file exists; dlopen accepts it
  (RTLD_NOW: unresolved symbols are reported here); it exports dem_plugin_init and
  dem_plugin_info; the ABI major of dem_plugin_info equals the host's; dem_plugin_init
  succeeds (a name clash in the registry names both origins). A plugin whose init fails is
  rolled back: its registry entries are forgotten and the file is closed.

  The bookkeeping of loaded files uses malloc, not PetscMalloc, so that the handles can be
  closed after PetscFinalize.
*/
#include "demimpl.h"
#include "dem_plugin.h"
#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

struct _p_DemPlugin {
  char                 path[PETSC_MAX_PATH_LEN]; /* canonical */
  void                *handle;
  int                  refs;
  const DemPluginInfo *info;
  PetscBool            failed;                   /* a registration was refused */
  char                 msg[1024];                /* first error raised inside its init */
  struct _p_DemPlugin *next;
};

static DemPlugin plugins_      = NULL;
static PetscBool path_loaded_  = PETSC_FALSE;

/* ---------------------------------------------------------------- thermo columns, fields */

typedef struct {
  char        name[64];
  DemThermoFn fn;
  void       *ctx;
  char        origin[PETSC_MAX_PATH_LEN];
} DemThermoColumn;

typedef struct {
  char     name[64];
  PetscInt ncomp;
  char     origin[PETSC_MAX_PATH_LEN];
} DemBodyField;

static DemThermoColumn thermo_[32];
static PetscInt        nthermo_ = 0;
static DemBodyField    fields_[16];
static PetscInt        nfields_ = 0;

static PetscBool DemNameIsIdentifier(const char s[])
{
  if (!s || !s[0]) return PETSC_FALSE;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_')) return PETSC_FALSE;
  return PETSC_TRUE;
}

/*
  DemThermoRegister - adds a column to thermo.csv of every simulation opened afterwards: its
  header is `column`, its value fn(sim, ctx) at each thermo line. Not collective; the callback
  is called on every rank. Names are letters, digits and '_'; the built-in columns and names
  already registered are refused (the message names both origins).
*/
PetscErrorCode DemThermoRegister(const char column[], DemThermoFn fn, void *ctx, const char origin[])
{
  const char *const builtin[] = {"step", "time", "dt", "ke_trans", "ke_rot", "pe_grav", "pe_contact", "dissipated", "contacts", "iterations", "wall_s", "e_total", "e_balance", NULL};

  PetscFunctionBegin;
  PetscCheck(fn, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "thermo column '%s' from %s: no callback", column ? column : "(null)", origin);
  PetscCheck(DemNameIsIdentifier(column) && strlen(column) < sizeof(thermo_[0].name), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "thermo column '%s' from %s: a name is 1-63 letters, digits or '_'", column ? column : "(null)", origin);
  for (PetscInt k = 0; builtin[k]; k++) PetscCheck(strcmp(builtin[k], column), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "thermo column '%s' from %s is already registered (from built-in)", column, origin);
  for (PetscInt k = 0; k < nthermo_; k++) PetscCheck(strcmp(thermo_[k].name, column), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "thermo column '%s' from %s is already registered (from %s)", column, origin, thermo_[k].origin);
  PetscCheck(nthermo_ < (PetscInt)(sizeof(thermo_) / sizeof(thermo_[0])), PETSC_COMM_SELF, PETSC_ERR_SUP, "at most %d extra thermo columns", (int)(sizeof(thermo_) / sizeof(thermo_[0])));
  PetscCall(PetscStrncpy(thermo_[nthermo_].name, column, sizeof(thermo_[0].name)));
  PetscCall(PetscStrncpy(thermo_[nthermo_].origin, origin, sizeof(thermo_[0].origin)));
  thermo_[nthermo_].fn  = fn;
  thermo_[nthermo_].ctx = ctx;
  nthermo_++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemBodyFieldRegister - a per-body field of ncomp reals that every simulation set up from a
  run description afterwards adds to its body store (zeros) before reading its bodies.
*/
PetscErrorCode DemBodyFieldRegister(const char name[], PetscInt ncomp, const char origin[])
{
  PetscFunctionBegin;
  PetscCheck(DemNameIsIdentifier(name) && strlen(name) < sizeof(fields_[0].name), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "per-body field '%s' from %s: a name is 1-63 letters, digits or '_'", name ? name : "(null)", origin);
  PetscCheck(ncomp > 0 && ncomp <= 64, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "per-body field '%s' from %s: ncomp must be in [1, 64], got %" PetscInt_FMT, name, origin, ncomp);
  for (PetscInt k = 0; k < nfields_; k++) PetscCheck(strcmp(fields_[k].name, name), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "per-body field '%s' from %s is already registered (from %s)", name, origin, fields_[k].origin);
  PetscCheck(nfields_ < 16, PETSC_COMM_SELF, PETSC_ERR_SUP, "at most 16 per-body fields");
  PetscCall(PetscStrncpy(fields_[nfields_].name, name, sizeof(fields_[0].name)));
  PetscCall(PetscStrncpy(fields_[nfields_].origin, origin, sizeof(fields_[0].origin)));
  fields_[nfields_].ncomp = ncomp;
  nfields_++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static void DemExtrasForget(const char origin[])
{
  PetscInt j = 0;
  for (PetscInt k = 0; k < nthermo_; k++)
    if (strcmp(thermo_[k].origin, origin)) thermo_[j++] = thermo_[k];
  nthermo_ = j;
  j        = 0;
  for (PetscInt k = 0; k < nfields_; k++)
    if (strcmp(fields_[k].origin, origin)) fields_[j++] = fields_[k];
  nfields_ = j;
}

PetscInt DemThermoExtraCount_Private(void)
{
  return nthermo_;
}

const char *DemThermoExtraName_Private(PetscInt i)
{
  return (i >= 0 && i < nthermo_) ? thermo_[i].name : "";
}

PetscErrorCode DemThermoExtraEval_Private(DemSim sim, PetscInt i, PetscReal *value)
{
  PetscFunctionBegin;
  *value = 0;
  if (i >= 0 && i < nthermo_) PetscCall((*thermo_[i].fn)(sim, thermo_[i].ctx, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------- the host table */

#define DemPluginTry(p, call) \
  do { \
    PetscErrorCode ierr_p_ = (call); \
    if (ierr_p_) (p)->failed = PETSC_TRUE; \
    PetscCall(ierr_p_); \
  } while (0)

static PetscErrorCode DemPluginCheckHandle(DemPlugin p)
{
  PetscFunctionBegin;
  PetscCheck(p && p->path[0], PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "a plugin registration needs the DemPlugin handle its dem_plugin_init received");
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiRegisterShape(DemPlugin p, const char name[], DemShapeCreateFn fn)
{
  PetscFunctionBegin;
  PetscCall(DemPluginCheckHandle(p));
  DemPluginTry(p, DemShapeRegister(name, fn, p->path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiRegisterShapeKind(DemPlugin p, const char name[], DemShapeKind *kind)
{
  PetscFunctionBegin;
  PetscCall(DemPluginCheckHandle(p));
  DemPluginTry(p, DemShapeKindRegister(name, kind));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiRegisterCollider(DemPlugin p, DemShapeKind a, DemShapeKind b, DemCollideFn fn)
{
  PetscFunctionBegin;
  PetscCall(DemPluginCheckHandle(p));
  DemPluginTry(p, DemColliderRegister(a, b, fn, p->path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiRegisterContactLaw(DemPlugin p, const char name[], DemContactLawCreateFn fn)
{
  PetscFunctionBegin;
  PetscCall(DemPluginCheckHandle(p));
  DemPluginTry(p, DemContactLawRegister(name, fn, p->path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiRegisterIntegrator(DemPlugin p, const char name[], DemIntegratorCreateFn fn)
{
  PetscFunctionBegin;
  PetscCall(DemPluginCheckHandle(p));
  DemPluginTry(p, DemIntegratorRegister(name, fn, p->path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiRegisterBodyField(DemPlugin p, const char name[], PetscInt ncomp)
{
  PetscFunctionBegin;
  PetscCall(DemPluginCheckHandle(p));
  DemPluginTry(p, DemBodyFieldRegister(name, ncomp, p->path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiRegisterThermo(DemPlugin p, const char column[], DemThermoFn fn, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(DemPluginCheckHandle(p));
  DemPluginTry(p, DemThermoRegister(column, fn, ctx, p->path));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiSimAdvanceTime(DemSim sim, PetscReal dt)
{
  PetscFunctionBegin;
  sim->time += dt;
  PetscCall(DemSimApplyWalls_Private(sim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiSimRecordStep(DemSim sim, PetscReal dt, const DemForceOut *fo)
{
  PetscFunctionBegin;
  sim->dissipated += 0.5 * dt * (sim->dissip_rate_prev + fo->dissip_rate);
  sim->dissip_rate_prev = fo->dissip_rate;
  sim->pe_contact       = fo->pe_contact;
  sim->ncontacts        = fo->ncontacts;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiSimGetContacts(DemSim sim, const DemContactList **cl, const DemContactForces **cf)
{
  PetscFunctionBegin;
  if (cl) *cl = &sim->cl;
  if (cf) *cf = &sim->cf;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemApiSimGetContactLaw(DemSim sim, PetscInt index, DemContactLaw *law)
{
  PetscFunctionBegin;
  PetscCheck(index >= 0 && index < sim->nlaw, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "contact law index %" PetscInt_FMT " is not in [0, %" PetscInt_FMT ")", index, sim->nlaw);
  *law = sim->laws[index];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static MPI_Comm DemApiSimGetComm(DemSim sim)
{
  return sim->comm;
}

static const char *DemApiPluginPath(DemPlugin p)
{
  return p ? p->path : "";
}

#define DEM_STR_(x) #x
#define DEM_STR(x)  DEM_STR_(x)

static const DemHostAPI dem_host_api_ = {
  .abi_major                 = DEM_PLUGIN_ABI_MAJOR,
  .abi_minor                 = DEM_PLUGIN_ABI_MINOR,
  .struct_size               = sizeof(DemHostAPI),
  .host_version              = "mmdem " DEM_STR(DEM_VERSION_MAJOR) "." DEM_STR(DEM_VERSION_MINOR),
  .register_shape            = DemApiRegisterShape,
  .register_shape_kind       = DemApiRegisterShapeKind,
  .register_collider         = DemApiRegisterCollider,
  .register_contact_law      = DemApiRegisterContactLaw,
  .register_integrator       = DemApiRegisterIntegrator,
  .register_body_field       = DemApiRegisterBodyField,
  .register_thermo           = DemApiRegisterThermo,
  .body_store_register_field = DemBodyStoreRegisterField,
  .body_store_get_field      = DemBodyStoreGetField,
  .node_allow_keys           = DemNodeAllowKeys,
  .node_get                  = DemNodeGet,
  .node_get_real             = DemNodeGetReal,
  .node_get_int              = DemNodeGetInt,
  .node_get_bool             = DemNodeGetBool,
  .node_get_string           = DemNodeGetString,
  .node_get_real_array       = DemNodeGetRealArray,
  .node_get_choice           = DemNodeGetChoice,
  .node_scalar               = DemNodeScalar,
  .node_path                 = DemNodePath,
  .node_error                = DemNodeError,
  .integrator_allow_keys     = DemIntegratorAllowKeys_Private,
  .sim_get_bodies            = DemSimGetBodies,
  .sim_get_time              = DemSimGetTime,
  .sim_get_gravity           = DemSimGetGravity,
  .sim_get_dimension         = DemSimGetDimension,
  .sim_advance_time          = DemApiSimAdvanceTime,
  .sim_update_neighbours     = DemSimUpdateNeighbours,
  .sim_constrain             = DemSimConstrain,
  .forces_compute            = DemForcesCompute,
  .sim_record_step           = DemApiSimRecordStep,
  .sim_get_contacts          = DemApiSimGetContacts,
  .sim_get_contact_law       = DemApiSimGetContactLaw,
  .sim_get_comm              = DemApiSimGetComm,
  .quat_mul                  = DemQuatMul,
  .quat_normalize            = DemQuatNormalize,
  .quat_rotate               = DemQuatRotate,
  .quat_rotate_inv           = DemQuatRotateInv,
  .quat_from_rotation_vector = DemQuatFromRotationVector,
  .plugin_path               = DemApiPluginPath,
};

/* ---------------------------------------------------------------- loading */

typedef PetscErrorCode (*DemPluginInitFn)(const DemHostAPI *, DemPlugin);

/* records the first message raised inside a plugin's init, without printing */
static PetscErrorCode DemPluginErrorHandler(MPI_Comm comm, int line, const char *func, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  DemPlugin pl = (DemPlugin)ctx;
  if (p == PETSC_ERROR_INITIAL && !pl->msg[0]) snprintf(pl->msg, sizeof(pl->msg), "%s", mess && mess[0] ? mess : "error (no message)");
  return n;
}

static void DemPluginClose(DemPlugin p)
{
  if (p->handle) dlclose(p->handle);
  free(p);
}

/* opens, checks and initialises one file; a user-level failure leaves its message in err
   (and changes nothing), PETSc errors propagate */
static PetscErrorCode DemPluginOpen(const char path[], char err[], size_t len)
{
  char            real[PATH_MAX];
  DemPlugin       p;
  DemPluginInitFn init;
  PetscErrorCode  ierr;
  const char     *dle;

  PetscFunctionBegin;
  err[0] = 0;
  if (!path || !path[0]) {
    snprintf(err, len, "plugin: empty file name");
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!realpath(path, real)) {
    snprintf(err, len, "plugin '%s': not found (%s)", path, strerror(errno));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (p = plugins_; p; p = p->next)
    if (!strcmp(p->path, real)) {
      p->refs++;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  p = (DemPlugin)calloc(1, sizeof(*p));
  PetscCheck(p, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory loading plugin '%s'", path);
  snprintf(p->path, sizeof(p->path), "%s", real);
  dlerror();
  p->handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
  if (!p->handle) {
    dle = dlerror();
    snprintf(err, len, "plugin '%s': not a loadable shared object: %s", real, dle ? dle : "dlopen failed");
    DemPluginClose(p);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  *(void **)&init = dlsym(p->handle, "dem_plugin_init");
  if (!init) {
    snprintf(err, len, "plugin '%s': no symbol dem_plugin_init (a plugin defines PetscErrorCode dem_plugin_init(const DemHostAPI *, DemPlugin) with C linkage; see dem_plugin.h)", real);
    DemPluginClose(p);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  p->info = (const DemPluginInfo *)dlsym(p->handle, "dem_plugin_info");
  if (!p->info) {
    snprintf(err, len, "plugin '%s': no symbol dem_plugin_info, so its ABI version is unknown (add DEM_PLUGIN_DEFINE(name, version, description) at file scope; see dem_plugin.h)", real);
    DemPluginClose(p);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (p->info->abi_major != DEM_PLUGIN_ABI_MAJOR) {
    snprintf(err, len, "plugin '%s' was built for plugin ABI %u.%u; this mmdem has ABI %d.%d (the major versions must match): rebuild it against this mmdem's dem_plugin.h", real, (unsigned)p->info->abi_major, (unsigned)p->info->abi_minor, DEM_PLUGIN_ABI_MAJOR, DEM_PLUGIN_ABI_MINOR);
    DemPluginClose(p);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* registered before init runs, so that its entries can be found (and rolled back) */
  p->refs  = 1;
  p->next  = plugins_;
  plugins_ = p;
  PetscCall(PetscPushErrorHandler(DemPluginErrorHandler, p));
  ierr = (*init)(&dem_host_api_, p);
  PetscCall(PetscPopErrorHandler());
  if (ierr || p->failed) {
    snprintf(err, len, "plugin '%s': dem_plugin_init failed: %s", real, p->msg[0] ? p->msg : (ierr ? "error (no message)" : "a registration was refused"));
    plugins_ = p->next;
    PetscCall(DemRegistryForget_Private(p->path));
    DemExtrasForget(p->path);
    DemPluginClose(p);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemPluginLoad - loads a plugin file (relative to the working directory) and runs its
  dem_plugin_init; loading the same file again only counts a reference. Not collective
  (every rank loads its own copy). Errors name the file.
*/
PetscErrorCode DemPluginLoad(const char path[])
{
  char err[8192];

  PetscFunctionBegin;
  PetscCall(DemRegisterAll());
  PetscCall(DemPluginOpen(path, err, sizeof(err)));
  PetscCheck(!err[0], PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int DemCompareNames(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static PetscBool DemEndsWith(const char s[], const char suffix[])
{
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix) ? PETSC_TRUE : PETSC_FALSE;
}

/*
  DemPluginLoadPath - loads every file ending in .so (which includes the *plugin.so
  convention) of each directory listed in MMDEM_PLUGIN_PATH, in name order; a directory that
  does not exist is an error naming it. Runs once per process.
*/
PetscErrorCode DemPluginLoadPath(void)
{
  const char *env = getenv("MMDEM_PLUGIN_PATH");
  char       *list, *save = NULL;

  PetscFunctionBegin;
  if (path_loaded_) PetscFunctionReturn(PETSC_SUCCESS);
  path_loaded_ = PETSC_TRUE;
  if (!env || !env[0]) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscStrallocpy(env, &list));
  for (char *dir = strtok_r(list, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    DIR           *d = opendir(dir);
    struct dirent *e;
    char         **names = NULL;
    size_t         n = 0, cap = 0;
    if (!d) {
      char msg[PETSC_MAX_PATH_LEN + 128];
      PetscCall(PetscSNPrintf(msg, sizeof(msg), "MMDEM_PLUGIN_PATH: cannot read directory '%s': %s", dir, strerror(errno)));
      PetscCall(PetscFree(list));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", msg);
    }
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.' || !DemEndsWith(e->d_name, ".so")) continue;
      if (n == cap) {
        cap   = cap ? 2 * cap : 16;
        names = (char **)realloc(names, cap * sizeof(char *));
        PetscCheck(names, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory");
      }
      names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof(char *), DemCompareNames);
    for (size_t k = 0; k < n; k++) {
      char path[PETSC_MAX_PATH_LEN], err[8192];
      snprintf(path, sizeof(path), "%s/%s", dir, names[k]);
      PetscCall(DemPluginOpen(path, err, sizeof(err)));
      if (err[0]) {
        for (size_t j = 0; j < n; j++) free(names[j]);
        free(names);
        PetscCall(PetscFree(list));
        SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s (found through MMDEM_PLUGIN_PATH)", err);
      }
    }
    for (size_t j = 0; j < n; j++) free(names[j]);
    free(names);
  }
  PetscCall(PetscFree(list));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemPluginUnload - drops one reference to a loaded plugin file; the last one forgets every
  registry entry whose origin is the file and closes it. Objects created from its entries
  must have been destroyed.
*/
PetscErrorCode DemPluginUnload(const char path[])
{
  char      real[PATH_MAX];
  DemPlugin *pp;

  PetscFunctionBegin;
  PetscCheck(realpath(path, real), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "plugin '%s': not found (%s)", path, strerror(errno));
  for (pp = &plugins_; *pp; pp = &(*pp)->next)
    if (!strcmp((*pp)->path, real)) break;
  PetscCheck(*pp, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "plugin '%s' is not loaded", real);
  if (--(*pp)->refs == 0) {
    DemPlugin p = *pp;
    *pp         = p->next;
    PetscCall(DemRegistryForget_Private(p->path));
    DemExtrasForget(p->path);
    DemPluginClose(p);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* closes every plugin file; for the end of the program (also after PetscFinalize) */
PetscErrorCode DemPluginFinalizeAll(void)
{
  while (plugins_) {
    DemPlugin p = plugins_;
    plugins_    = p->next;
    DemPluginClose(p);
  }
  nthermo_ = nfields_ = 0;
  path_loaded_        = PETSC_FALSE;
  return PETSC_SUCCESS;
}

/* the loaded plugins, extra thermo columns and per-body fields (`mmdem list`) */
PetscErrorCode DemPluginView(FILE *fp)
{
  PetscInt n = 0;

  PetscFunctionBegin;
  for (DemPlugin p = plugins_; p; p = p->next) n++;
  PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "plugins:%s\n", n ? "" : " (none; load with --plugin FILE, plugins: in the YAML, or MMDEM_PLUGIN_PATH)"));
  /* the list is kept newest first: print in load order */
  for (PetscInt k = n - 1; k >= 0; k--) {
    DemPlugin p = plugins_;
    for (PetscInt j = 0; j < k; j++) p = p->next;
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "  %s %s (ABI %u.%u): %s\n    %s\n", p->info->name ? p->info->name : "?", p->info->version ? p->info->version : "?", (unsigned)p->info->abi_major, (unsigned)p->info->abi_minor, p->info->description ? p->info->description : "", p->path));
  }
  if (nthermo_) {
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "thermo columns:\n"));
    for (PetscInt k = 0; k < nthermo_; k++) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "  %-20s %s\n", thermo_[k].name, thermo_[k].origin));
  }
  if (nfields_) {
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "per-body fields:\n"));
    for (PetscInt k = 0; k < nfields_; k++) {
      char nm[96];
      PetscCall(PetscSNPrintf(nm, sizeof(nm), "%s[%" PetscInt_FMT "]", fields_[k].name, fields_[k].ncomp));
      PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "  %-20s %s\n", nm, fields_[k].origin));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemPluginsSetUpSim_Private - the plugin step of DemSimSetFromConfig: MMDEM_PLUGIN_PATH (once
  per process), then the run description's `plugins:` list (paths relative to the YAML file;
  errors located at the list item), then the registered per-body fields into the empty store.
*/
PetscErrorCode DemPluginsSetUpSim_Private(DemSim sim, DemNode root)
{
  PetscFunctionBegin;
  PetscCall(DemPluginsLoadFromConfig_Private(root, &sim->nplugins));
  for (PetscInt k = 0; k < nfields_; k++) {
    PetscReal     *data;
    PetscInt       nc;
    PetscErrorCode ierr;
    /* already there (a second SetFromConfig): keep it */
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = DemBodyStoreGetField(&sim->bodies, fields_[k].name, &data, &nc);
    PetscCall(PetscPopErrorHandler());
    if (ierr) PetscCall(DemBodyStoreRegisterField(&sim->bodies, fields_[k].name, fields_[k].ncomp, NULL));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MMDEM_PLUGIN_PATH (once per process) and the `plugins:` list of a run description */
PetscErrorCode DemPluginsLoadFromConfig_Private(DemNode root, PetscInt *nloaded)
{
  DemNode  pn;
  PetscInt n = 0;

  PetscFunctionBegin;
  PetscCall(DemPluginLoadPath());
  PetscCall(DemNodeGet(root, "plugins", &pn));
  if (pn) {
    DemNodeCheck(pn, DemNodeGetType(pn) == DEM_NODE_SEQ, "plugins must be a list of shared-object files, e.g. plugins: [plugins/libcohesion.so] (relative to the YAML file)");
    PetscCall(DemNodeSeqLength(pn, &n));
    for (PetscInt k = 0; k < n; k++) {
      DemNode     it;
      const char *file;
      char        path[PETSC_MAX_PATH_LEN], dir[PETSC_MAX_PATH_LEN], err[8192];
      PetscCall(DemNodeSeqItem(pn, k, &it));
      file = DemNodeScalar(it);
      DemNodeCheck(it, file && file[0], "expected the file name of a plugin (a shared object)");
      if (file[0] == '/') PetscCall(PetscStrncpy(path, file, sizeof(path)));
      else {
        char *slash;
        PetscCall(PetscStrncpy(dir, DemNodeFile(it) ? DemNodeFile(it) : "", sizeof(dir)));
        slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else PetscCall(PetscStrncpy(dir, ".", sizeof(dir)));
        PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s", dir, file));
      }
      PetscCall(DemPluginOpen(path, err, sizeof(err)));
      if (err[0]) return DemNodeError(it, "%s", err);
    }
  }
  if (nloaded) *nloaded = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

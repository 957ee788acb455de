/*
  registry.c - names -> constructors for shapes, contact laws and integrators, and the
  collider table per pair of shape kinds.

  Built-ins are registered by DemRegisterAll() from build/styles.inc, which the Makefile
  collects from the DEM_STYLE(...) marker lines of the implementation files (the LAMMPS
  style-header idea; STYLE.md item 6). Plugins register through the same calls. Every entry
  remembers its origin ("built-in" or the plugin file) for `mmdem list`.
*/
#include "demimpl.h"

/* prototypes of every built-in constructor, from the same marker lines */
#undef DEM_STYLE
#define DEM_DECL_shape(fn)      PETSC_EXTERN PetscErrorCode fn(DemShape);
#define DEM_DECL_contact(fn)    PETSC_EXTERN PetscErrorCode fn(DemContactLaw);
#define DEM_DECL_integrator(fn) PETSC_EXTERN PetscErrorCode fn(DemIntegrator);
#define DEM_DECL_collider(fn)   PETSC_EXTERN PetscErrorCode fn(DemShapeKind, DemShapeKind, const DemPairBatch *, PetscReal, DemContactList *);
#define DEM_STYLE(kind, name, fn) DEM_DECL_##kind(fn)
#include "styles.inc"
#undef DEM_STYLE
#include "dem_plugin.h"

typedef struct {
  char  name[64];
  char  origin[PETSC_MAX_PATH_LEN];
  void (*fn)(void);
} DemRegEntry;

typedef struct {
  PetscInt    n, cap;
  DemRegEntry *e;
} DemRegTable;

static DemRegTable  shapes_, laws_, integrators_;
static DemCollideFn colliders_[DEM_KIND_MAX][DEM_KIND_MAX];
static char         collider_origin_[DEM_KIND_MAX][DEM_KIND_MAX][PETSC_MAX_PATH_LEN];
static char         kindnames_[DEM_KIND_MAX][64] = {"sphere", "plane"};
static PetscInt     nkinds_                      = 2;
static PetscBool    registered_                  = PETSC_FALSE;

static PetscErrorCode DemRegTableAdd(DemRegTable *t, const char cls[], const char name[], void (*fn)(void), const char origin[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < t->n; i++)
    PetscCheck(strcmp(t->e[i].name, name), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "%s '%s' from %s is already registered (from %s)", cls, name, origin, t->e[i].origin);
  if (t->n == t->cap) {
    PetscInt     cap = t->cap ? 2 * t->cap : 16;
    DemRegEntry *e;
    PetscCall(PetscCalloc1(cap, &e));
    if (t->n) PetscCall(PetscArraycpy(e, t->e, t->n));
    PetscCall(PetscFree(t->e));
    t->e   = e;
    t->cap = cap;
  }
  PetscCall(PetscStrncpy(t->e[t->n].name, name, sizeof(t->e[t->n].name)));
  PetscCall(PetscStrncpy(t->e[t->n].origin, origin, sizeof(t->e[t->n].origin)));
  t->e[t->n].fn = fn;
  t->n++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemRegTableFind(DemRegTable *t, const char cls[], const char name[], void (**fn)(void))
{
  char list[1024] = "";

  PetscFunctionBegin;
  for (PetscInt i = 0; i < t->n; i++) {
    if (!strcmp(t->e[i].name, name)) {
      *fn = t->e[i].fn;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  for (PetscInt i = 0; i < t->n; i++) {
    if (i) PetscCall(PetscStrlcat(list, ", ", sizeof(list)));
    PetscCall(PetscStrlcat(list, t->e[i].name, sizeof(list)));
  }
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "unknown %s '%s'; registered: %s", cls, name, list);
}

PetscErrorCode DemRegistryNames_Private(const char cls[], char *buf, size_t len)
{
  DemRegTable *t = !strcmp(cls, "shape") ? &shapes_ : !strcmp(cls, "contact") ? &laws_ : &integrators_;

  PetscFunctionBegin;
  buf[0] = 0;
  for (PetscInt i = 0; i < t->n; i++) {
    if (i) PetscCall(PetscStrlcat(buf, ", ", len));
    PetscCall(PetscStrlcat(buf, t->e[i].name, len));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeRegistryNames_Private(char *buf, size_t len)
{
  PetscFunctionBegin;
  PetscCall(DemRegistryNames_Private("shape", buf, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeRegister(const char name[], DemShapeCreateFn fn, const char origin[])
{
  PetscFunctionBegin;
  PetscCall(DemRegTableAdd(&shapes_, "shape", name, (void (*)(void))fn, origin));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactLawRegister(const char name[], DemContactLawCreateFn fn, const char origin[])
{
  PetscFunctionBegin;
  PetscCall(DemRegTableAdd(&laws_, "contact law", name, (void (*)(void))fn, origin));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemIntegratorRegister(const char name[], DemIntegratorCreateFn fn, const char origin[])
{
  PetscFunctionBegin;
  PetscCall(DemRegTableAdd(&integrators_, "integrator", name, (void (*)(void))fn, origin));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeFind_Private(const char name[], DemShapeCreateFn *fn)
{
  void (*f)(void) = NULL;

  PetscFunctionBegin;
  PetscCall(DemRegTableFind(&shapes_, "shape", name, &f));
  *fn = (DemShapeCreateFn)f;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemContactLawFind_Private(const char name[], DemContactLawCreateFn *fn)
{
  void (*f)(void) = NULL;

  PetscFunctionBegin;
  PetscCall(DemRegTableFind(&laws_, "contact law", name, &f));
  *fn = (DemContactLawCreateFn)f;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemIntegratorFind_Private(const char name[], DemIntegratorCreateFn *fn)
{
  void (*f)(void) = NULL;

  PetscFunctionBegin;
  PetscCall(DemRegTableFind(&integrators_, "integrator", name, &f));
  *fn = (DemIntegratorCreateFn)f;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemShapeKindRegister(const char name[], DemShapeKind *kind)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < nkinds_; k++) {
    if (!strcmp(kindnames_[k], name)) {
      *kind = (DemShapeKind)k;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCheck(nkinds_ < DEM_KIND_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "too many shape kinds (at most %d)", DEM_KIND_MAX);
  PetscCall(PetscStrncpy(kindnames_[nkinds_], name, sizeof(kindnames_[0])));
  *kind = (DemShapeKind)nkinds_++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *DemShapeKindName(DemShapeKind k)
{
  return (k >= 0 && k < nkinds_) ? kindnames_[k] : "?";
}

PetscErrorCode DemColliderRegister(DemShapeKind a, DemShapeKind b, DemCollideFn fn, const char origin[])
{
  PetscFunctionBegin;
  PetscCheck(a >= 0 && a < DEM_KIND_MAX && b >= 0 && b < DEM_KIND_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "shape kind out of range");
  PetscCheck(!colliders_[a][b], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "collider %s/%s from %s is already registered (from %s)", DemShapeKindName(a), DemShapeKindName(b), origin, collider_origin_[a][b]);
  colliders_[a][b] = fn;
  PetscCall(PetscStrncpy(collider_origin_[a][b], origin, sizeof(collider_origin_[a][b])));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the collider registered for (a,b), or for (b,a) with *swapped set: the caller then passes
   the pair with a and b exchanged (normals always point from the batch's b to its a) */
PetscErrorCode DemColliderGet_Private(DemShapeKind a, DemShapeKind b, DemCollideFn *fn, PetscBool *swapped)
{
  PetscFunctionBegin;
  *fn      = colliders_[a][b];
  *swapped = PETSC_FALSE;
  if (!*fn && colliders_[b][a]) {
    *fn      = colliders_[b][a];
    *swapped = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemColliderRegisterByName(const char pair[], DemCollideFn fn, const char origin[])
{
  char         a[64], *slash;
  DemShapeKind ka, kb;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(a, pair, sizeof(a)));
  slash = strchr(a, '/');
  PetscCheck(slash, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "collider name '%s' must be kindA/kindB", pair);
  *slash = 0;
  PetscCall(DemShapeKindRegister(a, &ka));
  PetscCall(DemShapeKindRegister(slash + 1, &kb));
  PetscCall(DemColliderRegister(ka, kb, fn, origin));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DemRegisterAll - registers every built-in shape, collider, contact law and integrator.
  Idempotent. Not collective.
*/
PetscErrorCode DemRegisterAll(void)
{
  PetscFunctionBegin;
  if (registered_) PetscFunctionReturn(PETSC_SUCCESS);
  registered_ = PETSC_TRUE;
#undef DEM_STYLE
#define DEM_STYLE_shape(name, fn)      PetscCall(DemShapeRegister(name, fn, "built-in"));
#define DEM_STYLE_contact(name, fn)    PetscCall(DemContactLawRegister(name, fn, "built-in"));
#define DEM_STYLE_integrator(name, fn) PetscCall(DemIntegratorRegister(name, fn, "built-in"));
#define DEM_STYLE_collider(name, fn)   PetscCall(DemColliderRegisterByName(name, fn, "built-in"));
#define DEM_STYLE(kind, name, fn)      DEM_STYLE_##kind(name, fn)
#include "styles.inc"
#undef DEM_STYLE
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* prints every registered entry with its origin (`mmdem list`) */
PetscErrorCode DemRegistryView(FILE *fp)
{
  struct {
    const char  *title;
    DemRegTable *t;
  } cls[] = {
    {"shapes",      &shapes_     },
    {"contact laws", &laws_       },
    {"integrators", &integrators_},
  };

  PetscFunctionBegin;
  for (size_t c = 0; c < sizeof(cls) / sizeof(cls[0]); c++) {
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%s:\n", cls[c].title));
    for (PetscInt i = 0; i < cls[c].t->n; i++) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "  %-20s %s\n", cls[c].t->e[i].name, cls[c].t->e[i].origin));
  }
  PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "colliders:\n"));
  for (PetscInt a = 0; a < nkinds_; a++)
    for (PetscInt b = 0; b < nkinds_; b++)
      if (colliders_[a][b]) {
        char pair[160];
        PetscCall(PetscSNPrintf(pair, sizeof(pair), "%s/%s", kindnames_[a], kindnames_[b]));
        PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "  %-20s %s\n", pair, collider_origin_[a][b]));
      }
  PetscCall(DemPluginView(fp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* forgets every entry whose origin is `origin` (a plugin being rolled back or unloaded) */
PetscErrorCode DemRegistryForget_Private(const char origin[])
{
  DemRegTable *t[] = {&shapes_, &laws_, &integrators_};

  PetscFunctionBegin;
  for (size_t c = 0; c < sizeof(t) / sizeof(t[0]); c++) {
    PetscInt j = 0;
    for (PetscInt i = 0; i < t[c]->n; i++)
      if (strcmp(t[c]->e[i].origin, origin)) t[c]->e[j++] = t[c]->e[i];
    t[c]->n = j;
  }
  for (PetscInt a = 0; a < DEM_KIND_MAX; a++)
    for (PetscInt b = 0; b < DEM_KIND_MAX; b++)
      if (colliders_[a][b] && !strcmp(collider_origin_[a][b], origin)) {
        colliders_[a][b]          = NULL;
        collider_origin_[a][b][0] = 0;
      }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemRegistryFinalize(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(shapes_.e));
  PetscCall(PetscFree(laws_.e));
  PetscCall(PetscFree(integrators_.e));
  PetscCall(PetscMemzero(&shapes_, sizeof(shapes_)));
  PetscCall(PetscMemzero(&laws_, sizeof(laws_)));
  PetscCall(PetscMemzero(&integrators_, sizeof(integrators_)));
  PetscCall(PetscMemzero(colliders_, sizeof(colliders_)));
  nkinds_     = 2;
  registered_ = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

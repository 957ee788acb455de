/*
  test_plugin.c - unit test of the plugin loader and the registries plugins add to
  (src/core/plugin.c, registry.c): loading an example plugin registers its entries with the
  file as origin; loading it again only counts a reference; the last unload forgets its
  entries; a plugin whose init fails half-way is rolled back (the entries it had registered
  are gone); thermo columns and per-body fields refuse clashes naming both origins.
  Uses the example plugins that `make` builds into BUILD/plugins (found next to this
  program's directory).
*/
#include "demimpl.h"
#include "dem_plugin.h"
#include "dem_test.h"
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

static PetscErrorCode Dummy(DemSim sim, void *ctx, PetscReal *v)
{
  *v = 1;
  return PETSC_SUCCESS;
}

static PetscErrorCode DummyIntegrator(DemIntegrator ig)
{
  return PETSC_SUCCESS;
}

/* runs call with errors recorded, not printed; returns the error code */
#define TRY(call) (PetscPushErrorHandler(DemRecordErrorHandler, NULL), DemSetLastError("%s", ""), ierr_ = (call), PetscPopErrorHandler(), ierr_)

static PetscBool HasLaw(const char name[])
{
  DemContactLawCreateFn f;
  PetscErrorCode        ierr;
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  ierr = DemContactLawFind_Private(name, &f);
  PetscPopErrorHandler();
  return ierr ? PETSC_FALSE : PETSC_TRUE;
}

static PetscBool HasColumn(const char name[])
{
  for (PetscInt k = 0; k < DemThermoExtraCount_Private(); k++)
    if (!strcmp(DemThermoExtraName_Private(k), name)) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* the line of `mmdem list` for an entry, or "" */
static void ListLine(const char name[], char out[], size_t len)
{
  char  file[PETSC_MAX_PATH_LEN], line[1024];
  FILE *fp;
  snprintf(file, sizeof(file), "/tmp/mmdem_test_plugin_%d.txt", (int)getpid());
  fp = fopen(file, "w");
  out[0] = 0;
  if (!fp) return;
  DemRegistryView(fp);
  fclose(fp);
  fp = fopen(file, "r");
  while (fp && fgets(line, sizeof(line), fp)) {
    char n[256], o[768];
    if (sscanf(line, " %255s %767s", n, o) == 2 && !strcmp(n, name)) {
      snprintf(out, len, "%s", o);
      break;
    }
  }
  if (fp) fclose(fp);
  remove(file);
}

int main(int argc, char **argv)
{
  char           dir[PETSC_MAX_PATH_LEN], coh[PETSC_MAX_PATH_LEN], se[PETSC_MAX_PATH_LEN], real[PATH_MAX], line[1024], msg[10000];
  PetscErrorCode ierr_;
  PetscInt       n0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(DemRegisterAll());
  snprintf(dir, sizeof(dir), "%s", argv[0]);
  snprintf(coh, sizeof(coh), "%.3000s/../plugins/cohesion.so", dirname(dir));
  snprintf(se, sizeof(se), "%.3000s/../plugins/symplectic_euler.so", dir);
  if (!realpath(coh, real)) {
    DEM_CHECK("example plugins built", 0, "no %s (run make)", coh);
    PetscCall(PetscFinalize());
    return dem_test_failed;
  }

  /* ---- thermo columns and per-body fields */
  DEM_CHECK("thermo column: a built-in name is refused", TRY(DemThermoRegister("e_total", Dummy, NULL, "test")) && strstr(DemLastError(), "thermo column 'e_total' from test is already registered (from built-in)"), "%s", DemLastError());
  DEM_CHECK("thermo column: a name with a comma is refused", TRY(DemThermoRegister("a,b", Dummy, NULL, "test")) && strstr(DemLastError(), "letters, digits or '_'"), "%s", DemLastError());
  n0 = DemThermoExtraCount_Private();
  DEM_CHECK("thermo column: registered", !TRY(DemThermoRegister("t_one", Dummy, NULL, "origin-a")) && DemThermoExtraCount_Private() == n0 + 1 && HasColumn("t_one"), "%s", DemLastError());
  DEM_CHECK("thermo column: a clash names both origins", TRY(DemThermoRegister("t_one", Dummy, NULL, "origin-b")) && strstr(DemLastError(), "thermo column 't_one' from origin-b is already registered (from origin-a)"), "%s", DemLastError());
  DEM_CHECK("per-body field: registered", !TRY(DemBodyFieldRegister("f_one", 2, "origin-a")), "%s", DemLastError());
  DEM_CHECK("per-body field: a clash names both origins", TRY(DemBodyFieldRegister("f_one", 1, "origin-b")) && strstr(DemLastError(), "per-body field 'f_one' from origin-b is already registered (from origin-a)"), "%s", DemLastError());
  DEM_CHECK("per-body field: ncomp 0 is refused", TRY(DemBodyFieldRegister("f_two", 0, "origin-a")) && strstr(DemLastError(), "ncomp must be in [1, 64]"), "%s", DemLastError());

  /* ---- load, reference counts, unload */
  DEM_CHECK("load cohesion.so", !TRY(DemPluginLoad(coh)) && HasLaw("cohesion") && HasColumn("cohesive_bonds"), "%s", DemLastError());
  ListLine("cohesion", line, sizeof(line));
  DEM_CHECK("list: law cohesion has the plugin file as origin", !strcmp(line, real), "origin '%s', expected '%s'", line, real);
  DEM_CHECK("load it again: a reference, no clash", !TRY(DemPluginLoad(coh)) && HasLaw("cohesion"), "%s", DemLastError());
  DEM_CHECK("first unload: still loaded", !TRY(DemPluginUnload(coh)) && HasLaw("cohesion") && HasColumn("cohesive_bonds"), "%s", DemLastError());
  DEM_CHECK("last unload: its law and thermo column are forgotten", !TRY(DemPluginUnload(coh)) && !HasLaw("cohesion") && !HasColumn("cohesive_bonds"), "law %d column %d: %s", (int)HasLaw("cohesion"), (int)HasColumn("cohesive_bonds"), DemLastError());
  DEM_CHECK("unload of a file that is not loaded is refused", TRY(DemPluginUnload(coh)) && strstr(DemLastError(), "is not loaded"), "%s", DemLastError());
  DEM_CHECK("load it once more after unloading: registered again", !TRY(DemPluginLoad(coh)) && HasLaw("cohesion"), "%s", DemLastError());
  PetscCall(DemPluginUnload(coh));

  /* ---- rollback: cohesion.so registers its law, then its thermo column clashes */
  PetscCall(DemThermoRegister("cohesive_bonds", Dummy, NULL, "test"));
  snprintf(msg, sizeof(msg), "plugin '%s': dem_plugin_init failed: thermo column 'cohesive_bonds' from %s is already registered (from test)", real, real);
  DEM_CHECK("init failing half-way: the error names the file and both origins", TRY(DemPluginLoad(coh)) && strstr(DemLastError(), msg), "%s", DemLastError());
  DEM_CHECK("init failing half-way: the law it had registered is rolled back", !HasLaw("cohesion"), "law cohesion still registered");
  ListLine("cohesion", line, sizeof(line));
  DEM_CHECK("init failing half-way: the plugin is not listed", !line[0], "listed with origin %s", line);

  /* ---- an integrator clash with an entry of the application */
  PetscCall(DemIntegratorRegister("symplectic_euler", DummyIntegrator, "application"));
  DEM_CHECK("integrator clash: names both origins", TRY(DemPluginLoad(se)) && strstr(DemLastError(), "integrator 'symplectic_euler' from ") && strstr(DemLastError(), "symplectic_euler.so is already registered (from application)"), "%s", DemLastError());
  DEM_CHECK("not found", TRY(DemPluginLoad("/nonexistent/x.so")) && strstr(DemLastError(), "plugin '/nonexistent/x.so': not found"), "%s", DemLastError());
  PetscCall(PetscFinalize());
  DemPluginFinalizeAll();
  return dem_test_failed;
}

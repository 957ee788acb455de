/* dupverlet.c - bad test plugin: registers an integrator named like the built-in verlet */
#include <demimpl.h>
#include <dem_plugin.h>
static PetscErrorCode Create(DemIntegrator ig) { return 0; }
DEM_PLUGIN_DEFINE("dupverlet", "0", "name clash with a built-in");
PetscErrorCode dem_plugin_init(const DemHostAPI *api, DemPlugin self)
{
  PetscFunctionBegin;
  PetscCall(api->register_integrator(self, "verlet", Create));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* dupcohesion.c - bad test plugin: registers a contact law named like plugins/cohesion.c's */
#include <demimpl.h>
#include <dem_plugin.h>
static PetscErrorCode Create(DemContactLaw law) { return 0; }
DEM_PLUGIN_DEFINE("dupcohesion", "0", "name clash with another plugin");
PetscErrorCode dem_plugin_init(const DemHostAPI *api, DemPlugin self)
{
  PetscFunctionBegin;
  PetscCall(api->register_contact_law(self, "cohesion", Create));
  PetscFunctionReturn(PETSC_SUCCESS);
}

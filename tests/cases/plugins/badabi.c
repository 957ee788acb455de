/* badabi.c - bad test plugin: claims plugin ABI 99.0 (a major version this mmdem does not have) */
#include <dem_plugin.h>
DEM_PLUGIN_EXTERN const DemPluginInfo dem_plugin_info;
const DemPluginInfo dem_plugin_info = {99, 0, sizeof(DemPluginInfo), "badabi", "0", "wrong ABI major"};
PetscErrorCode dem_plugin_init(const DemHostAPI *api, DemPlugin self) { return 0; }

/* noinit.c - bad test plugin: has dem_plugin_info but no dem_plugin_init */
#include <dem_plugin.h>
DEM_PLUGIN_DEFINE("noinit", "0", "no entry point");
int dem_plugin_not_init(void) { return 0; }

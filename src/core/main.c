/*
  main.c - the mmdem command line (DESIGN.md "Command line").

    mmdem run FILE.yaml [--out DIR] [--set key.path=value]... [--restart CHECKPOINT] [--quiet] [PETSc options]
    mmdem check FILE.yaml [--set key.path=value]... [--restart CHECKPOINT]
    mmdem list
    mmdem compare FILE.yaml [--out DIR] [--set key.path=value]... [--jobs N] [--quiet] (compare.c)
    mmdem plot DIR                                                         (plot.c)
    mmdem --version | --help
  Every command also takes --plugin FILE (repeatable) and loads the *.so files of the
  directories in MMDEM_PLUGIN_PATH first (plugin.c).

  Exit status 0 only on success (128 + the signal after SIGINT or SIGTERM, which stop a run at
  the end of a step with a checkpoint). Errors are printed once, without a PETSc traceback, as
  "mmdem: FILE:LINE:COL: key.path: message" for configuration errors. --restart continues a run
  from a checkpoint (checkpoint.c); with check, it only reads and checks the checkpoint.
*/
#include "demimpl.h"
#include "dem_plugin.h"
#include "dem_tools.h"

extern char **environ;

static const char usage[] = "usage: mmdem run FILE.yaml [--out DIR] [--set key.path=value]... [--restart CHECKPOINT] [--quiet] [PETSc options]\n"
                            "       mmdem check FILE.yaml [--set key.path=value]... [--restart CHECKPOINT]\n"
                            "       mmdem list\n"
                            "       mmdem compare FILE.yaml [--out DIR] [--set key.path=value]... [--jobs N] [--quiet]\n"
                            "       mmdem plot DIR\n"
                            "       mmdem --version\n"
                            "every command also takes --plugin FILE (repeatable) and loads MMDEM_PLUGIN_PATH/*.so\n";

static const char *dem_restart = NULL; /* --restart CHECKPOINT */

/* check or run one simulation; the caller destroys sim and root on every path (no leak on an
   error: make test SANITIZE=address runs every error case under LeakSanitizer) */
static PetscErrorCode DemMainSim(int cmd, const char *file, const char *out, int nset, char **sets, PetscBool quiet, DemNode root, DemSim sim)
{
  PetscFunctionBegin;
  for (int k = 0; k < nset; k++) PetscCall(DemConfigSet(root, sets[k]));
  if (out) PetscCall(DemSimSetOutputDir(sim, out));
  sim->out.quiet = quiet;
  PetscCall(DemSimSetFromConfig(sim, root));
  if (dem_restart) PetscCall(DemSimSetRestart(sim, dem_restart));
  if (cmd == 1) {
    PetscCall(DemSimSetUp(sim));
    PetscCall(DemSimView(sim, stdout));
    if (dem_restart) PetscCall(DemSimCheckRestart(sim));
    if (dem_restart) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: ok\n", dem_restart));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: ok\n", file));
  } else PetscCall(DemSimRun(sim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemMain(int cmd, const char *file, const char *out, int nset, char **sets, PetscBool quiet, int nplug, char **plugs, const DemCompareOptions *co)
{
  DemNode        root = NULL;
  DemSim         sim  = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(DemRegisterAll());
  PetscCall(DemPluginLoadPath());
  for (int k = 0; k < nplug; k++) PetscCall(DemPluginLoad(plugs[k]));
  if (cmd == 4) {
    PetscCall(DemPlotRun(file));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cmd == 3) {
    PetscCall(DemCompareRun(file, co));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (cmd == 2) {
    PetscCall(DemRegistryView(stdout));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DemConfigLoad(file, &root));
  PetscCall(DemSimCreate(PETSC_COMM_WORLD, &sim));
  ierr = DemMainSim(cmd, file, out, nset, sets, quiet, root, sim);
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  int            cmd = -1, nset = 0, pargc = 1, nplug = 0, jobs = 0;
  const char    *file = NULL, *out = NULL;
  char         **sets, **pargv, **plugs, **envp;
  DemCompareOptions co;
  PetscBool      quiet = PETSC_FALSE;
  PetscErrorCode ierr;
  PetscMPIInt    rank;

  sets  = (char **)calloc((size_t)argc + 1, sizeof(char *));
  pargv = (char **)calloc((size_t)argc + 1, sizeof(char *));
  plugs = (char **)calloc((size_t)argc + 1, sizeof(char *));
  pargv[0] = argv[0];
  {
    /* the environment as the user gave it, before MPI adds to it: `compare` starts its runs
       with this one, so that each is a fresh singleton and not a rank of this job */
    int ne = 0;
    while (environ[ne]) ne++;
    envp = (char **)calloc((size_t)ne + 1, sizeof(char *));
    for (int k = 0; k < ne; k++) envp[k] = strdup(environ[k]);
  }
  for (int i = 1; i < argc; i++) {
    if (cmd < 0 && !strcmp(argv[i], "run")) cmd = 0;
    else if (cmd < 0 && !strcmp(argv[i], "check")) cmd = 1;
    else if (cmd < 0 && !strcmp(argv[i], "list")) cmd = 2;
    else if (cmd < 0 && !strcmp(argv[i], "compare")) cmd = 3;
    else if (cmd < 0 && !strcmp(argv[i], "plot")) cmd = 4;
    else if (!strcmp(argv[i], "--plugin") && i + 1 < argc) plugs[nplug++] = argv[++i];
    else if (!strncmp(argv[i], "--plugin=", 9)) plugs[nplug++] = argv[i] + 9;
    else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
      char *end;
      jobs = (int)strtol(argv[++i], &end, 10);
      if (*end || jobs < 1) {
        fprintf(stderr, "mmdem: --jobs needs a whole number >= 1, got '%s'\n", argv[i]);
        return 2;
      }
    }
    else if (!strcmp(argv[i], "--version")) {
      printf("mmdem %d.%d\n", DEM_VERSION_MAJOR, DEM_VERSION_MINOR);
      return 0;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage, stdout);
      return 0;
    } else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--set") && i + 1 < argc) sets[nset++] = argv[++i];
    else if (!strncmp(argv[i], "--set=", 6)) sets[nset++] = argv[i] + 6;
    else if (!strcmp(argv[i], "--quiet")) quiet = PETSC_TRUE;
    else if (!strcmp(argv[i], "--restart") && i + 1 < argc) dem_restart = argv[++i];
    else if (!strncmp(argv[i], "--restart=", 10)) dem_restart = argv[i] + 10;
    else if (!strcmp(argv[i], "--out") || !strcmp(argv[i], "--set") || !strcmp(argv[i], "--plugin") || !strcmp(argv[i], "--jobs") || !strcmp(argv[i], "--restart")) {
      fprintf(stderr, "mmdem: %s needs a value\n%s", argv[i], usage);
      return 2;
    } else if (argv[i][0] == '-') {
      pargv[pargc++] = argv[i]; /* a PETSc option and its value */
      if (i + 1 < argc && argv[i + 1][0] != '-' && strcmp(argv[i + 1], "run") && strcmp(argv[i + 1], "check") && strcmp(argv[i + 1], "compare") && strcmp(argv[i + 1], "plot")) pargv[pargc++] = argv[++i];
    } else if ((cmd == 0 || cmd == 1 || cmd == 3 || cmd == 4) && !file) file = argv[i];
    else {
      fprintf(stderr, "mmdem: unexpected argument '%s'\n%s", argv[i], usage);
      return 2;
    }
  }
  if (cmd < 0 || (cmd != 2 && !file)) {
    fputs(usage, stderr);
    return 2;
  }
  co.out   = out;
  co.nset  = nset;
  co.sets  = sets;
  co.nplug = nplug;
  co.plugs = plugs;
  co.jobs  = jobs;
  co.npetsc = pargc - 1;
  co.petsc = pargv + 1;
  co.envp  = envp;
  co.quiet = quiet;
  ierr = PetscInitialize(&pargc, &pargv, NULL, NULL);
  if (ierr) return 1;
  PetscPushErrorHandler(DemRecordErrorHandler, NULL); /* errors are printed once, by main */
  ierr = DemMain(cmd, file, out, nset, sets, quiet, nplug, plugs, &co);
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (ierr && rank == 0) fprintf(stderr, "mmdem: %s\n", DemLastError()[0] ? DemLastError() : "error (no message)");
  PetscPopErrorHandler();
  PetscFinalize();
  DemPluginFinalizeAll(); /* after every object that could use a plugin is gone */
  free(sets);
  free(pargv);
  free(plugs);
  for (int k = 0; envp[k]; k++) free(envp[k]);
  free(envp);
  return ierr ? (DemGuardSignal() ? 128 + DemGuardSignal() : 1) : 0;
}

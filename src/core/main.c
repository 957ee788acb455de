/*
  main.c - the mmdem command line (DESIGN.md "Command line").

    mmdem run FILE.yaml [--out DIR] [--set key.path=value]... [--quiet] [PETSc options]
    mmdem check FILE.yaml [--set key.path=value]...
    mmdem list
    mmdem --version | --help

  Exit status 0 only on success. Errors are printed once, without a PETSc traceback, as
  "mmdem: FILE:LINE:COL: key.path: message" for configuration errors.
*/
#include "demimpl.h"

static const char usage[] = "usage: mmdem run FILE.yaml [--out DIR] [--set key.path=value]... [--quiet] [PETSc options]\n"
                            "       mmdem check FILE.yaml [--set key.path=value]...\n"
                            "       mmdem list\n"
                            "       mmdem --version\n";

static PetscErrorCode DemMain(int cmd, const char *file, const char *out, int nset, char **sets, PetscBool quiet)
{
  DemNode root = NULL;
  DemSim  sim  = NULL;

  PetscFunctionBegin;
  PetscCall(DemRegisterAll());
  if (cmd == 2) {
    PetscCall(DemRegistryView(stdout));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DemConfigLoad(file, &root));
  for (int k = 0; k < nset; k++) PetscCall(DemConfigSet(root, sets[k]));
  PetscCall(DemSimCreate(PETSC_COMM_WORLD, &sim));
  if (out) PetscCall(DemSimSetOutputDir(sim, out));
  sim->out.quiet = quiet;
  PetscCall(DemSimSetFromConfig(sim, root));
  if (cmd == 1) {
    PetscCall(DemSimSetUp(sim));
    PetscCall(DemSimView(sim, stdout));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: ok\n", file));
  } else PetscCall(DemSimRun(sim));
  PetscCall(DemSimDestroy(&sim));
  PetscCall(DemConfigDestroy(&root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  int            cmd = -1, nset = 0, pargc = 1;
  const char    *file = NULL, *out = NULL;
  char         **sets, **pargv;
  PetscBool      quiet = PETSC_FALSE;
  PetscErrorCode ierr;
  PetscMPIInt    rank;

  sets  = (char **)calloc((size_t)argc + 1, sizeof(char *));
  pargv = (char **)calloc((size_t)argc + 1, sizeof(char *));
  pargv[0] = argv[0];
  for (int i = 1; i < argc; i++) {
    if (cmd < 0 && !strcmp(argv[i], "run")) cmd = 0;
    else if (cmd < 0 && !strcmp(argv[i], "check")) cmd = 1;
    else if (cmd < 0 && !strcmp(argv[i], "list")) cmd = 2;
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
    else if (!strcmp(argv[i], "--out") || !strcmp(argv[i], "--set")) {
      fprintf(stderr, "mmdem: %s needs a value\n%s", argv[i], usage);
      return 2;
    } else if (argv[i][0] == '-') {
      pargv[pargc++] = argv[i]; /* a PETSc option and its value */
      if (i + 1 < argc && argv[i + 1][0] != '-' && strcmp(argv[i + 1], "run") && strcmp(argv[i + 1], "check")) pargv[pargc++] = argv[++i];
    } else if ((cmd == 0 || cmd == 1) && !file) file = argv[i];
    else {
      fprintf(stderr, "mmdem: unexpected argument '%s'\n%s", argv[i], usage);
      return 2;
    }
  }
  if (cmd < 0 || (cmd != 2 && !file)) {
    fputs(usage, stderr);
    return 2;
  }
  ierr = PetscInitialize(&pargc, &pargv, NULL, NULL);
  if (ierr) return 1;
  PetscPushErrorHandler(DemRecordErrorHandler, NULL); /* errors are printed once, by main */
  ierr = DemMain(cmd, file, out, nset, sets, quiet);
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (ierr && rank == 0) fprintf(stderr, "mmdem: %s\n", DemLastError()[0] ? DemLastError() : "error (no message)");
  PetscPopErrorHandler();
  PetscFinalize();
  free(sets);
  free(pargv);
  return ierr ? 1 : 0;
}

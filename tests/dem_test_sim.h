/*
  dem_test_sim.h - a simulation from a YAML text for the C tests that drive integrators step by
  step (include after demimpl.h). DemTestMakeSim writes yaml to DIR/NAME.yaml, loads it, applies
  the `--set`-style overrides in sets (NULL-terminated, or NULL), and sets the simulation up with
  its output in DIR/NAME.out, quiet.
*/
#pragma once
#include <stdio.h>

static inline PetscErrorCode DemTestMakeSim(const char *dir, const char *name, const char *yaml, const char *const sets[], DemSim *sim, DemNode *root)
{
  char  path[512];
  FILE *fp;

  PetscFunctionBegin;
  snprintf(path, sizeof(path), "%s/%s.yaml", dir, name);
  fp = fopen(path, "w");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
  fputs(yaml, fp);
  fclose(fp);
  PetscCall(DemConfigLoad(path, root));
  for (PetscInt k = 0; sets && sets[k]; k++) PetscCall(DemConfigSet(*root, sets[k]));
  PetscCall(DemSimCreate(PETSC_COMM_WORLD, sim));
  PetscCall(DemSimSetFromConfig(*sim, *root));
  snprintf(path, sizeof(path), "%s/%s.out", dir, name);
  PetscCall(DemSimSetOutputDir(*sim, path));
  (*sim)->out.quiet = PETSC_TRUE;
  PetscCall(DemSimSetUp(*sim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  dem_tools.h - the analysis commands of the mmdem program: `mmdem compare` (compare.c) and
  `mmdem plot` (plot.c), and the small CSV reader and gnuplot runner they share. Private to
  the program (not installed).
*/
#pragma once
#include "demimpl.h"

typedef struct {
  const char *out;          /* --out DIR or NULL */
  int         nset;         /* --set assignments, applied to every run */
  char      **sets;
  int         nplug;        /* --plugin files, passed on to every run */
  char      **plugs;
  int         jobs;         /* --jobs N (0: compare.jobs, else 1) */
  int         npetsc;       /* PETSc options, passed on to every run */
  char      **petsc;
  char      **envp;         /* the environment the program was started with */
  PetscBool   quiet;
} DemCompareOptions;

PETSC_EXTERN PetscErrorCode DemCompareRun(const char file[], const DemCompareOptions *);
PETSC_EXTERN PetscErrorCode DemPlotRun(const char dir[]);

/* a numeric CSV file: names of the columns, values row-major (non-numbers are NaN) */
typedef struct {
  PetscInt nrow, ncol, cap;
  char   **names;
  double  *v;
  char   **text; /* [nrow*ncol] the fields as text when keep_text was asked, else NULL */
} DemCSV;

PETSC_EXTERN PetscErrorCode DemCSVRead_Private(const char path[], PetscBool keep_text, DemCSV *, PetscBool *found);
PETSC_EXTERN PetscInt       DemCSVColumn_Private(const DemCSV *, const char name[]);
PETSC_EXTERN PetscErrorCode DemCSVFree_Private(DemCSV *);
/* runs `gnuplot SCRIPT` in DIR (output to DIR/gnuplot.log); *found is false when there is no
   gnuplot in PATH (or MMDEM_GNUPLOT names no executable), *status its exit status otherwise */
PETSC_EXTERN PetscErrorCode DemGnuplotRun_Private(const char dir[], const char script[], PetscBool *found, int *status);
/* mkdir -p */
PETSC_EXTERN PetscErrorCode DemMkdirP_Private(const char dir[]);

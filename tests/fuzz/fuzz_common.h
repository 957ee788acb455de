/*
  fuzz_common.h - shared by the libFuzzer targets of tests/fuzz (built and run by `make fuzz`,
  tests/fuzz/run.sh): PETSc initialised once without its signal handler (the sanitizers report
  crashes), errors recorded silently as mmdem's main does, a memory limit so that a fuzzed
  body count is refused instead of allocated (MMDEM_MEMORY_LIMIT, default here 8M), and
  in-memory files (memfd) that the loaders open by the name /proc/self/fd/N.
*/
#pragma once
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "demimpl.h"
#include <sys/mman.h>
#include <unistd.h>

static int DemFuzzInit(void)
{
  static int done = 0;
  if (done) return 0;
  done = 1;
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  setenv("MMDEM_MEMORY_LIMIT", "8M", 0);
  unsetenv("MMDEM_PLUGIN_PATH");
  if (PetscOptionsSetValue(NULL, "-no_signal_handler", NULL)) return 1;
  if (PetscInitializeNoArguments()) return 1;
  PetscPushErrorHandler(DemRecordErrorHandler, NULL);
  if (DemRegisterAll()) return 1;
  return 0;
}

/* an in-memory file holding data[0..n), and its name */
typedef struct {
  int  fd;
  char path[64];
} DemFuzzFile;

static int DemFuzzFileOpen(DemFuzzFile *f, const char *tag)
{
  f->fd = memfd_create(tag, 0);
  if (f->fd < 0) return 1;
  snprintf(f->path, sizeof(f->path), "/proc/self/fd/%d", f->fd);
  return 0;
}

static int DemFuzzFileSet(DemFuzzFile *f, const void *data, size_t n)
{
  const char *p = (const char *)data;
  if (ftruncate(f->fd, 0)) return 1;
  while (n) {
    ssize_t w = pwrite(f->fd, p, n, (off_t)(p - (const char *)data));
    if (w <= 0) return 1;
    n -= (size_t)w, p += w;
  }
  return 0;
}

/* the run description at `path`: load, set up the simulation as `mmdem check` does; every
   error is an expected outcome (a message), only crashes and sanitizer reports are findings.
   Run descriptions that would load plugins or set PETSc options are skipped: they reach
   outside the process's input (dlopen of arbitrary files, -options_file ...). */
static void DemFuzzCheckConfig(const char *path)
{
  DemNode        root = NULL, in = NULL, po = NULL, pl = NULL;
  DemSim         sim  = NULL;
  PetscErrorCode ierr;

  DemSetLastError("%s", "");
  ierr = DemConfigLoad(path, &root);
  if (!ierr) ierr = DemNodeGet(root, "plugins", &pl);
  if (!ierr && !pl) ierr = DemNodeGet(root, "integrator", &in);
  if (!ierr && !pl && in && DemNodeGetType(in) == DEM_NODE_MAP) ierr = DemNodeGet(in, "petsc_options", &po);
  if (!ierr && !pl && !po) {
    ierr = DemSimCreate(PETSC_COMM_SELF, &sim);
    if (!ierr) {
      sim->out.quiet = PETSC_TRUE;
      ierr           = DemSimSetFromConfig(sim, root);
      if (!ierr) ierr = DemSimSetUp(sim);
    }
    (void)DemSimDestroy(&sim);
  }
  (void)DemConfigDestroy(&root);
}

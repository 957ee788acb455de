/*
  resident.c - hands back the clean pages of mapped files that start-up touched (issue 11,
  memory per particle).

  Debian's PETSc brings about a hundred shared libraries with it (its solvers' dependencies:
  hypre, MUMPS, SuperLU, Trilinos, HDF5 with libcurl and gnutls, ...). Before main() runs, the
  dynamic loader has resolved ~51000 symbol relocations in them (LD_DEBUG=statistics) and run
  their constructors; every page it read was mapped together with its neighbours (the kernel's
  fault-around). `mmdem --version` is resident at 29.9 MB before doing anything, 26.5 MB of it
  clean pages of library files; PetscInitialize (MPI_Init: Open MPI's components, PMIx, hwloc)
  adds 10 MB more. An explicit DEM run reads few of those pages again.

  A clean page of a private file mapping is a copy of the file's contents: the kernel drops such
  pages from a process whenever memory runs short and reads them back from the page cache or
  the file on the next access. DemReleaseCleanPages_Private does the same at once, with
  madvise(MADV_DONTNEED), for each mapping that
    - maps a regular file privately and is not writable (code, read-only data, symbol tables);
    - holds no anonymous page (/proc/self/smaps "Anonymous: 0 kB"): pages the loader relocated
      (RELRO, text relocations) are copies-on-write and would lose their contents, so mappings
      with any are left alone, as are .data/.bss, the heap, stacks and shared memory;
    - is not locked, I/O or pfn-mapped, or huge-page backed (smaps VmFlags).
  Whatever the run executes afterwards comes back on first use (minor faults). The peak resident
  size the kernel records (VmHWM, getrusage's ru_maxrss) is not reset: start-up's peak stays
  in it; what it saves is that later growth (PETSc/MPI initialisation, the bodies, contacts and
  lists) no longer stacks on top of start-up's pages. Only the process's own page tables change:
  the pages stay in the page cache, shared with other processes.

  The environment variable MMDEM_KEEP_PAGES (any value) turns it off (tests/cases/resident.sh
  compares the two).
*/
#include "demimpl.h"
#include <sys/mman.h>

/* the mapping of the last smaps header line and what its fields said */
typedef struct {
  unsigned long lo, hi;
  char          perm[5];
  PetscBool     file;    /* a path (a regular file: inode != 0), not "(deleted)" */
  long          rss, anon, locked;
  PetscBool     special; /* VmFlags: locked, I/O or pfn map, hugetlb or THP advice */
} DemMapping;

static size_t DemMappingRelease(const DemMapping *m)
{
  if (!m->file || m->hi <= m->lo || m->perm[0] != 'r' || m->perm[1] != '-' || m->perm[3] != 'p') return 0;
  if (m->rss <= 0 || m->anon != 0 || m->locked != 0 || m->special) return 0;
  if (madvise((void *)m->lo, m->hi - m->lo, MADV_DONTNEED)) return 0;
  return (size_t)m->rss * 1024;
}

/*
  DemReleaseCleanPages_Private - drops the clean pages of read-only private file mappings from
  this process's resident set (see the comment at the top). Not collective; plain C, callable
  before PetscInitialize. Returns the bytes that were resident in the mappings given back (0 with
  MMDEM_KEEP_PAGES set, or without /proc).
*/
size_t DemReleaseCleanPages_Private(void)
{
  FILE      *fp;
  char       line[4096];
  DemMapping m;
  size_t     sum  = 0;
  PetscBool  have = PETSC_FALSE;

  if (getenv("MMDEM_KEEP_PAGES")) return 0;
  fp = fopen("/proc/self/smaps", "r");
  if (!fp) return 0;
  memset(&m, 0, sizeof(m));
  while (fgets(line, sizeof(line), fp)) {
    unsigned long lo, hi, off, inode;
    char          perm[5], dev[16];
    int           pos = 0;
    long          kb;

    if (line[0] >= 'A' && line[0] <= 'Z') { /* a field of the current mapping */
      if (!have) continue;
      if (sscanf(line, "Rss: %ld kB", &kb) == 1) m.rss = kb;
      else if (sscanf(line, "Anonymous: %ld kB", &kb) == 1) m.anon = kb;
      else if (sscanf(line, "Locked: %ld kB", &kb) == 1) m.locked = kb;
      else if (!strncmp(line, "VmFlags:", 8) && (strstr(line, " lo") || strstr(line, " io") || strstr(line, " pf") || strstr(line, " ht") || strstr(line, " hg"))) m.special = PETSC_TRUE;
    } else if (sscanf(line, "%lx-%lx %4s %lx %15s %lu %n", &lo, &hi, perm, &off, dev, &inode, &pos) >= 6 && pos > 0) {
      const char *path = line + pos;
      if (have) sum += DemMappingRelease(&m);
      memset(&m, 0, sizeof(m));
      m.lo = lo;
      m.hi = hi;
      memcpy(m.perm, perm, sizeof(m.perm));
      m.file = (inode != 0 && path[0] == '/' && !strstr(path, "(deleted)")) ? PETSC_TRUE : PETSC_FALSE;
      have   = PETSC_TRUE;
    }
  }
  if (have) sum += DemMappingRelease(&m);
  fclose(fp);
  return sum;
}

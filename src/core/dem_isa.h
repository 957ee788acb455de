/*
  dem_isa.h - hot loops compiled twice: for the baseline instruction set of the build and,
  on x86-64, for AVX2 with FMA (fused multiply-add), chosen at run time (DemIsaV3). The second
  copy of a loop is the same C code with the attribute DEM_ISA_V3; its results differ from the
  baseline's in the last bits (a fused multiply-add rounds once), so for results bitwise
  identical across machines set MMDEM_ISA=generic in the environment.
  Usage in a hot file:
    DEM_HOT_INLINE void Body(args) { ... }   (demimpl.h: forced inline except in sanitizer builds)
    static void Loop_Generic(args) { Body(args); }
    #if DEM_HAVE_ISA_V3
    DEM_ISA_V3 static void Loop_V3(args) { Body(args); }
    #endif
    ... DEM_HAVE_ISA_V3 && DemIsaV3() ? Loop_V3(args) : Loop_Generic(args)
*/
#pragma once
#include <petscsys.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(DEM_NO_ISA_V3)
  #define DEM_HAVE_ISA_V3 1
  #define DEM_ISA_V3      __attribute__((target("avx2,fma")))
#else
  #define DEM_HAVE_ISA_V3 0
  #define DEM_ISA_V3
#endif

/* A few loops also have an AVX-512 copy (x86-64-v4: F, VL, BW, DQ): the same C compiled for
   512-bit vectors (8 doubles per instruction), and intrinsics where the compiler cannot
   vectorise the C (compress stores: hooke_fused.c's pair filter). Lane by lane the arithmetic
   is the AVX2+FMA copy's, with the same roundings (bitwise the same results; tests/cases/
   fused_kernel.py compares the two). The intrinsics index with 32-bit integers, as PetscInt is
   without 64-bit indices; a PETSc built with them gets no AVX-512 copy */
#if DEM_HAVE_ISA_V3 && !defined(DEM_NO_ISA_V4) && !defined(PETSC_USE_64BIT_INDICES)
  #define DEM_HAVE_ISA_V4 1
  #define DEM_ISA_V4      __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,popcnt")))
#else
  #define DEM_HAVE_ISA_V4 0
  #define DEM_ISA_V4
#endif

/* 1 when the processor has AVX2 and FMA and MMDEM_ISA is not "generic" (decided once) */
PETSC_INTERN int DemIsaV3(void);
/* 1 when DemIsaV3() and the processor has AVX-512 F, VL, BW and DQ and MMDEM_ISA is not "avx2" */
PETSC_INTERN int DemIsaV4(void);
/* "x86-64 AVX2+FMA" or "generic": for the run header */
PETSC_INTERN const char *DemIsaName(void);

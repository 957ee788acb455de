/*
  superquadric_contact_v3.c - the superquadric/superquadric and sphere/superquadric pair loop of
  superquadric_contact.c with its contact solver, compiled for AVX2 with FMA (dem_isa.h; the
  colliders there call it, DemCollideSQ_V3_Private, where DemIsaV3()). The solver's static
  functions are in this copy (the out-of-line helpers of superquadric.c - the shape function
  of n1 != n2, the box test - are not). A fused multiply-add rounds once, so results differ
  from the baseline copy's in the last bits (MMDEM_ISA=generic runs the baseline copy).
  Static regime of benchmarks/superquadric_settle (n = 10, callgrind): 3425 -> 3114
  instructions per contact pair per step of the whole program; session 13's four-wide system
  and line root for every separable shape of integer blockiness (DemSQSystemIV3, DemSQPowIV3 in
  superquadric_contact.c): 2511 -> 2346 (n = 10; 2333 when it served blockiness 10 alone).
*/
#include "dem_isa.h"
#if DEM_HAVE_ISA_V3
  #if defined(__clang__) /* clang ignores GCC's target pragma: every function of the copy gets the attribute */
    #pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
  #else
    #pragma GCC target("avx2,fma")
  #endif
  #define DEM_SQ_CONTACT_V3 1
  #include "superquadric_contact.c"
  #if defined(__clang__)
    #pragma clang attribute pop
  #endif
#endif

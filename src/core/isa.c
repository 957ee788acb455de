/*
  isa.c - which copy of the hot loops runs (dem_isa.h): the AVX2+FMA copy when the processor
  has both and the environment does not say MMDEM_ISA=generic; with it the AVX-512 loops when
  the processor has AVX-512 F, VL, BW and DQ and the environment does not say MMDEM_ISA=avx2
  (or avx2-scalar: verlet's scalar AVX2 loops instead of its 4-body ones).
*/
#include "dem_isa.h"
#include <stdlib.h>
#include <string.h>

static int dem_isa_v3 = -1;

int DemIsaV3(void)
{
  if (dem_isa_v3 < 0) {
    const char *e = getenv("MMDEM_ISA");
    int         v = 0;
#if DEM_HAVE_ISA_V3
    __builtin_cpu_init();
    v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    if (e && !strcmp(e, "generic")) v = 0;
    dem_isa_v3 = v;
  }
  return dem_isa_v3;
}

static int dem_isa_v4 = -1;

int DemIsaV4(void)
{
  if (dem_isa_v4 < 0) {
    const char *e = getenv("MMDEM_ISA");
    int         v = 0;
#if DEM_HAVE_ISA_V4
    v = DemIsaV3() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#endif
    if (e && !strncmp(e, "avx2", 4)) v = 0; /* avx2, avx2-scalar (verlet.c) */
    dem_isa_v4 = v;
  }
  return dem_isa_v4;
}

const char *DemIsaName(void)
{
  return DemIsaV4() ? "x86-64 AVX2+FMA, AVX-512 sphere contacts and verlet" : DemIsaV3() ? "x86-64 AVX2+FMA" : "generic";
}

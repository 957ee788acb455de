/*
  quat_inline.h - quaternion helpers as inline functions, for loops compiled twice (dem_isa.h):
  the AVX2+FMA copy of a loop inlines them and fuses their products; the baseline copy does
  the same arithmetic as the out-of-line DemQuatToMatrix (rotation.c), which calls it.
*/
#pragma once
#include "demimpl.h" /* DEM_HOT_INLINE */

/* R with R v = q v q* (row-major), for unit q: DemQuatToMatrix's arithmetic, inlined where a
   loop is compiled twice (dem_isa.h; rotor.c) */
DEM_HOT_INLINE void DemQuatToMatrix_Inline(const PetscReal q[4], PetscReal R[9])
{
  PetscReal w = q[0], x = q[1], y = q[2], z = q[3];

  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);
  R[7] = 2 * (y * z + w * x);
  R[8] = 1 - 2 * (x * x + y * y);
}

/* out = q v q* for unit q (body -> world), as v + w t + u x t with t = 2 u x v, u = (x,y,z):
   DemQuatRotate's arithmetic (rotation.c) */
DEM_HOT_INLINE void DemQuatRotate_Inline(const PetscReal q[4], const PetscReal v[3], PetscReal out[3])
{
  const PetscReal v0 = v[0], v1 = v[1], v2 = v[2], x = q[1], y = q[2], z = q[3];
  const PetscReal t0 = 2 * (y * v2 - z * v1), t1 = 2 * (z * v0 - x * v2), t2 = 2 * (x * v1 - y * v0);

  out[0] = v0 + q[0] * t0 + (y * t2 - z * t1);
  out[1] = v1 + q[0] * t1 + (z * t0 - x * t2);
  out[2] = v2 + q[0] * t2 + (x * t1 - y * t0);
}

/* out = q* v q for unit q (world -> body): the rotation by the conjugate quaternion */
DEM_HOT_INLINE void DemQuatRotateInv_Inline(const PetscReal q[4], const PetscReal v[3], PetscReal out[3])
{
  const PetscReal qc[4] = {q[0], -q[1], -q[2], -q[3]};

  DemQuatRotate_Inline(qc, v, out);
}

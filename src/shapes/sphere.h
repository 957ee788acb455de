/*
  sphere.h - closed-form contact geometry of two spheres, shared by the sphere-sphere collider
  (sphere.c) and fused law kernels.
*/
#pragma once
#include "demimpl.h"

/*
  DemSphereSphereGeom_Private - d = x_a - x_b - shift (given), radii ra, rb: unit normal n (b to
  a), gap = |d| - ra - rb, lever arms from the centres to the middle of the overlap
  (la = p - x_a, lb = p - x_b(image)). Coincident centres get the normal +z.
*/
static inline void DemSphereSphereGeom_Private(const PetscReal d[3], PetscReal r2, PetscReal ra, PetscReal rb, PetscReal n[3], PetscReal *gap, PetscReal la[3], PetscReal lb[3])
{
  PetscReal dist = PetscSqrtReal(r2), s;
  if (dist > 0) {
    PetscReal inv = 1.0 / dist;
    n[0] = d[0] * inv, n[1] = d[1] * inv, n[2] = d[2] * inv;
  } else n[0] = n[1] = 0, n[2] = 1;
  *gap = dist - ra - rb;
  s    = ra + 0.5 * (*gap); /* centre of a to the middle of the overlap, along -n */
  for (int j = 0; j < 3; j++) {
    la[j] = -s * n[j];
    lb[j] = d[j] - s * n[j];
  }
}

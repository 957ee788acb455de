/*
  mesh.h - read-only view of a mesh wall (mesh.c) for colliders in other files
  (polyhedron_contact.c: polyhedron/mesh). Not installed.
*/
#pragma once
#include "demimpl.h"

typedef struct {
  PetscInt         nv, nt, ne;
  const PetscReal *x;   /* [3 nv] vertices, wall body frame */
  const PetscInt  *tri; /* [3 nt] triangles */
  const PetscReal *fn;  /* [3 nt] unit normals (of the vertex order), body frame */
  const PetscInt  *ev;  /* [2 ne] edge vertices */
  const PetscInt  *te;  /* [3 nt] edge k of a triangle joins its vertices k and k+1 */
  const PetscInt  *et;  /* [2 ne] triangles of an edge (-1: boundary) */
} DemMeshView;

/* the geometry of mesh wall s; PETSC_FALSE when s is not a mesh wall */
PETSC_EXTERN PetscBool DemShapeMeshView_Private(DemShape s, DemMeshView *v);
/* the triangles of mesh wall s near the box c +- r (body frame): *n of them in (*cand)[];
   the array is the wall's scratch, valid until the next query */
PETSC_EXTERN PetscErrorCode DemShapeMeshQuery_Private(DemShape s, const PetscReal c[3], PetscReal r, PetscInt *n, const PetscInt **cand);
/* a fresh contact (feature type 0 face, 1 edge, 2 vertex; index idx; history slot `slot`) of
   neighbour-list pair `pair` takes over the history of a neighbouring feature's contact of the
   pair that no longer touches (the features of this step: nf, ftype, fidx, keep) */
PETSC_EXTERN PetscErrorCode DemShapeMeshInheritHistory_Private(DemShape s, DemSim sim, PetscInt pair, int type, PetscInt idx, PetscInt nf, const int ftype[], const PetscInt fidx[], const PetscBool keep[], PetscInt slot);

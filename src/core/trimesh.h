/*
  trimesh.h - triangulated surfaces read through the Gmsh SDK (STL, .msh, STEP/BREP/IGES through
  OpenCASCADE, or solids built with Gmsh's OCC kernel), shared by the polyhedron shape and mesh
  walls (src/shapes). Not collective: every rank reads the same file.
*/
#pragma once
#include "dem.h"

typedef struct {
  PetscInt   nv, nt;
  PetscReal *x;   /* [3 nv] vertex coordinates */
  PetscInt  *tri; /* [3 nt] vertex indices, counter-clockwise seen from outside (outward normal) */
} DemTriMesh;

/* OCC solids for DemTriMeshFromOcc; p[] (SI units, before scaling):
   box: corner x,y,z, extents dx,dy,dz; cylinder: base centre x,y,z, axis dx,dy,dz, radius r;
   cone: base centre x,y,z, axis dx,dy,dz, radii r1 (base) r2 (top); sphere: centre x,y,z, radius */
typedef enum { DEM_OCC_BOX, DEM_OCC_CYLINDER, DEM_OCC_CONE, DEM_OCC_SPHERE } DemOccType;
typedef struct {
  DemOccType type;
  PetscReal  p[8];
} DemOccSolid;

/* DemTriMeshLoadFile - reads the triangles of path (.stl, .msh, .step/.stp, .brep/.brp,
   .iges/.igs; CAD files are meshed by Gmsh with its default sizes), coordinates multiplied by
   scale (> 0). Coincident vertices are merged. CAD input is oriented consistently and outward
   when it is closed; STL and .msh keep the file's orientation (check with
   DemTriMeshCheckClosed). A missing or unreadable file is an error naming it. */
PETSC_EXTERN PetscErrorCode DemTriMeshLoadFile(const char *path, PetscReal scale, DemTriMesh *m);
/* the same, CAD files meshed with element size h (> 0; 0: Gmsh's default) */
PETSC_EXTERN PetscErrorCode DemTriMeshLoadFileSized(const char *path, PetscReal scale, PetscReal h, DemTriMesh *m);
/* DemTriMeshFromOcc - the boundary of n OCC solids (fused into one when fuse is set) meshed with
   element size h (> 0), scaled; with drop_planar the planar faces (caps of cylinders and cones,
   faces of boxes) are left out, which gives an open surface (a funnel from a cone + cylinder) */
PETSC_EXTERN PetscErrorCode DemTriMeshFromOcc(PetscInt n, const DemOccSolid s[], PetscBool fuse, PetscBool drop_planar, PetscReal h, PetscReal scale, DemTriMesh *m);
PETSC_EXTERN PetscErrorCode DemTriMeshDestroy(DemTriMesh *m);
/* DemTriMeshCheckClosed - error (naming `what` and the offending edge or triangle) for an empty,
   open, non-manifold, inconsistently oriented, degenerate or inverted (inward normals) mesh */
PETSC_EXTERN PetscErrorCode DemTriMeshCheckClosed(const DemTriMesh *m, const char *what);
/* DemTriMeshMassProperties - mass, centre of mass and inertia tensor about the centre of mass
   (row-major 3x3, world axes of the mesh) of the closed surface filled with density rho, by the
   divergence theorem (sum of signed tetrahedra from the vertex centroid) */
PETSC_EXTERN PetscErrorCode DemTriMeshMassProperties(const DemTriMesh *m, PetscReal rho, PetscReal *mass, PetscReal com[3], PetscReal inertia[9]);
/* DemTriMeshEdges - unique edges: *ne, edge vertices ev[2 ne] (ev[2e] < ev[2e+1]), the three edges
   of each triangle te[3 nt] (edge k joins vertices k and k+1 mod 3) and the two triangles of each
   edge et[2 ne] (-1 when only one, the first of them when more than two); free with PetscFree3 */
PETSC_EXTERN PetscErrorCode DemTriMeshEdges(const DemTriMesh *m, PetscInt *ne, PetscInt **ev, PetscInt **te, PetscInt **et);
/* makes the orientation consistent over each connected component (flips triangles against the
   first one) and, for a closed mesh, outward; *flipped counts flipped triangles (may be NULL) */
PETSC_EXTERN PetscErrorCode DemTriMeshOrient(DemTriMesh *m, PetscInt *flipped);
/* initialises Gmsh once per process (silenced; finalized with PETSc) */
PETSC_EXTERN PetscErrorCode DemGmshInitialize(void);

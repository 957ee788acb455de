/*
  output.c - what a run leaves behind (DESIGN.md "Output"):
    DIR/thermo.csv        step,time,dt,ke_trans,ke_rot,pe_grav,pe_contact,dissipated,contacts,
                          iterations,wall_s, then e_total (ke+pe) and e_balance (e_total +
                          dissipated; constant when the bookkeeping closes), rejected (steps
                          the integrator rejected and retried with a smaller dt, cumulative)
    DIR/walls.csv         step,time,wall,fx,fy,fz,mx,my,mz   (reaction on each wall, moment
                          about the wall's point; wall = its body id)
    DIR/track.csv         step,time,id,x,y,z,vx,vy,vz,wx,wy,wz,qw,qx,qy,qz,fx,fy,fz,tx,ty,tz
    DIR/bodies_final.csv  id,shape,material,x,y,z,vx,vy,vz,wx,wy,wz,qw,qx,qy,qz,fx,fy,fz
    DIR/vtk/              bodies_NNNNNN.vtp, walls_NNNNNN.vtp, contacts_NNNNNN.vtp and a .pvd
                          series for each, written through dem_vtk.h (VTK's XML writers)
  Whole files (bodies_final.csv, VTK, .pvd) are written to a temporary name and renamed, so a
  reader never sees half a file; the CSV series are flushed at every thermo step.
  Only rank 0 writes the CSV files.
*/
#include "dem_tools.h"
#include "demimpl.h"
#include "dem_vtk.h"
#include "dem_plugin.h"
#include <sys/stat.h>
#include <errno.h>
#include <unistd.h>

typedef struct {
  FILE     *thermo, *walls, *track;
  PetscInt  nvtk, capvtk;
  PetscReal *vtktime;
  PetscReal next_vtk;
  PetscInt  nextra; /* extra thermo columns (plugins), fixed when the files are opened */
} DemOutputState;

static DemOutputState *DemOut(DemSim sim)
{
  return (DemOutputState *)sim->outstate;
}


static PetscErrorCode DemOpenCSV(const char dir[], const char name[], const char header[], FILE **fp)
{
  char path[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s", dir, name));
  *fp = fopen(path, "w");
  PetscCheck(*fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open '%s': %s", path, strerror(errno));
  fprintf(*fp, "%s\n", header);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a new CSV file, or on restart the existing one continued after the checkpoint's step */
static PetscErrorCode DemOpenCSVRun(DemSim sim, const char name[], const char header[], FILE **fp)
{
  PetscFunctionBegin;
  if (sim->restart[0]) PetscCall(DemCheckpointReopenCSV_Private(sim, sim->out.dir, name, header, fp));
  else PetscCall(DemOpenCSV(sim->out.dir, name, header, fp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the extension of frame s of a series: pvtp on several ranks; after a restart with another
   rank count (MPI checkpoints restart on one rank, decomp.c) the earlier frames keep theirs */
static const char *DemVtkExt(DemSim sim, const char kind[], PetscInt s)
{
  const char *ext = sim->size > 1 ? "pvtp" : "vtp", *other = sim->size > 1 ? "vtp" : "pvtp";
  char        path[2 * PETSC_MAX_PATH_LEN]; /* out.dir is at most PETSC_MAX_PATH_LEN */
  if (!sim->restart[0]) return ext;
  snprintf(path, sizeof(path), "%s/vtk/%s_%06" PetscInt_FMT ".%s", sim->out.dir, kind, s, ext);
  if (access(path, F_OK) == 0) return ext;
  snprintf(path, sizeof(path), "%s/vtk/%s_%06" PetscInt_FMT ".%s", sim->out.dir, kind, s, other);
  return access(path, F_OK) == 0 ? other : ext;
}

/* true surfaces of the bodies whose shape tessellates itself (non-spherical bodies; spheres are
   drawn from the bodies' points and radii): vtk/bodies_surf_NNNNNN.vtp, each shape's surface
   scaled by the body's radius / the shape's bounding radius, rotated and placed, with the
   body id per triangle, and vtk/bodies_surf.pvd; nothing when there are no such bodies.
   Collective. */
static PetscErrorCode DemWriteBodySurfaces(DemSim sim, PetscInt k)
{
  DemOutputState *os = DemOut(sim);
  DemBodyStore   *bs = &sim->bodies;
  PetscInt        nloc = 0, nglob = 0, npt = 0, ntri = 0, p0 = 0, t0 = 0;
  DemSurface     *srf;
  PetscReal      *r0;
  double         *xyz;
  long           *tri;
  int64_t        *bid;
  char            path[PETSC_MAX_PATH_LEN];
  int             fcomm = (int)MPI_Comm_c2f(sim->comm);

  PetscFunctionBegin;
  for (PetscInt i = 0; i < bs->n; i++) nloc += !(bs->flags[i] & DEM_WALL) && sim->shapes[bs->shape[i]]->ops->tessellate;
  PetscCallMPI(MPI_Allreduce(&nloc, &nglob, 1, MPIU_INT, MPI_SUM, sim->comm));
  if (!nglob) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscCalloc2(sim->nshape, &srf, sim->nshape, &r0));
  for (PetscInt i = 0; i < bs->n; i++) {
    DemShape s = sim->shapes[bs->shape[i]];
    if ((bs->flags[i] & DEM_WALL) || !s->ops->tessellate) continue;
    if (!srf[bs->shape[i]].npoints) {
      PetscCall((*s->ops->tessellate)(s, &srf[bs->shape[i]]));
      PetscCall(DemShapeBoundingRadius(s, &r0[bs->shape[i]]));
    }
    npt += srf[bs->shape[i]].npoints;
    ntri += srf[bs->shape[i]].ntri;
  }
  PetscCall(PetscMalloc3(3 * npt + 1, &xyz, 3 * ntri + 1, &tri, ntri + 1, &bid));
  for (PetscInt i = 0; i < bs->n; i++) {
    DemShape          s = sim->shapes[bs->shape[i]];
    const DemSurface *f = &srf[bs->shape[i]];
    PetscReal         sc;
    if ((bs->flags[i] & DEM_WALL) || !s->ops->tessellate) continue;
    sc = r0[bs->shape[i]] > 0 ? bs->radius[i] / r0[bs->shape[i]] : 1;
    for (PetscInt p = 0; p < f->npoints; p++) {
      PetscReal y[3], z[3] = {sc * f->points[3 * p], sc * f->points[3 * p + 1], sc * f->points[3 * p + 2]};
      DemQuatRotate(bs->q + 4 * i, z, y);
      for (int d = 0; d < 3; d++) xyz[3 * (p0 + p) + d] = y[d] + bs->x[3 * i + d];
    }
    for (PetscInt t = 0; t < f->ntri; t++) {
      for (int d = 0; d < 3; d++) tri[3 * (t0 + t) + d] = p0 + f->tri[3 * t + d];
      bid[t0 + t] = bs->gid[i];
    }
    p0 += f->npoints;
    t0 += f->ntri;
  }
  {
    DemVtkArray arr[] = {
      {"id", 1, DEM_VTK_INT64, bid},
    };
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/vtk/bodies_surf_%06" PetscInt_FMT ".vtp", sim->out.dir, k));
    DemVtkCall(sim->comm, DemVtkWriteSurface(fcomm, path, (long)npt, xyz, (long)ntri, tri, 1, arr, DEM_VTK_ERR));
  }
  PetscCall(PetscFree3(xyz, tri, bid));
  for (PetscInt s = 0; s < sim->nshape; s++) PetscCall(DemSurfaceFree(&srf[s]));
  PetscCall(PetscFree2(srf, r0));
  if (sim->rank == 0) {
    char  **files;
    double *times;
    PetscCall(PetscMalloc2(os->nvtk, &files, os->nvtk, &times));
    for (PetscInt s = 0; s < os->nvtk; s++) {
      char name[64];
      PetscCall(PetscSNPrintf(name, sizeof(name), "bodies_surf_%06" PetscInt_FMT ".%s", s, DemVtkExt(sim, "bodies_surf", s)));
      PetscCall(PetscStrallocpy(name, &files[s]));
      times[s] = os->vtktime[s];
    }
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/vtk/bodies_surf.pvd", sim->out.dir));
    DemVtkCall(PETSC_COMM_SELF, DemVtkWritePvd(path, (int)os->nvtk, times, (const char *const *)files, DEM_VTK_ERR));
    for (PetscInt s = 0; s < os->nvtk; s++) PetscCall(PetscFree(files[s]));
    PetscCall(PetscFree2(files, times));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemWriteVTK(DemSim sim)
{
  DemOutputState *os = DemOut(sim);
  DemBodyStore   *bs = &sim->bodies;
  char            path[PETSC_MAX_PATH_LEN];
  PetscInt        np = 0, k = os->nvtk;
  int             fcomm = (int)MPI_Comm_c2f(sim->comm);

  PetscFunctionBegin;
  /* bodies */
  for (PetscInt i = 0; i < bs->n; i++) np += !(bs->flags[i] & DEM_WALL);
  {
    double  *xyz, *rad, *vel, *ang, *ori, *frc;
    int64_t *id;
    int32_t *mat, *shp;
    PetscInt j = 0, *order = NULL;
    PetscCall(PetscMalloc6(3 * np + 1, &xyz, np + 1, &rad, 3 * np + 1, &vel, 3 * np + 1, &ang, 4 * np + 1, &ori, 3 * np + 1, &frc));
    PetscCall(PetscMalloc3(np + 1, &id, np + 1, &mat, np + 1, &shp));
    if (!DemDecompActive_Private(sim)) PetscCall(DemSimGidOrder_Private(sim, &order)); /* in id order after a reorder (sort.c) */
    for (PetscInt ii = 0; ii < bs->n; ii++) {
      const PetscInt i = order ? order[ii] : ii;
      if (bs->flags[i] & DEM_WALL) continue;
      for (int d = 0; d < 3; d++) {
        xyz[3 * j + d] = bs->x[3 * i + d];
        vel[3 * j + d] = bs->v[3 * i + d];
        ang[3 * j + d] = bs->w[3 * i + d];
        frc[3 * j + d] = bs->f[3 * i + d];
      }
      for (int d = 0; d < 4; d++) ori[4 * j + d] = bs->q[4 * i + d];
      rad[j] = bs->radius[i];
      id[j]  = bs->gid[i];
      mat[j] = bs->material[i];
      shp[j] = bs->shape[i];
      j++;
    }
    {
      DemVtkArray arr[] = {
        {"id",               1, DEM_VTK_INT64,  id },
        {"radius",           1, DEM_VTK_DOUBLE, rad},
        {"velocity",         3, DEM_VTK_DOUBLE, vel},
        {"angular_velocity", 3, DEM_VTK_DOUBLE, ang},
        {"orientation",      4, DEM_VTK_DOUBLE, ori},
        {"force",            3, DEM_VTK_DOUBLE, frc},
        {"material",         1, DEM_VTK_INT32,  mat},
        {"shape",            1, DEM_VTK_INT32,  shp},
      };
      PetscCall(PetscSNPrintf(path, sizeof(path), "%s/vtk/bodies_%06" PetscInt_FMT ".vtp", sim->out.dir, k));
      DemVtkCall(sim->comm, DemVtkWritePoints(fcomm, path, (long)np, xyz, 8, arr, DEM_VTK_ERR));
    }
    PetscCall(PetscFree6(xyz, rad, vel, ang, ori, frc));
    PetscCall(PetscFree3(id, mat, shp));
    PetscCall(PetscFree(order));
  }
  /* walls: their true surfaces, placed by position and orientation */
  if (sim->nwall) {
    PetscInt npt = 0, ntri = 0, p0 = 0, t0 = 0;
    double  *xyz;
    long    *tri;
    int64_t *wid;
    DemSurface *srf;
    PetscCall(PetscCalloc1(sim->nwall, &srf));
    for (PetscInt w = 0; w < sim->nwall; w++) {
      PetscInt i = sim->walls[w].body;
      DemShape s = sim->shapes[bs->shape[i]];
      if (bs->flags[i] & DEM_REMOVED) continue;
      if (sim->rank > 0 && DemDecompActive_Private(sim)) continue; /* MPI: walls are on every rank; rank 0's piece draws them */
      if (s->ops->tessellate) PetscCall((*s->ops->tessellate)(s, &srf[w]));
      npt += srf[w].npoints;
      ntri += srf[w].ntri;
    }
    PetscCall(PetscMalloc3(3 * npt + 1, &xyz, 3 * ntri + 1, &tri, ntri + 1, &wid));
    for (PetscInt w = 0; w < sim->nwall; w++) {
      PetscInt i = sim->walls[w].body;
      for (PetscInt p = 0; p < srf[w].npoints; p++) {
        PetscReal y[3];
        DemQuatRotate(bs->q + 4 * i, srf[w].points + 3 * p, y);
        for (int d = 0; d < 3; d++) xyz[3 * (p0 + p) + d] = y[d] + bs->x[3 * i + d];
      }
      for (PetscInt t = 0; t < srf[w].ntri; t++) {
        for (int d = 0; d < 3; d++) tri[3 * (t0 + t) + d] = p0 + srf[w].tri[3 * t + d];
        wid[t0 + t] = bs->gid[i];
      }
      p0 += srf[w].npoints;
      t0 += srf[w].ntri;
      PetscCall(DemSurfaceFree(&srf[w]));
    }
    {
      DemVtkArray arr[] = {
        {"wall", 1, DEM_VTK_INT64, wid},
      };
      PetscCall(PetscSNPrintf(path, sizeof(path), "%s/vtk/walls_%06" PetscInt_FMT ".vtp", sim->out.dir, k));
      DemVtkCall(sim->comm, DemVtkWriteSurface(fcomm, path, (long)npt, xyz, (long)ntri, tri, 1, arr, DEM_VTK_ERR));
    }
    PetscCall(PetscFree3(xyz, tri, wid));
    PetscCall(PetscFree(srf));
  }
  /* contact network: a line from the centre of a to the centre of b (to the contact point
     for walls), with the force on a */
  if (sim->out.contacts) {
    DemContactList   *cl = &sim->cl;
    DemContactForces *cf = &sim->cf;
    PetscInt          nc = 0, j = 0;
    double           *xyz, *fn, *ft, *F, *nrm, *gap;
    long             *conn;
    int64_t          *ia, *ib;
    int32_t          *bond;
    for (PetscInt c = 0; c < cl->n; c++) nc += cl->gap[c] < 0 || cf->fn[c] != 0 || DemContactIsBond_Private(sim, c); /* overlapping or carrying a force (contact dynamics: rigid contacts, gap 0), or a bond */
    PetscCall(PetscMalloc6(6 * nc + 1, &xyz, nc + 1, &fn, 3 * nc + 1, &ft, 3 * nc + 1, &F, 3 * nc + 1, &nrm, nc + 1, &gap));
    PetscCall(PetscMalloc3(2 * nc + 1, &conn, nc + 1, &ia, nc + 1, &ib));
    PetscCall(PetscMalloc1(nc + 1, &bond));
    for (PetscInt c = 0; c < cl->n; c++) {
      PetscInt a = cl->a[c], b = cl->b[c];
      if (!(cl->gap[c] < 0) && cf->fn[c] == 0 && !DemContactIsBond_Private(sim, c)) continue;
      bond[j] = DemContactIsBond_Private(sim, c) ? 1 : 0;
      for (int d = 0; d < 3; d++) {
        xyz[6 * j + d]     = bs->x[3 * a + d];
        xyz[6 * j + 3 + d] = (bs->flags[b] & DEM_WALL) ? cl->p[3 * c + d] : cl->p[3 * c + d] - cl->rb[3 * c + d];
        ft[3 * j + d]      = cf->ft[3 * c + d];
        nrm[3 * j + d]     = cl->nrm[3 * c + d];
        F[3 * j + d]       = cf->fn[c] * cl->nrm[3 * c + d] + cf->ft[3 * c + d];
      }
      conn[2 * j]     = 2 * j;
      conn[2 * j + 1] = 2 * j + 1;
      fn[j]           = cf->fn[c];
      gap[j]          = cl->gap[c];
      ia[j]           = bs->gid[a];
      ib[j]           = bs->gid[b];
      j++;
    }
    {
      DemVtkArray arr[] = {
        {"fn",     1, DEM_VTK_DOUBLE, fn },
        {"ft",     3, DEM_VTK_DOUBLE, ft },
        {"force",  3, DEM_VTK_DOUBLE, F  },
        {"normal", 3, DEM_VTK_DOUBLE, nrm},
        {"gap",    1, DEM_VTK_DOUBLE, gap},
        {"a",      1, DEM_VTK_INT64,  ia },
        {"b",      1, DEM_VTK_INT64,  ib },
        {"bond",   1, DEM_VTK_INT32,  bond},
      };
      PetscCall(PetscSNPrintf(path, sizeof(path), "%s/vtk/contacts_%06" PetscInt_FMT ".vtp", sim->out.dir, k));
      DemVtkCall(sim->comm, DemVtkWriteLines(fcomm, path, (long)(2 * nc), xyz, (long)nc, conn, 8, arr, DEM_VTK_ERR));
    }
    { /* the contact points themselves with the force on a (the arrows of 000's figures;
         several per pair for polyhedra) */
      double *pxyz;
      PetscCall(PetscMalloc1(3 * nc + 1, &pxyz));
      for (PetscInt c = 0, jj = 0; c < cl->n; c++) {
        if (!(cl->gap[c] < 0) && cf->fn[c] == 0 && !DemContactIsBond_Private(sim, c)) continue;
        for (int d = 0; d < 3; d++) pxyz[3 * jj + d] = cl->p[3 * c + d];
        jj++;
      }
      {
        DemVtkArray parr[] = {
          {"force",  3, DEM_VTK_DOUBLE, F  },
          {"fn",     1, DEM_VTK_DOUBLE, fn },
          {"normal", 3, DEM_VTK_DOUBLE, nrm},
          {"gap",    1, DEM_VTK_DOUBLE, gap},
          {"a",      1, DEM_VTK_INT64,  ia },
          {"b",      1, DEM_VTK_INT64,  ib },
        };
        PetscCall(PetscSNPrintf(path, sizeof(path), "%s/vtk/contact_points_%06" PetscInt_FMT ".vtp", sim->out.dir, k));
        DemVtkCall(sim->comm, DemVtkWritePoints(fcomm, path, (long)nc, pxyz, 6, parr, DEM_VTK_ERR));
      }
      PetscCall(PetscFree(pxyz));
    }
    PetscCall(PetscFree6(xyz, fn, ft, F, nrm, gap));
    PetscCall(PetscFree3(conn, ia, ib));
    PetscCall(PetscFree(bond));
  }
  /* the .pvd series, rewritten whole each time */
  if (os->nvtk == os->capvtk) {
    PetscReal *nt;
    os->capvtk = PetscMax(64, 2 * os->capvtk);
    PetscCall(PetscMalloc1(os->capvtk, &nt));
    if (os->nvtk) PetscCall(PetscArraycpy(nt, os->vtktime, os->nvtk));
    PetscCall(PetscFree(os->vtktime));
    os->vtktime = nt;
  }
  os->vtktime[os->nvtk++] = sim->time;
  PetscCall(DemWriteBodySurfaces(sim, os->nvtk - 1)); /* non-spherical bodies' true surfaces */
  if (sim->rank == 0) {
    const char *kinds[4] = {"bodies", "walls", "contacts", "contact_points"};
    PetscBool   on[4]    = {PETSC_TRUE, sim->nwall > 0, sim->out.contacts, sim->out.contacts};
    char      **files;
    double     *times;
    PetscCall(PetscMalloc2(os->nvtk, &files, os->nvtk, &times));
    for (int kk = 0; kk < 4; kk++) {
      if (!on[kk]) continue;
      for (PetscInt s = 0; s < os->nvtk; s++) {
        char name[64];
        PetscCall(PetscSNPrintf(name, sizeof(name), "%s_%06" PetscInt_FMT ".%s", kinds[kk], s, DemVtkExt(sim, kinds[kk], s)));
        PetscCall(PetscStrallocpy(name, &files[s]));
        times[s] = os->vtktime[s];
      }
      PetscCall(PetscSNPrintf(path, sizeof(path), "%s/vtk/%s.pvd", sim->out.dir, kinds[kk]));
      DemVtkCall(PETSC_COMM_SELF, DemVtkWritePvd(path, (int)os->nvtk, times, (const char *const *)files, DEM_VTK_ERR));
      for (PetscInt s = 0; s < os->nvtk; s++) PetscCall(PetscFree(files[s]));
    }
    PetscCall(PetscFree2(files, times));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemOutputOpen_Private(DemSim sim)
{
  DemOutputState *os;
  char            vdir[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(PetscNew(&os));
  sim->outstate = os;
  if (sim->rank == 0) {
    PetscCall(DemMkdirP_Private(sim->out.dir));
    if (sim->out.vtk_every >= 0) {
      PetscCall(PetscSNPrintf(vdir, sizeof(vdir), "%s/vtk", sim->out.dir));
      PetscCall(DemMkdirP_Private(vdir));
    }
    char header[4096] = "step,time,dt,ke_trans,ke_rot,pe_grav,pe_contact,dissipated,contacts,iterations,wall_s,e_total,e_balance,rejected";
    for (PetscInt k = 0; k < DemThermoExtraCount_Private(); k++) {
      PetscCall(PetscStrlcat(header, ",", sizeof(header)));
      PetscCall(PetscStrlcat(header, DemThermoExtraName_Private(k), sizeof(header)));
    }
    for (PetscInt k = 0; sim->integ && sim->integ->ops->thermo && sim->integ->thermo_names && sim->integ->thermo_names[k]; k++) { /* the integrator's columns */
      PetscCall(PetscStrlcat(header, ",", sizeof(header)));
      PetscCall(PetscStrlcat(header, sim->integ->thermo_names[k], sizeof(header)));
    }
    PetscCall(DemOpenCSVRun(sim, "thermo.csv", header, &os->thermo));
    if (sim->nwall) PetscCall(DemOpenCSVRun(sim, "walls.csv", "step,time,wall,fx,fy,fz,mx,my,mz", &os->walls));
    if (sim->out.ntrack) PetscCall(DemOpenCSVRun(sim, "track.csv", "step,time,id,x,y,z,vx,vy,vz,wx,wy,wz,qw,qx,qy,qz,fx,fy,fz,tx,ty,tz", &os->track));
  }
  PetscCallMPI(MPI_Barrier(sim->comm));
  os->nextra   = DemThermoExtraCount_Private();
  os->next_vtk = 0;
  if (sim->restart[0]) { /* the rows and frames up to the checkpoint's step exist (checkpoint.c) */
    DemRestartOutput ro;
    PetscCall(DemCheckpointRestartOutput_Private(sim, &ro));
    os->capvtk = PetscMax(64, ro.nvtk);
    PetscCall(PetscMalloc1(os->capvtk, &os->vtktime));
    if (ro.nvtk) PetscCall(PetscArraycpy(os->vtktime, ro.vtktime, ro.nvtk));
    os->nvtk     = ro.nvtk;
    os->next_vtk = ro.next_vtk;
  } else PetscCall(DemOutputStep_Private(sim, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether a VTK frame will be written at time t (or because the run ends there) */
PetscBool DemOutputVTKDue_Private(DemSim sim, PetscReal t, PetscBool last)
{
  DemOutputState *os = DemOut(sim);
  if (!os || sim->out.vtk_every < 0) return PETSC_FALSE;
  return (last || t >= os->next_vtk - 1e-9 * sim->dt) ? PETSC_TRUE : PETSC_FALSE;
}

/* thermo, walls and track lines at thermo steps (and when `force`); VTK when due */
PetscErrorCode DemOutputStep_Private(DemSim sim, PetscBool force)
{
  DemOutputState *os = DemOut(sim);
  DemBodyStore   *bs = &sim->bodies;
  PetscLogDouble  now;

  PetscFunctionBegin;
  if (force || sim->step % sim->out.thermo_every == 0) {
    PetscReal        kt, kr, pg, e, extra[32];
    const PetscReal *trows = NULL;
    PetscCall(DemSimEnergies_Private(sim, &kt, &kr, &pg));
    for (PetscInt k = 0; k < os->nextra && k < 32; k++) PetscCall(DemThermoExtraEval_Private(sim, k, &extra[k])); /* collective */
    PetscCall(PetscTime(&now));
    e = kt + kr + pg + sim->pe_contact;
    if (sim->out.ntrack && DemDecompActive_Private(sim)) PetscCall(DemDecompTrackRows_Private(sim, &trows)); /* MPI: gathered on rank 0 (decomp.c) */
    if (sim->rank == 0) {
      fprintf(os->thermo, "%" PetscInt_FMT ",%.10g,%.10g,%.12g,%.12g,%.12g,%.12g,%.12g,%" PetscInt_FMT ",%" PetscInt_FMT ",%.4f,%.12g,%.12g", sim->step, (double)sim->time, (double)sim->dt, (double)kt, (double)kr, (double)pg, (double)sim->pe_contact, (double)sim->dissipated, sim->ncontacts, sim->iterations, (double)(now - sim->wall0), (double)e, (double)(e + sim->dissipated));
      fprintf(os->thermo, ",%" PetscInt_FMT, sim->rejected); /* steps rejected so far (run.c) */
      for (PetscInt k = 0; k < os->nextra && k < 32; k++) fprintf(os->thermo, ",%.12g", (double)extra[k]); /* plugin columns */
      if (sim->integ && sim->integ->ops->thermo && sim->integ->thermo_names) { /* the integrator's columns */
        PetscReal iv[16];
        PetscInt  ni = 0;
        while (ni < 16 && sim->integ->thermo_names[ni]) ni++;
        PetscCall((*sim->integ->ops->thermo)(sim->integ, iv));
        for (PetscInt k = 0; k < ni; k++) fprintf(os->thermo, ",%.12g", (double)iv[k]);
      }
      fprintf(os->thermo, "\n");
      fflush(os->thermo);
      for (PetscInt w = 0; w < sim->nwall && os->walls; w++) {
        PetscInt i = sim->walls[w].body;
        fprintf(os->walls, "%" PetscInt_FMT ",%.10g,%" PetscInt_FMT ",%.12g,%.12g,%.12g,%.12g,%.12g,%.12g\n", sim->step, (double)sim->time, (PetscInt)bs->gid[i], (double)bs->f[3 * i], (double)bs->f[3 * i + 1], (double)bs->f[3 * i + 2], (double)bs->t[3 * i], (double)bs->t[3 * i + 1], (double)bs->t[3 * i + 2]);
      }
      if (os->walls) fflush(os->walls);
      for (PetscInt k = 0; k < sim->out.ntrack && os->track; k++) {
        PetscInt         i = sim->out.track[k]; /* MPI: trows holds the gathered rows */
        const PetscReal *X = trows ? trows + 19 * k : bs->x + 3 * i, *V = trows ? X + 3 : bs->v + 3 * i, *W = trows ? X + 6 : bs->w + 3 * i;
        const PetscReal *Q = trows ? X + 9 : bs->q + 4 * i, *F = trows ? X + 13 : bs->f + 3 * i, *T = trows ? X + 16 : bs->t + 3 * i;
        fprintf(os->track, "%" PetscInt_FMT ",%.10g,%" PetscInt_FMT, sim->step, (double)sim->time, trows ? i : (PetscInt)bs->gid[i]);
        for (int d = 0; d < 3; d++) fprintf(os->track, ",%.15g", (double)X[d]);
        for (int d = 0; d < 3; d++) fprintf(os->track, ",%.15g", (double)V[d]);
        for (int d = 0; d < 3; d++) fprintf(os->track, ",%.15g", (double)W[d]);
        for (int d = 0; d < 4; d++) fprintf(os->track, ",%.15g", (double)Q[d]);
        for (int d = 0; d < 3; d++) fprintf(os->track, ",%.15g", (double)F[d]);
        for (int d = 0; d < 3; d++) fprintf(os->track, ",%.15g", (double)T[d]);
        fprintf(os->track, "\n");
      }
      if (os->track) fflush(os->track);
    }
  }
  if (sim->out.vtk_every >= 0 && (sim->time >= os->next_vtk - 1e-9 * sim->dt || (force && sim->step == 0))) {
    PetscCall(DemWriteVTK(sim));
    if (sim->out.vtk_every > 0)
      while (os->next_vtk <= sim->time + 1e-9 * sim->dt) os->next_vtk += sim->out.vtk_every;
    else os->next_vtk = PETSC_MAX_REAL; /* vtk_every: 0 -> first and last frame only */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the last thermo/VTK frame, bodies_final.csv, and closes the series */
PetscErrorCode DemOutputClose_Private(DemSim sim)
{
  DemOutputState *os = DemOut(sim);
  DemBodyStore   *bs = &sim->bodies;

  PetscFunctionBegin;
  if (sim->step % sim->out.thermo_every) PetscCall(DemOutputStep_Private(sim, PETSC_TRUE));
  if (sim->out.vtk_every >= 0 && os->nvtk && os->vtktime[os->nvtk - 1] < sim->time) PetscCall(DemWriteVTK(sim));
  DemBodyStore all; /* MPI: every rank's bodies gathered on rank 0, in id order (decomp.c) */
  if (DemDecompActive_Private(sim)) {
    PetscCall(DemDecompGatherBodies_Private(sim, &all));
    bs = &all;
  }
  PetscInt *order = NULL; /* serial: in id order after a reorder of the store (sort.c) */
  if (bs != &all) PetscCall(DemSimGidOrder_Private(sim, &order));
  if (sim->rank == 0) {
    char  path[PETSC_MAX_PATH_LEN], tmp[PETSC_MAX_PATH_LEN];
    FILE *fp;
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/bodies_final.csv", sim->out.dir));
    PetscCall(PetscSNPrintf(tmp, sizeof(tmp), "%s.tmp", path));
    fp = fopen(tmp, "w");
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open '%s': %s", tmp, strerror(errno));
    fprintf(fp, "id,shape,material,x,y,z,vx,vy,vz,wx,wy,wz,qw,qx,qy,qz,fx,fy,fz\n");
    for (PetscInt ii = 0; ii < bs->n; ii++) {
      const PetscInt i = order ? order[ii] : ii;
      if (bs->flags[i] & DEM_WALL) continue;
      fprintf(fp, "%" PetscInt_FMT ",%s,%s", (PetscInt)bs->gid[i], sim->shapes[bs->shape[i]]->name, sim->mat[bs->material[i]].name);
      for (int d = 0; d < 3; d++) fprintf(fp, ",%.17g", (double)bs->x[3 * i + d]);
      for (int d = 0; d < 3; d++) fprintf(fp, ",%.17g", (double)bs->v[3 * i + d]);
      for (int d = 0; d < 3; d++) fprintf(fp, ",%.17g", (double)bs->w[3 * i + d]);
      for (int d = 0; d < 4; d++) fprintf(fp, ",%.17g", (double)bs->q[4 * i + d]);
      for (int d = 0; d < 3; d++) fprintf(fp, ",%.17g", (double)bs->f[3 * i + d]);
      fprintf(fp, "\n");
    }
    PetscCheck(fclose(fp) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot write '%s': %s", tmp, strerror(errno));
    PetscCheck(rename(tmp, path) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "cannot rename '%s': %s", tmp, strerror(errno));
    if (os->thermo) fclose(os->thermo);
    if (os->walls) fclose(os->walls);
    if (os->track) fclose(os->track);
  }
  if (bs == &all) PetscCall(DemBodyStoreFree(&all));
  PetscCall(PetscFree(order));
  PetscCall(PetscFree(os->vtktime));
  PetscCall(PetscFree(sim->outstate));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the VTK series written so far, for checkpoints (checkpoint.c) */
PetscErrorCode DemOutputGetSeries_Private(DemSim sim, PetscInt *nvtk, const PetscReal **vtktime, PetscReal *next_vtk)
{
  DemOutputState *os = DemOut(sim);

  PetscFunctionBegin;
  *nvtk     = os ? os->nvtk : 0;
  *vtktime  = os ? os->vtktime : NULL;
  *next_vtk = os ? os->next_vtk : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

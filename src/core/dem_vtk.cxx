/*
  dem_vtk.cxx - the VTK output shim behind dem_vtk.h, the one C++ file of mmdem.

  Builds a vtkPolyData over the caller's arrays (points and data arrays are not copied: VTK only
  reads them while writing) and writes it with vtkXMLPolyDataWriter (one rank) or
  vtkXMLPPolyDataWriter driven by a vtkMPIController over the caller's communicator. Format:
  appended raw binary, zlib, 64-bit block headers.

  Atomicity: the serial writer writes to PATH.tmp<pid>_<k> and renames it. The parallel writer
  writes its pieces under their final names (new names every output step, nobody reads them
  before the summary exists); the summary is produced in memory on rank 0 after VTK's reduction
  of the piece flags (so after every piece is closed) and then written to a temporary name and
  renamed.

  Collective failure: inputs and the output directory are checked on every rank and the
  verdict is agreed before VTK's own collective step, because VTK returns early on a rank
  whose piece fails, leaving rank 0 waiting in its reduction. A write error after that point
  (a full disk while writing a piece on a rank other than 0) can still hang; VTK gives no way
  around it.

  MPI: the controller wraps the caller's communicator without freeing it and without touching
  MPI_COMM_WORLD (vtkMPIController::Initialize() would install an aborting error handler on
  it); VTK duplicates the communicator for its RMI channel and frees the duplicate afterwards.
*/
#define DEM_VTK_SHIM /* built alone into libmmdem_vtk.so, loaded on first use (dem_vtk.h) */
#include "dem_vtk.h"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCommand.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkExecutive.h>
#include <vtkMPI.h>
#include <vtkMPICommunicator.h>
#include <vtkMPIController.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkTypeInt32Array.h>
#include <vtkTypeInt64Array.h>
#include <vtkXMLPPolyDataWriter.h>
#include <vtkXMLPolyDataWriter.h>

#include <mpi.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

static_assert(std::is_same<MPI_Fint, int>::value, "dem_vtk.h passes the communicator as int: MPI_Fint must be int");

namespace {

enum CellKind { CELLS_VERTS, CELLS_LINES, CELLS_POLYS };

/* one writer call: points, cells of one kind, data arrays */
struct Request {
  const char        *path;
  long               npts;
  const double      *xyz;
  CellKind           kind;
  long               ncells;
  const long        *conn; /* [nper ncells]; NULL for vertices (one per point) */
  int                nper; /* points per cell */
  int                narr;
  const DemVtkArray *arr;
  bool               celldata; /* arrays hold one tuple per cell, else per point */
};

std::string Format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char *fmt, ...)
{
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string s(n > 0 ? (size_t)n : 0, '\0');
  if (n > 0) vsnprintf(&s[0], (size_t)n + 1, fmt, aq);
  va_end(aq);
  return s;
}

int SetError(char *err, size_t errlen, const std::string &msg)
{
  if (err && errlen > 0) snprintf(err, errlen, "%s", msg.empty() ? "unknown error" : msg.c_str());
  return 1;
}

int SetOk(char *err, size_t errlen)
{
  if (err && errlen > 0) err[0] = '\0';
  return 0;
}

bool EndsWith(const std::string &s, const char *suffix)
{
  size_t n = strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string DirName(const std::string &path)
{
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

/* a fresh name beside path: same directory, so rename(2) is atomic */
std::string TempName(const std::string &path)
{
  static std::atomic<unsigned> counter(0);
  return path + Format(".tmp%ld_%u", (long)getpid(), counter++);
}

/* collects the first error VTK reports through the object's ErrorEvent; observing the event
   also keeps VTK from printing it to stderr */
class ErrorCatcher : public vtkCommand {
public:
  static ErrorCatcher *New()
  {
    ErrorCatcher *c = new ErrorCatcher;
    c->InitializeObjectBase();
    return c;
  }
  void Execute(vtkObject *, unsigned long, void *calldata) override
  {
    if (!calldata || !this->Message.empty()) return;
    /* VTK's text is "ERROR: In FILE, line N\nCLASS (0x...): MESSAGE\n\n": keep MESSAGE */
    std::string s = static_cast<const char *>(calldata);
    size_t      nl = s.find('\n');
    if (s.compare(0, 6, "ERROR:") == 0 && nl != std::string::npos) s = s.substr(nl + 1);
    size_t colon = s.find("): ");
    if (colon != std::string::npos && colon < s.find('\n')) s = s.substr(colon + 3);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    this->Message = s;
  }
  std::string Message;
};

/* the writer reports the cause, its executive then reports that the writer failed */
void Observe(vtkAlgorithm *w, ErrorCatcher *catcher)
{
  w->AddObserver(vtkCommand::ErrorEvent, catcher);
  w->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, catcher);
}

std::string VtkErrorCodeText(unsigned long code)
{
  switch (code) {
  case vtkErrorCode::NoError: return "no error";
  case vtkErrorCode::CannotOpenFileError: return "cannot open file";
  case vtkErrorCode::OutOfDiskSpaceError: return "out of disk space";
  case vtkErrorCode::NoFileNameError: return "no file name";
  default: return Format("VTK error code %lu", code);
  }
}

bool Validate(const Request &rq, std::string &msg)
{
  if (!rq.path || !*rq.path) return msg = "no output path", false;
  if (!EndsWith(rq.path, ".vtp")) return msg = Format("output path %s does not end in .vtp", rq.path), false;
  if (rq.npts < 0) return msg = Format("%s: negative number of points %ld", rq.path, rq.npts), false;
  if (rq.ncells < 0) return msg = Format("%s: negative number of cells %ld", rq.path, rq.ncells), false;
  if (rq.npts > 0 && !rq.xyz) return msg = Format("%s: %ld points but no coordinates", rq.path, rq.npts), false;
  if (rq.narr < 0 || (rq.narr > 0 && !rq.arr)) return msg = Format("%s: bad array list (%d arrays)", rq.path, rq.narr), false;
  if (rq.kind != CELLS_VERTS) {
    if (rq.ncells > 0 && !rq.conn) return msg = Format("%s: %ld cells but no connectivity", rq.path, rq.ncells), false;
    for (long i = 0; i < rq.nper * rq.ncells; i++) {
      if (rq.conn[i] < 0 || rq.conn[i] >= rq.npts)
        return msg = Format("%s: cell %ld refers to point %ld, outside [0, %ld)", rq.path, i / rq.nper, rq.conn[i], rq.npts), false;
    }
  }
  long                  ntuples = rq.celldata ? rq.ncells : rq.npts;
  std::set<std::string> names;
  for (int a = 0; a < rq.narr; a++) {
    const DemVtkArray &A = rq.arr[a];
    if (!A.name || !*A.name) return msg = Format("%s: array %d has no name", rq.path, a), false;
    if (!names.insert(A.name).second) return msg = Format("%s: array name \"%s\" used twice", rq.path, A.name), false;
    if (A.ncomp < 1) return msg = Format("%s: array \"%s\" has %d components", rq.path, A.name, A.ncomp), false;
    if (A.type != DEM_VTK_DOUBLE && A.type != DEM_VTK_INT64 && A.type != DEM_VTK_INT32)
      return msg = Format("%s: array \"%s\" has unknown type %d", rq.path, A.name, A.type), false;
    if (ntuples > 0 && !A.data) return msg = Format("%s: array \"%s\" has no data", rq.path, A.name), false;
  }
  return true;
}

/* wraps caller memory without copying; VTK never writes to it (save = 1: never freed) */
template <class ArrayT, class T> vtkSmartPointer<ArrayT> Wrap(const char *name, int ncomp, long ntuples, const void *data)
{
  vtkSmartPointer<ArrayT> a = vtkSmartPointer<ArrayT>::New();
  if (name) a->SetName(name);
  a->SetNumberOfComponents(ncomp);
  if (ntuples > 0) a->SetArray(static_cast<T *>(const_cast<void *>(data)), (vtkIdType)ntuples * ncomp, 1);
  else a->SetNumberOfTuples(0);
  return a;
}

vtkSmartPointer<vtkDataArray> WrapArray(const DemVtkArray &A, long ntuples)
{
  switch (A.type) {
  case DEM_VTK_INT64: return Wrap<vtkTypeInt64Array, vtkTypeInt64>(A.name, A.ncomp, ntuples, A.data);
  case DEM_VTK_INT32: return Wrap<vtkTypeInt32Array, vtkTypeInt32>(A.name, A.ncomp, ntuples, A.data);
  default: return Wrap<vtkDoubleArray, double>(A.name, A.ncomp, ntuples, A.data);
  }
}

vtkSmartPointer<vtkPolyData> Build(const Request &rq)
{
  vtkSmartPointer<vtkPolyData> pd = vtkSmartPointer<vtkPolyData>::New();
  vtkNew<vtkPoints>            points;
  points->SetData(Wrap<vtkDoubleArray, double>(nullptr, 3, rq.npts, rq.xyz));
  pd->SetPoints(points);

  vtkNew<vtkTypeInt64Array> offsets, connectivity;
  offsets->SetNumberOfTuples(rq.ncells + 1);
  connectivity->SetNumberOfTuples((vtkIdType)rq.nper * rq.ncells);
  for (long c = 0; c <= rq.ncells; c++) offsets->SetValue(c, (vtkTypeInt64)rq.nper * c);
  for (long i = 0; i < rq.nper * rq.ncells; i++) connectivity->SetValue(i, rq.conn ? rq.conn[i] : i);
  vtkNew<vtkCellArray> cells;
  cells->SetData(offsets, connectivity);
  switch (rq.kind) {
  case CELLS_VERTS: pd->SetVerts(cells); break;
  case CELLS_LINES: pd->SetLines(cells); break;
  case CELLS_POLYS: pd->SetPolys(cells); break;
  }

  vtkFieldData *fd = rq.celldata ? static_cast<vtkFieldData *>(pd->GetCellData()) : static_cast<vtkFieldData *>(pd->GetPointData());
  for (int a = 0; a < rq.narr; a++) fd->AddArray(WrapArray(rq.arr[a], rq.celldata ? rq.ncells : rq.npts));
  return pd;
}

void Configure(vtkXMLWriter *w)
{
  w->SetDataModeToAppended();
  w->EncodeAppendedDataOff();
  w->SetCompressorTypeToZLib();
  w->SetHeaderTypeToUInt64();
}

bool WriteFileAtomic(const std::string &path, const std::string &text, std::string &msg)
{
  std::string tmp = TempName(path);
  FILE       *f   = fopen(tmp.c_str(), "wb");
  if (!f) return msg = Format("cannot create %s: %s", tmp.c_str(), strerror(errno)), false;
  bool ok = fwrite(text.data(), 1, text.size(), f) == text.size();
  int  e  = errno;
  if (fclose(f) != 0 && ok) ok = false, e = errno;
  if (!ok) {
    unlink(tmp.c_str());
    return msg = Format("cannot write %s: %s", tmp.c_str(), strerror(e)), false;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    e = errno;
    unlink(tmp.c_str());
    return msg = Format("cannot rename %s to %s: %s", tmp.c_str(), path.c_str(), strerror(e)), false;
  }
  return true;
}

bool WriteSerial(const Request &rq, std::string &msg)
{
  vtkSmartPointer<vtkPolyData> pd  = Build(rq);
  std::string                  tmp = TempName(rq.path);
  vtkNew<vtkXMLPolyDataWriter> w;
  vtkNew<ErrorCatcher>         catcher;
  Observe(w, catcher);
  Configure(w);
  w->SetFileName(tmp.c_str());
  w->SetInputData(pd);
  int ok = w->Write();
  if (!ok || w->GetErrorCode() != vtkErrorCode::NoError) {
    unlink(tmp.c_str());
    std::string why = !catcher->Message.empty() ? catcher->Message : VtkErrorCodeText(w->GetErrorCode());
    return msg = Format("cannot write %s: %s", rq.path, why.c_str()), false;
  }
  if (rename(tmp.c_str(), rq.path) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    return msg = Format("cannot rename %s to %s: %s", tmp.c_str(), rq.path, strerror(e)), false;
  }
  return true;
}

/* true when ok on every rank; otherwise msg becomes the message of the lowest failing rank */
bool Agree(MPI_Comm comm, bool ok, std::string &msg)
{
  int rank, size, first;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = ok ? size : rank;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return true;
  std::vector<char> buf(1024, '\0');
  if (rank == first) snprintf(buf.data(), buf.size(), "%s", msg.c_str());
  MPI_Bcast(buf.data(), (int)buf.size(), MPI_CHAR, first, comm);
  msg = buf.data();
  if (rank != first) msg = Format("rank %d: %s", first, buf.data());
  return false;
}

bool WriteParallel(const Request &rq, MPI_Comm comm, std::string &msg)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::string path(rq.path ? rq.path : "");
  std::string base = EndsWith(path, ".vtp") ? path.substr(0, path.size() - 4) : path;
  std::string pvtp = base + ".pvtp";
  std::string piece = base + Format("_%d.vtp", rank);

  bool ok = Validate(rq, msg);
  if (ok && access(DirName(path).c_str(), W_OK | X_OK) != 0)
    ok = false, msg = Format("cannot write %s: directory %s: %s", piece.c_str(), DirName(path).c_str(), strerror(errno));
  if (!Agree(comm, ok, msg)) return false;

  vtkSmartPointer<vtkPolyData> pd = Build(rq);
  bool                         empty = rq.npts == 0 && rq.ncells == 0;

  vtkNew<vtkMPICommunicator>   vcomm;
  vtkMPICommunicatorOpaqueComm opaque(&comm);
  vcomm->InitializeExternal(&opaque);
  vtkNew<vtkMPIController> controller;
  controller->SetCommunicator(vcomm);

  vtkNew<vtkXMLPPolyDataWriter> w;
  vtkNew<ErrorCatcher>          catcher;
  Observe(w, catcher);
  Configure(w);
  w->SetController(controller);
  w->SetFileName(pvtp.c_str());
  w->SetNumberOfPieces(size);
  w->SetStartPiece(rank);
  w->SetEndPiece(rank);
  w->SetGhostLevel(0);
  w->SetUseSubdirectory(false);
  w->SetWriteSummaryFile(1);
  /* the summary goes to memory, then atomically to disk; pieces are written by internal
     writers that do not inherit this flag */
  w->SetWriteToOutputString(rank == 0);
  w->SetInputData(pd);
  int wrote = w->Write();
  ok = wrote && w->GetErrorCode() == vtkErrorCode::NoError;
  if (!ok) {
    std::string why = !catcher->Message.empty() ? catcher->Message : VtkErrorCodeText(w->GetErrorCode());
    msg = Format("cannot write %s: %s", empty ? pvtp.c_str() : piece.c_str(), why.c_str());
  }
  w->SetController(nullptr);
  if (ok && rank == 0) ok = WriteFileAtomic(pvtp, w->GetOutputString(), msg);
  if (ok && empty) unlink(piece.c_str()); /* a stale piece from an earlier run is not listed */
  return Agree(comm, ok, msg);
}

int Write(int fcomm, const Request &rq, char *err, size_t errlen)
{
  try {
    std::string msg;
    int         initialized = 0, finalized = 0, size = 1;
    MPI_Comm    comm = MPI_COMM_NULL;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) {
      comm = MPI_Comm_f2c(fcomm);
      if (comm == MPI_COMM_NULL) return SetError(err, errlen, "null MPI communicator");
      MPI_Comm_size(comm, &size);
    }
    bool ok = size > 1 ? WriteParallel(rq, comm, msg) : (Validate(rq, msg) && WriteSerial(rq, msg));
    return ok ? SetOk(err, errlen) : SetError(err, errlen, msg);
  } catch (const std::bad_alloc &) {
    return SetError(err, errlen, Format("%s: out of memory", rq.path ? rq.path : "VTK output"));
  } catch (const std::exception &e) {
    return SetError(err, errlen, Format("%s: %s", rq.path ? rq.path : "VTK output", e.what()));
  } catch (...) {
    return SetError(err, errlen, Format("%s: unknown C++ exception", rq.path ? rq.path : "VTK output"));
  }
}

void XmlEscape(std::string &out, const char *s)
{
  for (; *s; s++) {
    switch (*s) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default: out += *s;
    }
  }
}

} // namespace

extern "C" int DemVtkWritePoints(int fcomm, const char *path, long n, const double *xyz, int narr, const DemVtkArray *arr, char *err, size_t errlen)
{
  Request rq = {path, n, xyz, CELLS_VERTS, n, nullptr, 1, narr, arr, false};
  return Write(fcomm, rq, err, errlen);
}

extern "C" int DemVtkWriteLines(int fcomm, const char *path, long npts, const double *xyz, long nlines, const long *conn, int ncarr, const DemVtkArray *carr, char *err, size_t errlen)
{
  Request rq = {path, npts, xyz, CELLS_LINES, nlines, conn, 2, ncarr, carr, true};
  return Write(fcomm, rq, err, errlen);
}

extern "C" int DemVtkWriteSurface(int fcomm, const char *path, long npts, const double *xyz, long ntri, const long *tri, int ncarr, const DemVtkArray *carr, char *err, size_t errlen)
{
  Request rq = {path, npts, xyz, CELLS_POLYS, ntri, tri, 3, ncarr, carr, true};
  return Write(fcomm, rq, err, errlen);
}

extern "C" int DemVtkWritePvd(const char *path, int n, const double *times, const char *const *files, char *err, size_t errlen)
{
  try {
    if (!path || !*path) return SetError(err, errlen, "no .pvd path");
    if (n < 0 || (n > 0 && (!times || !files))) return SetError(err, errlen, Format("%s: bad dataset list (%d entries)", path, n));
    std::string xml = "<?xml version=\"1.0\"?>\n"
                      "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
                      "  <Collection>\n";
    for (int i = 0; i < n; i++) {
      if (!std::isfinite(times[i])) return SetError(err, errlen, Format("%s: entry %d has time %g", path, i, times[i]));
      if (!files[i] || !*files[i]) return SetError(err, errlen, Format("%s: entry %d has no file name", path, i));
      xml += Format("    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"", times[i]);
      XmlEscape(xml, files[i]);
      xml += "\"/>\n";
    }
    xml += "  </Collection>\n</VTKFile>\n";
    std::string msg;
    return WriteFileAtomic(path, xml, msg) ? SetOk(err, errlen) : SetError(err, errlen, msg);
  } catch (const std::bad_alloc &) {
    return SetError(err, errlen, Format("%s: out of memory", path));
  } catch (const std::exception &e) {
    return SetError(err, errlen, Format("%s: %s", path, e.what()));
  } catch (...) {
    return SetError(err, errlen, Format("%s: unknown C++ exception", path));
  }
}

#!/usr/bin/python3
"""vtk_read.py FILE [--json] - prints what VTK's own XML readers find in a .vtp or .pvtp file,
or what xml.etree finds in a .pvd collection, so tests can compare it with what was written.

Run it with /usr/bin/python3 (python3-vtk9); numpy is not needed. Exit status 0 on success,
1 if the file cannot be read (the reason goes to stderr).

Text output, one item per line, first token the key:
  .vtp/.pvtp:
    file PATH
    pieces N                      pieces listed in the summary (1 for .vtp)
    points N
    verts N | lines N | polys N | strips N            cell counts
    xyz COUNT v...                                     point coordinates, COUNT = 3 points
    verts.offsets COUNT v... / verts.conn COUNT v...   (same for lines, polys, strips)
    pointdata NAME TYPE NCOMP NTUPLES v...             TYPE: Float64, Int64, Int32, ...
    celldata NAME TYPE NCOMP NTUPLES v...
  .pvd:
    file PATH
    datasets N
    dataset TIMESTEP EXISTS FILE                       EXISTS: 1 if FILE (relative to the
                                                       .pvd's directory) exists, else 0
Floats are printed with repr(), which round-trips exactly through strtod(); integers exactly.
With --json the same content is printed as one JSON object.
"""
import json
import os
import sys


def fail(msg):
    sys.stderr.write("vtk_read.py: %s\n" % msg)
    sys.exit(1)


def type_name(arr):
    from vtkmodules.vtkCommonCore import VTK_FLOAT, VTK_DOUBLE
    size = arr.GetDataTypeSize()
    t = arr.GetDataType()
    if t in (VTK_FLOAT, VTK_DOUBLE):
        return "Float%d" % (8 * size)
    name = arr.GetDataTypeAsString()
    return ("UInt%d" if "unsigned" in name else "Int%d") % (8 * size)


def values(arr):
    n = arr.GetNumberOfValues()
    return [arr.GetValue(i) for i in range(n)]


def read_polydata(path):
    from vtkmodules.vtkCommonCore import vtkOutputWindow, vtkStringOutputWindow
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader, vtkXMLPPolyDataReader
    if not os.path.isfile(path):
        fail("%s: no such file" % path)
    window = vtkStringOutputWindow()
    vtkOutputWindow.SetInstance(window)
    if path.endswith(".pvtp"):
        reader = vtkXMLPPolyDataReader()
    else:
        reader = vtkXMLPolyDataReader()
    if not reader.CanReadFile(path):
        fail("%s: not a file VTK's %s can read" % (path, reader.GetClassName()))
    reader.SetFileName(path)
    reader.Update()
    text = window.GetOutput()
    if reader.GetErrorCode() != 0 or "ERROR" in text:
        fail("%s: VTK reported an error:\n%s" % (path, text))
    pd = reader.GetOutput()
    out = {"file": path,
           "pieces": reader.GetNumberOfPieces() if path.endswith(".pvtp") else 1,
           "points": pd.GetNumberOfPoints()}
    pts = pd.GetPoints()
    xyz = []
    if pts is not None:
        for i in range(pd.GetNumberOfPoints()):
            xyz.extend(pts.GetPoint(i))
    out["xyz"] = xyz
    for kind, cells in (("verts", pd.GetVerts()), ("lines", pd.GetLines()),
                        ("polys", pd.GetPolys()), ("strips", pd.GetStrips())):
        out[kind] = cells.GetNumberOfCells()
        out[kind + ".offsets"] = values(cells.GetOffsetsArray())
        out[kind + ".conn"] = values(cells.GetConnectivityArray())
    for key, data in (("pointdata", pd.GetPointData()), ("celldata", pd.GetCellData())):
        arrays = []
        for a in range(data.GetNumberOfArrays()):
            arr = data.GetAbstractArray(a)
            arrays.append({"name": arr.GetName(), "type": type_name(arr),
                           "ncomp": arr.GetNumberOfComponents(),
                           "ntuples": arr.GetNumberOfTuples(), "values": values(arr)})
        out[key] = arrays
    return out


def read_pvd(path):
    import xml.etree.ElementTree as ET
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        fail("%s: %s" % (path, e))
    if root.tag != "VTKFile" or root.get("type") != "Collection":
        fail("%s: not a VTK collection (root <%s type=%r>)" % (path, root.tag, root.get("type")))
    coll = root.find("Collection")
    if coll is None:
        fail("%s: no <Collection> element" % path)
    base = os.path.dirname(path)
    sets = []
    for ds in coll.findall("DataSet"):
        f = ds.get("file")
        if f is None or ds.get("timestep") is None:
            fail("%s: <DataSet> without file or timestep" % path)
        sets.append({"timestep": float(ds.get("timestep")), "file": f,
                     "exists": os.path.exists(os.path.join(base, f))})
    return {"file": path, "datasets": sets}


def fmt(v):
    return repr(float(v)) if isinstance(v, float) else str(v)


def print_text(d):
    print("file", d["file"])
    if "datasets" in d:
        print("datasets", len(d["datasets"]))
        for s in d["datasets"]:
            print("dataset", repr(s["timestep"]), int(s["exists"]), s["file"])
        return
    for k in ("pieces", "points", "verts", "lines", "polys", "strips"):
        print(k, d[k])
    print("xyz", len(d["xyz"]), *[fmt(v) for v in d["xyz"]])
    for kind in ("verts", "lines", "polys", "strips"):
        for part in ("offsets", "conn"):
            v = d[kind + "." + part]
            print(kind + "." + part, len(v), *[fmt(x) for x in v])
    for key in ("pointdata", "celldata"):
        for a in d[key]:
            print(key, a["name"], a["type"], a["ncomp"], a["ntuples"], *[fmt(x) for x in a["values"]])


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    if len(args) != 1:
        sys.stderr.write(__doc__)
        sys.exit(2)
    path = args[0]
    d = read_pvd(path) if path.endswith(".pvd") else read_polydata(path)
    if "--json" in sys.argv[1:]:
        print(json.dumps(d))
    else:
        print_text(d)


if __name__ == "__main__":
    main()

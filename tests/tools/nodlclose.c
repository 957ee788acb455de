/*
  nodlclose.c - test aid for sanitizer builds (tests/run.sh preloads it): dlclose() does
  nothing, so that the shared objects OpenMPI opens for its components (mca_*.so) and closes in
  MPI_Finalize are still mapped when LeakSanitizer reports at exit. Otherwise their frames are
  "<unknown module>" and tests/lsan.supp cannot recognise OpenMPI's own leaks.
*/
int dlclose(void *handle)
{
  (void)handle;
  return 0;
}

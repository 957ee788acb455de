# mmdem - plain GNU make. Targets: all test validate bench deps install clean
PREFIX   ?= /usr/local
# sanitizer builds get their own directory (objects never mix): make test SANITIZE=address,undefined
# builds and tests in build-address-undefined
comma    := ,
BUILD    ?= build$(if $(SANITIZE),-$(subst $(comma),-,$(SANITIZE)))
CC       := mpicc
CXX      := mpicxx
SANITIZE ?=
PETSC_CFLAGS := $(shell pkg-config --cflags PETSc 2>/dev/null)
PETSC_LIBS   := $(shell pkg-config --libs PETSc 2>/dev/null)
YAML_LIBS    := $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)
VTK_INC      := -I/usr/include/vtk-9.1
VTK_LIBS     := -lvtkIOParallelXML-9.1 -lvtkIOXML-9.1 -lvtkIOCore-9.1 -lvtkParallelMPI-9.1 \
                -lvtkParallelCore-9.1 -lvtkCommonExecutionModel-9.1 -lvtkCommonDataModel-9.1 \
                -lvtkCommonCore-9.1 -lstdc++
OPT      ?= -O2 -g
SANFLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer,)
CPPFLAGS := -DPETSC_SKIP_COMPLEX $(if $(SANITIZE),-DDEM_SANITIZE_BUILD) -Isrc/core -I$(BUILD) $(PETSC_CFLAGS)
CFLAGS   := $(OPT) -fno-math-errno -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fPIC -MMD -MP $(SANFLAGS)
CXXFLAGS := $(OPT) -Wall -Wextra -Wno-unused-parameter -fPIC -MMD -MP $(VTK_INC) $(SANFLAGS)
# Gmsh is loaded with dlopen on first use (src/core/dem_gmsh.c, issue 11), not linked: its soname
GMSH_SONAME  := $(shell objdump -p $$($(CC) -print-file-name=libgmsh.so) 2>/dev/null | sed -n 's/^ *SONAME *//p')
# VTK neither: dem_vtk.cxx is built alone into libmmdem_vtk.so, which libmmdem dlopens on the first
# VTK write (src/core/dem_vtk_load.c)
LDLIBS   := $(PETSC_LIBS) $(YAML_LIBS) -ldl -lm
LDFLAGS  := $(SANFLAGS)

LIB_SRC  := $(filter-out src/core/main.c,$(wildcard src/core/*.c src/shapes/*.c src/contact/*.c src/search/*.c src/integrators/*.c))
LIB_CXX  := $(wildcard src/core/*.cxx)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
VTK_OBJ  := $(LIB_CXX:%.cxx=$(BUILD)/%.o)
STYLE_SRC := $(LIB_SRC)
TEST_SRC := $(wildcard tests/unit/*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
PLUGIN_SRC := $(wildcard plugins/*.c)

.PHONY: all test validate bench deps install clean plugins memcheck fuzz
all: $(BUILD)/libmmdem.so $(BUILD)/mmdem $(TEST_BIN) plugins

# LAMMPS-style registration: marker lines DEM_STYLE(kind, "name", Fn) are collected into
# build/styles.inc, which src/core/registry.c includes (STYLE.md item 6).
$(BUILD)/styles.inc: $(STYLE_SRC) Makefile
	@mkdir -p $(BUILD)
	@grep -h '^DEM_STYLE(' $(STYLE_SRC) | sort > $@.tmp; \
	 if ! cmp -s $@.tmp $@; then mv $@.tmp $@; else rm -f $@.tmp; fi

$(BUILD)/src/core/registry.o: $(BUILD)/styles.inc
$(BUILD)/src/core/dem_gmsh.o: private CPPFLAGS += -DDEM_GMSH_SONAME='"$(or $(GMSH_SONAME),libgmsh.so)"'
# the Gmsh unit test calls Gmsh directly (writes its STEP and .msh inputs)
$(BUILD)/tests/test_trimesh: private LDLIBS += -lgmsh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# the explicit hot loops (benchmarks/settle): -O3 without SLP vectorisation, which on these
# scalar 3-vector kernels only adds shuffles (callgrind: 11 % fewer instructions); without
# trapping math, so that the selects of the blocked contact loop (hooke_fused.c) become
# vector blends and the loop vectorises (values are unchanged: no FP exception is ever
# enabled in mmdem); also the superquadric contact solver's AVX2+FMA copy (-0.9 % instructions
# in benchmarks/superquadric_settle's static regime, bitwise the same results). HOT_OPT= to drop
HOT_OPT ?= -O3 -fno-tree-slp-vectorize -fno-trapping-math
$(BUILD)/src/contact/hooke_fused.o $(BUILD)/src/integrators/verlet.o $(BUILD)/src/shapes/superquadric_contact_v3.o: CFLAGS += $(HOT_OPT)

$(BUILD)/%.o: %.cxx
	@mkdir -p $(dir $@)
	$(CXX) -Isrc/core $(CXXFLAGS) -c $< -o $@

# order-only: whoever builds libmmdem.so (tests/fuzz/run.sh names only it) gets its VTK shim too
$(BUILD)/libmmdem.so: $(LIB_OBJ) | $(BUILD)/libmmdem_vtk.so
	$(CC) -shared -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/libmmdem_vtk.so: $(VTK_OBJ)
	$(CC) -shared -o $@ $^ $(LDFLAGS) $(VTK_LIBS)

$(BUILD)/mmdem: $(BUILD)/src/core/main.o $(BUILD)/libmmdem.so
	$(CC) -o $@ $< $(LDFLAGS) -L$(BUILD) -lmmdem -Wl,-rpath,'$$ORIGIN' $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libmmdem.so tests/dem_test.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) -o $@ $< $(LDFLAGS) -L$(BUILD) -lmmdem -Wl,-rpath,'$$ORIGIN/..' $(LDLIBS)

# example plugins: build/plugins/NAME.so from plugins/NAME.c, through plugins/Makefile (the
# one users copy), against this tree's headers
plugins: $(BUILD)/mmdem
	@$(MAKE) --no-print-directory -C plugins OUT=$(abspath $(BUILD))/plugins MMDEM_INC=$(abspath src/core)

test: all
	@BUILD=$(BUILD) bash tests/run.sh quick

validate: all
	@BUILD=$(BUILD) bash tests/run.sh validate

# valgrind (memcheck) on quick runs: zero errors, no definite leaks (tests/memcheck.sh)
memcheck: all
	@BUILD=$(BUILD) bash tests/memcheck.sh

# libFuzzer targets of tests/fuzz, FUZZ_TIME seconds each [60]; builds with clang into
# build-fuzz (installs clang and libclang-rt-14-dev when missing, as root)
FUZZ_TIME ?= 60
fuzz:
	@FUZZ_TIME=$(FUZZ_TIME) bash tests/fuzz/run.sh

bench: all
	@bash benchmarks/run.sh

# one-time set-up on Debian 12 (idempotent): exactly the packages of BUILD-NOTES.md, plus
# python3-vtk9 (tests read VTK files back with VTK itself), gnuplot-nox (plots), and clang with
# libclang-rt-14-dev (the libFuzzer targets that make test runs, tests/cases/fuzz.sh)
DEPS := build-essential pkg-config petsc-dev libgmsh-dev libyaml-dev libvtk9-dev python3-vtk9 gnuplot-nox clang libclang-rt-14-dev
deps:
	@if dpkg-query -W -f='$${Status}\n' $(DEPS) 2>/dev/null | grep -vq 'install ok installed' || \
	    [ $$(dpkg-query -W -f='$${Status}\n' $(DEPS) 2>/dev/null | grep -c 'install ok installed') -ne $(words $(DEPS)) ]; then \
	  SUDO=$$( [ $$(id -u) -eq 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $(DEPS); \
	else echo "deps: all packages present"; fi

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/mmdem
	install -m 755 $(BUILD)/mmdem $(DESTDIR)$(PREFIX)/bin/mmdem
	install -m 755 $(BUILD)/libmmdem.so $(DESTDIR)$(PREFIX)/lib/libmmdem.so
	install -m 755 $(BUILD)/libmmdem_vtk.so $(DESTDIR)$(PREFIX)/lib/libmmdem_vtk.so
	install -m 644 src/core/dem.h src/core/demimpl.h src/core/dem_plugin.h $(DESTDIR)$(PREFIX)/include/mmdem/

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# CPack: `cpack -G DEB` in a build folder makes slipstream_<version>_<arch>.deb, everything that
# `cmake --install` puts under /usr, with the runtime dependencies that dpkg-shlibdeps finds for its
# programs and libraries plus those it cannot see (Python and numpy for the Python package).
#
# The Python package goes where Debian's python3 looks (/usr/lib/python3/dist-packages), not where
# a plain prefix gets it (SLIPSTREAM_PYTHON_INSTALL_DIR): bindings/python installs it twice, as the
# component `python` (plain installs) and as `python_debian` (excluded from plain installs), and
# the package takes every component but `python`. So one build serves both, whatever prefix it was
# configured with.
#
# Libraries go to Debian's multiarch folder (/usr/lib/<triplet>), which is CMAKE_INSTALL_LIBDIR
# only where the build was configured with -DCMAKE_INSTALL_PREFIX=/usr (GNUInstallDirs then
# picks it): `cpack -G DEB` refuses other builds, whose libraries would land in /usr/lib.
# Included last by the top-level CMakeLists.txt, after every install() rule.
set(SLIPSTREAM_PACKAGE_CONTACT "Slipstream maintainers <maintainers@slipstream.invalid>"
    CACHE STRING "Maintainer field of the Debian package (Name <address>)")

set(CPACK_PACKAGE_NAME slipstream)
set(CPACK_PACKAGE_VENDOR "Slipstream")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${SLIPSTREAM_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "in-memory coupling of HPC simulations and machine learning")
set(CPACK_PACKAGE_DESCRIPTION [=[
Slipstream couples running simulations with machine learning in memory: a
server that speaks the Redis and RedisAI protocols (tensors, datasets,
TorchScript models run in sandboxed workers, streams from simulation ranks
to reader groups), clients for C++, C, Fortran and Python, an online
trainer (slipstream train) and a launcher for ensembles of simulations,
servers and trainers (slipstream run).
.
This package holds the slipstream and slipstream-train programs, the shared
and static client libraries with their headers, Fortran module files,
CMake package and pkg-config files, the Python package, the report
generator, the documentation and the examples.]=])
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES OFF)

# Debian.
set(CPACK_DEBIAN_PACKAGE_NAME slipstream)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# A shlibs file for the package's own libraries (for packages built against them, and for
# dpkg-shlibdeps, which leaves them out of Depends); CPack adds a postinst/postrm calling ldconfig.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(_slipstream_deb_depends "")
if(TARGET slipstream_python)
  # The module is built for one interpreter version.
  math(EXPR _slipstream_python_next_minor "${SLIPSTREAM_PYTHON_VERSION_MINOR} + 1")
  list(APPEND _slipstream_deb_depends
    "python3 (>= ${SLIPSTREAM_PYTHON_VERSION_MAJOR}.${SLIPSTREAM_PYTHON_VERSION_MINOR})"
    "python3 (<< ${SLIPSTREAM_PYTHON_VERSION_MAJOR}.${_slipstream_python_next_minor})"
    python3-numpy)
endif()
list(JOIN _slipstream_deb_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# slipstream.training and the trainer's Python side use torch; the report generator draws with
# matplotlib; the launcher starts MPI programs with mpirun and submits to Slurm or PBS.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-torch, python3-matplotlib, openmpi-bin")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-client, python3-h5py, redis-tools")

# One package of all components but the plain-prefix Python package.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
get_cmake_property(CPACK_COMPONENTS_ALL COMPONENTS)
list(REMOVE_ITEM CPACK_COMPONENTS_ALL python)

# GNUInstallDirs' CMAKE_INSTALL_LIBDIR for the prefix /usr on this system.
if(EXISTS /etc/debian_version AND CMAKE_LIBRARY_ARCHITECTURE)
  set(SLIPSTREAM_DEBIAN_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE})
else()
  set(SLIPSTREAM_DEBIAN_LIBDIR lib)
endif()
# Read by cpack once per generator.
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/SlipstreamCPackOptions.cmake CONTENT [=[
if(CPACK_GENERATOR STREQUAL "DEB" AND NOT "@CMAKE_INSTALL_LIBDIR@" STREQUAL "@SLIPSTREAM_DEBIAN_LIBDIR@")
  message(FATAL_ERROR "The Debian package puts libraries in /usr/@SLIPSTREAM_DEBIAN_LIBDIR@, but "
    "this build installs them in <prefix>/@CMAKE_INSTALL_LIBDIR@: configure it with "
    "-DCMAKE_INSTALL_PREFIX=/usr (docs/packaging.md)")
endif()
]=] @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/SlipstreamCPackOptions.cmake)

set(CPACK_GENERATOR DEB)
include(CPack)

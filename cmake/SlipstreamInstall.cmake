# `cmake --install`: the programs, the libraries with their sonames, the public headers, the
# Fortran module files (in a folder named after the compiler that wrote them, since .mod files
# are compiler-specific), a CMake package (find_package(slipstream CONFIG [COMPONENTS ...])) and
# pkg-config files, the report generator, docs and examples. Installed programs and libraries
# find each other through their RUNPATH ($ORIGIN-relative, set in the top-level CMakeLists.txt).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SLIPSTREAM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/slipstream)

# The C++ client and the C API: no dependency beyond the C++ runtime. Each also as a static
# library (libslipstream.a, libslipstream_c.a; imported targets slipstream::slipstream_static,
# slipstream::slipstream_c_static), which needs Threads (found by the package's config file).
install(TARGETS slipstream slipstream_c slipstream_static slipstream_c_static
  EXPORT slipstream-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The openPMD layer's headers go to a folder of their own (SlipstreamOpenPMDInstall.cmake).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  PATTERN openPMD EXCLUDE)
install(EXPORT slipstream-targets NAMESPACE slipstream:: DESTINATION ${SLIPSTREAM_CMAKE_DIR})

# SmartRedis compatibility (libslipstream_smartredis: the C++ and C layers; headers in
# include/smartredis, installed above). The link libsmartredis.so lets SmartRedis programs keep
# `-lsmartredis` (docs/smartredis.md).
install(TARGETS slipstream_smartredis LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(CODE "file(CREATE_LINK libslipstream_smartredis.so
  \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libsmartredis.so\" SYMBOLIC)")

# The Fortran module: the library and its .mod files.
if(TARGET slipstream_fortran)
  install(TARGETS slipstream_fortran slipstream_fortran_static EXPORT slipstream-fortran-targets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${SLIPSTREAM_FORTRAN_MODULE_DIR}/ DESTINATION ${SLIPSTREAM_FORTRAN_MODULE_INSTALL_DIR}
    FILES_MATCHING PATTERN "*.mod")
  install(EXPORT slipstream-fortran-targets NAMESPACE slipstream:: DESTINATION ${SLIPSTREAM_CMAKE_DIR})
  set(SLIPSTREAM_HAVE_FORTRAN_COMPONENT TRUE)
endif()

# SmartRedis's Fortran modules (libslipstream_smartredis_fortran, over libslipstream_smartredis):
# their .mod files are installed with the ones above and enum_fortran.inc beside them; the link
# libsmartredis-fortran.so lets `-lsmartredis-fortran` link unchanged (docs/smartredis.md).
if(TARGET slipstream_smartredis_fortran)
  install(TARGETS slipstream_smartredis_fortran LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${SLIPSTREAM_FORTRAN_MODULE_DIR}/enum_fortran.inc
    DESTINATION ${SLIPSTREAM_FORTRAN_MODULE_INSTALL_DIR})
  install(CODE "file(CREATE_LINK libslipstream_smartredis_fortran.so
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libsmartredis-fortran.so\" SYMBOLIC)")
endif()

# LocalModel (libtorch) and the training library: their own components, so that a client that
# does not use them needs no libtorch to find the package.
# LocalModel's C API (slipstream_local.h) joins it in the local component.
install(TARGETS slipstream_local slipstream_local_c EXPORT slipstream-local-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT slipstream-local-targets NAMESPACE slipstream:: DESTINATION ${SLIPSTREAM_CMAKE_DIR})
# The Fortran module slipstream_local (its .mod file is installed with the module's above): its
# own export set, loaded by the local component where the Fortran one is installed.
if(TARGET slipstream_fortran_local)
  install(TARGETS slipstream_fortran_local EXPORT slipstream-fortran-local-targets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT slipstream-fortran-local-targets NAMESPACE slipstream::
    DESTINATION ${SLIPSTREAM_CMAKE_DIR})
endif()
install(TARGETS slipstream_training EXPORT slipstream-training-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT slipstream-training-targets NAMESPACE slipstream:: DESTINATION ${SLIPSTREAM_CMAKE_DIR})
# The MPI collective of the training library, which slipstream-train links.
if(TARGET slipstream_train_mpi)
  install(TARGETS slipstream_train_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

include(${PROJECT_SOURCE_DIR}/cmake/SlipstreamOpenPMDInstall.cmake)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/slipstreamConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/slipstreamConfig.cmake INSTALL_DESTINATION ${SLIPSTREAM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/slipstreamConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/slipstreamConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/slipstreamConfigVersion.cmake
        DESTINATION ${SLIPSTREAM_CMAKE_DIR})

# pkg-config: slipstream (C++), slipstream-c, slipstream-fortran.
file(RELATIVE_PATH SLIPSTREAM_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
set(SLIPSTREAM_FORTRAN_MODULE_INSTALL_PREFIXED
    "\${prefix}/${SLIPSTREAM_FORTRAN_MODULE_INSTALL_DIR}")
foreach(pc slipstream slipstream-c slipstream-fortran)
  if(pc STREQUAL "slipstream-fortran" AND NOT TARGET slipstream_fortran)
    continue()
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
  PATTERN "CMakeLists.txt" EXCLUDE)

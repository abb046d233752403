# `cmake --install` of the openPMD-api compatible layer, kept apart from the system's include
# and CMake folders so that it never shadows a real openPMD-api installed on the same machine:
#   <libdir>/libslipstream_openpmd.so                  the library (a name of its own)
#   <libdir>/slipstream/openpmd/include/openPMD/       the headers (openPMD/openPMD.hpp)
#   <libdir>/slipstream/openpmd/lib/cmake/openPMD/     find_package(openPMD): openPMD::openPMD
#   <libdir>/slipstream/openpmd/lib/pkgconfig/openPMD.pc
# A user opts in with CMAKE_PREFIX_PATH=<prefix>/<libdir>/slipstream/openpmd (or openPMD_DIR),
# or PKG_CONFIG_PATH=<that>/lib/pkgconfig (docs/openpmd.md).
if(NOT TARGET slipstream_openpmd)
  return()
endif()
set(SLIPSTREAM_OPENPMD_ROOT ${CMAKE_INSTALL_LIBDIR}/slipstream/openpmd)
install(TARGETS slipstream_openpmd EXPORT slipstream-openpmd-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${SLIPSTREAM_OPENPMD_ROOT}/include)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/openPMD/ DESTINATION ${SLIPSTREAM_OPENPMD_ROOT}/include/openPMD
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/openPMD/config.hpp
  DESTINATION ${SLIPSTREAM_OPENPMD_ROOT}/include/openPMD)
# The layer's headers include slipstream/export.hpp.
install(FILES ${PROJECT_SOURCE_DIR}/include/slipstream/export.hpp
  DESTINATION ${SLIPSTREAM_OPENPMD_ROOT}/include/slipstream)
install(EXPORT slipstream-openpmd-targets NAMESPACE openPMD::
  DESTINATION ${SLIPSTREAM_OPENPMD_ROOT}/lib/cmake/openPMD)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/openPMDConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/openPMD/openPMDConfig.cmake
  INSTALL_DESTINATION ${SLIPSTREAM_OPENPMD_ROOT}/lib/cmake/openPMD)
# The openPMD-api version this layer implements, which programs ask for (find_package(openPMD
# 0.15 REQUIRED)).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/openPMD/openPMDConfigVersion.cmake
  VERSION 0.16.1 COMPATIBILITY AnyNewerVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/openPMD/openPMDConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/openPMD/openPMDConfigVersion.cmake
  DESTINATION ${SLIPSTREAM_OPENPMD_ROOT}/lib/cmake/openPMD)
# pkg-config: from <root>/lib/pkgconfig back up to the installation prefix.
file(RELATIVE_PATH SLIPSTREAM_OPENPMD_PC_TO_PREFIX
  /prefix/${SLIPSTREAM_OPENPMD_ROOT}/lib/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/openPMD.pc.in
  ${PROJECT_BINARY_DIR}/cmake/openPMD/openPMD.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/openPMD/openPMD.pc
  DESTINATION ${SLIPSTREAM_OPENPMD_ROOT}/lib/pkgconfig)

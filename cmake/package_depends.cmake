# Read by cpack (CPACK_PROJECT_CONFIG_FILE, cmake/package.cmake) before it packages: the Debian
# package's Depends, from the libraries the built program links. dpkg-shlibdeps finds the package and
# minimum version of each; libraries no Debian package holds (the CUDA toolkit's) are left to the
# Recommends, hence --ignore-missing-info.
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
find_program(OFFLOADBENCH_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(NOT OFFLOADBENCH_DPKG_SHLIBDEPS)
  message(FATAL_ERROR "cpack -G DEB needs dpkg-shlibdeps to declare the libraries offloadbench runs with: "
                      "install dpkg-dev")
endif()
if(NOT EXISTS "${CPACK_OFFLOADBENCH_PROGRAM}")
  message(FATAL_ERROR "${CPACK_OFFLOADBENCH_PROGRAM} is not built: build first (cmake --build), then cpack")
endif()

# dpkg-shlibdeps reads debian/control from its working folder.
set(_scratch "${CPACK_PACKAGE_DIRECTORY}/_CPack_Packages/offloadbench-shlibdeps")
file(MAKE_DIRECTORY "${_scratch}/debian")
file(WRITE "${_scratch}/debian/control" "Source: ${CPACK_PACKAGE_NAME}\n\nPackage: ${CPACK_PACKAGE_NAME}\nArchitecture: any\n")
execute_process(COMMAND "${OFFLOADBENCH_DPKG_SHLIBDEPS}" --ignore-missing-info -O "${CPACK_OFFLOADBENCH_PROGRAM}"
  WORKING_DIRECTORY "${_scratch}" RESULT_VARIABLE _status OUTPUT_VARIABLE _found ERROR_VARIABLE _errors)
file(REMOVE_RECURSE "${_scratch}")
if(NOT _status EQUAL 0 OR NOT _found MATCHES "shlibs:Depends=([^\n]*)")
  message(FATAL_ERROR "dpkg-shlibdeps could not list the libraries of ${CPACK_OFFLOADBENCH_PROGRAM}: ${_errors}")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${CMAKE_MATCH_1}")
if(CPACK_OFFLOADBENCH_OPENBLAS_PACKAGE)  # the build its RUNPATH points at, not any OpenBLAS (package.cmake)
  string(REGEX REPLACE "libopenblas0( \\([^)]*\\))?(,|$)" "${CPACK_OFFLOADBENCH_OPENBLAS_PACKAGE}\\2"
         CPACK_DEBIAN_PACKAGE_DEPENDS "${CPACK_DEBIAN_PACKAGE_DEPENDS}")
endif()
message(STATUS "offloadbench package: Depends: ${CPACK_DEBIAN_PACKAGE_DEPENDS}")
message(STATUS "offloadbench package: Recommends: ${CPACK_DEBIAN_PACKAGE_RECOMMENDS}")

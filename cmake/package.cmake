# `cpack -G DEB` in a build folder makes offloadbench_<version>_<arch>.deb from the install rules
# (cmake/install.cmake), installed under /usr. Its Depends are the Debian packages of the libraries the
# program links (dpkg-shlibdeps at cpack time: fmt, OpenBLAS, oneDNN, Google Benchmark, libgomp, the C
# and C++ runtimes), naming the OpenBLAS build it was linked against. The CUDA runtime and cuBLAS come
# from NVIDIA's toolkit, not from Debian: they are Recommended under the names NVIDIA's apt repository
# gives them, so the package also installs beside a toolkit from the runfile; the program finds them
# in the toolkit's folder (its RUNPATH). python3 and matplotlib, which only `plot` needs, are Recommended.
set(CPACK_PACKAGE_NAME ${PROJECT_NAME})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "when does moving work to the GPU pay off, and what does the move cost")
set(CPACK_PACKAGE_DESCRIPTION "Measures host-device copies, stream overlap, GPU against CPU kernels and MLP \
training steps, writes one JSON results file, and compares, tracks and plots runs.")
set(OFFLOADBENCH_PACKAGE_CONTACT "offloadbench maintainers" CACHE STRING "The Debian package's Maintainer field")
set(CPACK_PACKAGE_CONTACT "${OFFLOADBENCH_PACKAGE_CONTACT}")
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)

# The OpenBLAS build linked (libopenblas0-openmp, …), in place of the libopenblas0 that dpkg-shlibdeps
# names, which any build satisfies.
get_filename_component(_openblas_file "${OPENBLAS_LIBRARY}" REALPATH)
execute_process(COMMAND dpkg-query -S "${_openblas_file}" OUTPUT_VARIABLE _openblas_owner ERROR_QUIET)
string(REGEX MATCH "^[^:,]+" CPACK_OFFLOADBENCH_OPENBLAS_PACKAGE "${_openblas_owner}")

set(_recommends python3 python3-matplotlib)
if(OFFLOADBENCH_HAVE_CUDA)
  set(_cuda "${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
  list(APPEND _recommends cuda-cudart-${_cuda} libcublas-${_cuda})
endif()
list(JOIN _recommends ", " CPACK_DEBIAN_PACKAGE_RECOMMENDS)

set(CPACK_OFFLOADBENCH_PROGRAM "${CMAKE_BINARY_DIR}/offloadbench")  # its RUNTIME_OUTPUT_DIRECTORY
set(CPACK_PROJECT_CONFIG_FILE "${CMAKE_CURRENT_LIST_DIR}/package_depends.cmake")
include(CPack)

# Every dependency comes from the distribution's packages through find_package (scripts/ installs them).
find_package(benchmark REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
# Boost.Math (libboost-math-dev), header-only: the distributions the statistics rest on. CONFIG: Boost
# 1.70 on ships its own BoostConfig.cmake, and CMake 3.30 removes the FindBoost module.
find_package(Boost 1.74 REQUIRED CONFIG)
find_package(CLI11 REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Threads REQUIRED)

# OpenBLAS's own CMake file (Debian) hard-codes /usr paths, so look for the library and cblas.h
# through the prefix path instead; that also finds a copy unpacked elsewhere (a build carried to
# another machine).
# The OpenMP build of OpenBLAS (libopenblas-openmp-dev) first: its threads are libgomp's, the pool that
# oneDNN and the suite's own loops use, so a step that mixes them has one pool. With the pthreads build,
# OpenBLAS's workers (which spin after each call) and the OpenMP team of the AdamW pass take turns on
# the cores: a 2-thread AdamW step runs 3-7x slower, though GEMMs alone run the same on both builds
# (lab/records/cpu-baseline.md). Any build is found if that one is not.
find_path(OPENBLAS_CBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas-openmp x86_64-linux-gnu/openblas-openmp openblas-pthread openblas
                x86_64-linux-gnu/openblas-pthread x86_64-linux-gnu)
find_library(OPENBLAS_LIBRARY NAMES openblas PATH_SUFFIXES openblas-openmp openblas-pthread)
if(NOT OPENBLAS_CBLAS_INCLUDE_DIR OR NOT OPENBLAS_LIBRARY)
  message(FATAL_ERROR "OpenBLAS with cblas.h not found: install libopenblas-openmp-dev (scripts/bench does)")
endif()
add_library(OpenBLAS::cblas INTERFACE IMPORTED)
set_target_properties(OpenBLAS::cblas PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${OPENBLAS_CBLAS_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${OPENBLAS_LIBRARY}")
message(STATUS "OpenBLAS: ${OPENBLAS_LIBRARY}")

# oneDNN (libdnnl-dev): a second CPU GEMM library the MLP chooses from per shape (kernels/cpu_gemm.h).
# Optional so that a machine without it still builds; scripts/setup installs it, so CI always has it.
find_path(ONEDNN_INCLUDE_DIR oneapi/dnnl/dnnl.h)
find_library(ONEDNN_LIBRARY NAMES dnnl)
add_library(offloadbench_onednn INTERFACE)
if(ONEDNN_INCLUDE_DIR AND ONEDNN_LIBRARY)
  set(OFFLOADBENCH_HAVE_ONEDNN ON)
  target_include_directories(offloadbench_onednn INTERFACE "${ONEDNN_INCLUDE_DIR}/oneapi/dnnl")
  target_link_libraries(offloadbench_onednn INTERFACE "${ONEDNN_LIBRARY}")
  target_compile_definitions(offloadbench_onednn INTERFACE OFFLOADBENCH_HAVE_ONEDNN=1)
  message(STATUS "oneDNN: ${ONEDNN_LIBRARY}")
else()
  set(OFFLOADBENCH_HAVE_ONEDNN OFF)
  target_compile_definitions(offloadbench_onednn INTERFACE OFFLOADBENCH_HAVE_ONEDNN=0)
  message(STATUS "oneDNN not found (libdnnl-dev): the CPU GEMMs use OpenBLAS only")
endif()

if(OFFLOADBENCH_TESTS)
  find_package(GTest REQUIRED)
endif()

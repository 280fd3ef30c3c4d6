# `cmake --install BUILD --prefix P` puts the program where a user's PATH finds it, under the GNU folders:
#   P/bin/offloadbench
#   P/share/offloadbench/plots/                  the Python package `plot` runs (found beside the program)
#   P/share/offloadbench/docs/results.schema.json  which the package reads, at the same place relative to
#                                                it as in the source tree
#   P/share/doc/offloadbench/                    README.md, docs/, examples/nightly-gpu.yml
include(GNUInstallDirs)

install(TARGETS offloadbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The installed program keeps the library folders it was linked from: the CUDA toolkit's, and
# OpenBLAS's OpenMP build (one thread pool with oneDNN's, cmake/dependencies.cmake), which the
# alternatives link in the default folder may not point at.
set_target_properties(offloadbench PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

set(OFFLOADBENCH_INSTALL_HOME ${CMAKE_INSTALL_DATADIR}/${PROJECT_NAME})  # as cli/CMakeLists.txt expects
install(DIRECTORY plots DESTINATION ${OFFLOADBENCH_INSTALL_HOME}
  PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE)
# Each family's charts, beside the package that finds them (plots/families.py): benchmarks/<family>/*_charts.py.
install(DIRECTORY benchmarks/ DESTINATION ${OFFLOADBENCH_INSTALL_HOME}/benchmarks
  FILES_MATCHING PATTERN "*_charts.py" PATTERN "__pycache__" EXCLUDE)
install(FILES docs/results.schema.json DESTINATION ${OFFLOADBENCH_INSTALL_HOME}/docs)

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(FILES ci/nightly-gpu.yml DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# Shows that the layering check fails on a crossing through a public header: copies the
# core's sources and public headers to WORK_DIR, makes the workload layer's public header
# include the analysis layer's, and expects the check to name exactly that crossing.
cmake_minimum_required(VERSION 3.16)
file(REMOVE_RECURSE "${WORK_DIR}")
file(COPY "${CORE_DIR}/src" "${CORE_DIR}/include" DESTINATION "${WORK_DIR}")
set(victim "${WORK_DIR}/include/iteragpu/measure_configuration.hpp")
file(APPEND "${victim}" "#include \"iteragpu/memory_sweep.hpp\"\n")
execute_process(
  COMMAND ${CMAKE_COMMAND} "-DLAYERS=${LAYERS}" -DSOURCE_DIR=${WORK_DIR}/src
          -DINCLUDE_DIR=${WORK_DIR}/include -P ${CHECK}
  RESULT_VARIABLE status ERROR_VARIABLE errors OUTPUT_QUIET)
file(REMOVE_RECURSE "${WORK_DIR}")
if(status EQUAL 0)
  message(FATAL_ERROR "the layering check accepted a public header that includes an upper layer's")
endif()
# CMake wraps long message lines: compare with the white space folded.
string(REGEX REPLACE "[ \n]+" " " errors "${errors}")
if(NOT errors MATCHES "iteragpu/measure_configuration.hpp \\(layer workload\\) includes \"iteragpu/memory_sweep.hpp\" of layer 'analysis', but")
  message(FATAL_ERROR "the layering check failed, but not by naming the crossing:\n${errors}")
endif()
message(STATUS "the layering check names a crossing through a public header")

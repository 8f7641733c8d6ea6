# ctest script: configures and builds examples/cpp, a project that links iteragpu::iteragpu,
# then runs the program it builds. MODE add_subdirectory: iteragpu's source tree is added
# with add_subdirectory. MODE find_package: the build is installed into a prefix, the
# example is built against it with find_package and installed into that prefix's bin/, the
# prefix is moved, and the program runs from the moved prefix in an empty environment.
# Variables: MODE, SOURCE_DIR, BUILD_DIR (find_package), WORK_DIR, GENERATOR.
file(REMOVE_RECURSE "${WORK_DIR}")

function(run_or_fail what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}")
  endif()
endfunction()

set(prefix "${WORK_DIR}/prefix")
if(MODE STREQUAL "add_subdirectory")
  # The whole core is compiled here: unoptimised, as this checks the build, not speed.
  set(how -DITERAGPU_SOURCE_DIR=${SOURCE_DIR} -DITERAGPU_WITH_TORCH=OFF
          -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0)
  set(program "${WORK_DIR}/example/bin/rental_check")
else()
  run_or_fail("installing iteragpu" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
  set(how -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_INSTALL_PREFIX=${prefix} -DCMAKE_BUILD_TYPE=Release)
  set(program "${WORK_DIR}/moved/bin/rental_check")
endif()
run_or_fail("configuring the consumer example" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/cpp"
            -B "${WORK_DIR}/example" -G "${GENERATOR}" ${how})
run_or_fail("building the consumer example" "${CMAKE_COMMAND}" --build "${WORK_DIR}/example")
if(MODE STREQUAL "find_package")
  # From its own build folder, before any install of its own: the data and plugin of the
  # installed iteragpu are found there too (examples/cpp links them beside bin/).
  execute_process(COMMAND env -i PATH=/usr/bin:/bin "${WORK_DIR}/example/bin/rental_check"
                  RESULT_VARIABLE run_result OUTPUT_VARIABLE run_output ERROR_VARIABLE run_output)
  if(NOT run_result EQUAL 0 OR NOT run_output MATCHES "illustrative")
    message(FATAL_ERROR "rental_check from the consumer's build folder did not quote: ${run_output}")
  endif()
  # One measurement through the runner: a GPU measures (exit 0), a machine without one is
  # told so in one line (exit 2); never an internal error.
  execute_process(COMMAND env -i PATH=/usr/bin:/bin "${WORK_DIR}/example/bin/measure_once"
                          "${WORK_DIR}/measured.json"
                  RESULT_VARIABLE run_result OUTPUT_VARIABLE run_output ERROR_VARIABLE run_output)
  message(STATUS "measure_once: exit ${run_result}: ${run_output}")
  if(NOT (run_result EQUAL 0 AND run_output MATCHES "measured on cuda:0 by libtorch") AND
     NOT (run_result EQUAL 2 AND run_output MATCHES "^measure_once: [^\n]+\n$"))
    message(FATAL_ERROR "measure_once did not measure nor refuse in one line: ${run_output}")
  endif()
  run_or_fail("installing the consumer example" "${CMAKE_COMMAND}" --install "${WORK_DIR}/example")
  file(RENAME "${prefix}" "${WORK_DIR}/moved")
endif()

execute_process(COMMAND env -i PATH=/usr/bin:/bin "${program}" RESULT_VARIABLE run_result
                OUTPUT_VARIABLE run_output ERROR_VARIABLE run_output)
message(STATUS "${run_output}")
if(NOT run_result EQUAL 0 OR NOT run_output MATCHES "13\\.03851604461669921875 GiB exactly"
   OR NOT run_output MATCHES "illustrative")
  message(FATAL_ERROR "the consumer example did not print the exact estimate and the quote: ${run_output}")
endif()

# ctest script: configures and builds examples/cpp (a project that adds iteragpu with
# add_subdirectory and links iteragpu::iteragpu), then runs the program it builds.
# Variables: SOURCE_DIR, WORK_DIR, GENERATOR.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/cpp" -B "${WORK_DIR}" -G "${GENERATOR}"
          -DCMAKE_BUILD_TYPE=Release -DITERAGPU_WITH_TORCH=OFF
  RESULT_VARIABLE configure_result OUTPUT_QUIET)
if(NOT configure_result EQUAL 0)
  message(FATAL_ERROR "configuring the consumer example failed")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}" --target rental_check
                RESULT_VARIABLE build_result OUTPUT_QUIET)
if(NOT build_result EQUAL 0)
  message(FATAL_ERROR "building the consumer example failed")
endif()
execute_process(COMMAND "${WORK_DIR}/rental_check" RESULT_VARIABLE run_result
                OUTPUT_VARIABLE run_output ERROR_VARIABLE run_output)
message(STATUS "${run_output}")
if(NOT run_result EQUAL 0 OR NOT run_output MATCHES "13\\.03851604461669921875 GiB exactly")
  message(FATAL_ERROR "the consumer example did not print the exact estimate: ${run_output}")
endif()

# Fails when a test name a person reads in ctest's output is long or unreadable: a line of
# `ctest -N` over 120 characters, or a parameter printed by gtest (a byte dump) instead of
# named by the test's name generator. Run by ctest (tests/CMakeLists.txt).
# ctest -N rewrites its test folder's Testing/Temporary/LastTest.log, where the run that is
# calling this test keeps every result (scripts/skip-reasons reads the skip reasons there): it
# lists a copy of the build's test files instead.
set(listed "${BUILD_DIR}/tests/test-names-listing")
file(REMOVE_RECURSE "${listed}")
file(GLOB_RECURSE test_files RELATIVE "${BUILD_DIR}" "${BUILD_DIR}/CTestTestfile.cmake" "${BUILD_DIR}/*/CTestTestfile.cmake")
foreach(test_file IN LISTS test_files)
  if(NOT test_file MATCHES "^tests/test-names-listing/")
    configure_file("${BUILD_DIR}/${test_file}" "${listed}/${test_file}" COPYONLY)
  endif()
endforeach()
execute_process(COMMAND ${CTEST} -N --test-dir ${listed} OUTPUT_VARIABLE listing RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "ctest -N failed: ${status}")
endif()
string(REPLACE ";" "," listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(count 0)
foreach(line IN LISTS lines)
  string(LENGTH "${line}" length)
  if(length GREATER 120 OR line MATCHES "byte object|GetParam")
    message(SEND_ERROR "unreadable test name (${length} characters): ${line}")
  endif()
  if(line MATCHES "Test +#")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count LESS 100)
  message(FATAL_ERROR "ctest -N listed ${count} tests; expected the whole suite")
endif()

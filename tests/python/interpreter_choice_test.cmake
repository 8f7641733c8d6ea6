# ctest script: configure picks, or checks and names, the interpreter the module and its tests
# will use. With a python3 that lacks pytest first on PATH (a bare virtual environment, as a
# pyenv or conda one often is), plain configure takes /usr/bin/python3 and says so, or, where
# that one lacks pytest too, fails naming the interpreter; given that python3 with
# -DPython_EXECUTABLE, configure fails naming it and how to choose another. Only what is
# built is checked: without the tests (ITERAGPU_BUILD_TESTS=OFF, as scripts/setup-and-run and
# the pip build backend configure) that same bare interpreter, which has nothing but the
# standard library, is accepted and the module is built for it.
# Variables: SOURCE_DIR, WORK_DIR.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND /usr/bin/python3 -m venv --without-pip "${WORK_DIR}/bare" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cannot create a virtual environment with /usr/bin/python3 -m venv")
endif()
set(bare "${WORK_DIR}/bare/bin/python3")
set(light -DITERAGPU_WITH_TORCH=OFF -DITERAGPU_BUILD_BENCHMARKS=OFF -DITERAGPU_BUILD_LAB_KIT=OFF
          -DITERAGPU_REQUIRE_JUPYTER=OFF -DITERAGPU_BUILD_TESTS=ON -DITERAGPU_BUILD_PYTHON=ON)
set(path_first env "PATH=${WORK_DIR}/bare/bin:$ENV{PATH}" "VIRTUAL_ENV=${WORK_DIR}/bare")
execute_process(COMMAND /usr/bin/python3 -c "import pytest" RESULT_VARIABLE debian_lacks_pytest
                OUTPUT_QUIET ERROR_QUIET)

execute_process(COMMAND ${path_first} "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/plain" ${light}
                RESULT_VARIABLE plain_status OUTPUT_VARIABLE plain_out ERROR_VARIABLE plain_out)
string(REGEX REPLACE "[ \n]+" " " plain_line "${plain_out}")  # CMake wraps long messages
if(debian_lacks_pytest)
  if(plain_status EQUAL 0 OR NOT plain_line MATCHES "bare/bin/python3.*cannot import pytest")
    message(FATAL_ERROR "configure did not fail naming the interpreter without pytest:\n${plain_out}")
  endif()
else()
  file(STRINGS "${WORK_DIR}/plain/CMakeCache.txt" chosen REGEX "^Python_EXECUTABLE:")
  if(NOT plain_status EQUAL 0 OR NOT chosen MATCHES "=/usr/bin/python3$"
     OR NOT plain_line MATCHES "bare/bin/python3, the first Python found, lacks pytest")
    message(FATAL_ERROR "configure did not take /usr/bin/python3 saying why (${chosen}):\n${plain_out}")
  endif()
endif()

execute_process(COMMAND ${path_first} "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/given" ${light}
                        "-DPython_EXECUTABLE=${bare}"
                RESULT_VARIABLE given_status OUTPUT_VARIABLE given_out ERROR_VARIABLE given_out)
string(REGEX REPLACE "[ \n]+" " " given_line "${given_out}")
if(given_status EQUAL 0 OR NOT given_line MATCHES "bare/bin/python3.*cannot import pytest.*-DPython_EXECUTABLE=")
  message(FATAL_ERROR "configure did not refuse the given interpreter without pytest:\n${given_out}")
endif()

# The main job's configuration: no tests, so no test module is asked of the interpreter.
string(REPLACE "-DITERAGPU_BUILD_TESTS=ON" "-DITERAGPU_BUILD_TESTS=OFF" main_job "${light}")
execute_process(COMMAND ${path_first} "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/main-job" ${main_job}
                        "-DPython_EXECUTABLE=${bare}"
                RESULT_VARIABLE main_status OUTPUT_VARIABLE main_out ERROR_VARIABLE main_out)
string(REGEX REPLACE "[ \n]+" " " main_line "${main_out}")
file(STRINGS "${WORK_DIR}/main-job/CMakeCache.txt" main_chosen REGEX "^Python_EXECUTABLE:")
if(NOT main_status EQUAL 0 OR main_line MATCHES "cannot import"
   OR NOT main_chosen MATCHES "=${bare}$" OR NOT main_line MATCHES "Python module for .*bare/bin/python3")
  message(FATAL_ERROR "configure without the tests refused, or replaced, the bare interpreter (${main_chosen}):\n${main_out}")
endif()
message(STATUS "plain configure:\n${plain_out}\ngiven interpreter:\n${given_out}\nwithout the tests:\n${main_out}")
file(REMOVE_RECURSE "${WORK_DIR}")

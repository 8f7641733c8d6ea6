# ctest script: an installed iteragpu needs neither its source tree nor its build tree.
# Installs the build into a prefix outside both, moves the prefix, checks that no installed
# file names either tree, then runs every command and `import iteragpu` from the moved
# prefix (every_command.sh) in an empty environment, in a private mount namespace where
# both trees are covered by empty folders when the system allows it (unshare).
# Variables: SOURCE_DIR, BUILD_DIR, PYTHON (the module's interpreter), PYTHON_INSTALL_DIR
# (relative to the prefix).
string(RANDOM LENGTH 8 suffix)
set(work "/tmp/iteragpu-installed-${suffix}")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}/run")

function(run_or_fail what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message(STATUS "${out}")
  if(NOT status EQUAL 0)
    file(REMOVE_RECURSE "${work}")
    message(FATAL_ERROR "${what} failed (${status})")
  endif()
endfunction()

# --strip: debug information would name the source files, which is not a run-time use.
run_or_fail("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${work}/installed" --strip)
file(RENAME "${work}/installed" "${work}/moved")
# The installed tree's own paths are not on disk anymore; the measurement is an input copied
# out of the source tree before it is hidden.
file(GLOB measurements "${SOURCE_DIR}/examples/results/mesures-*.json")
file(COPY ${measurements} DESTINATION "${work}/measurements")

# No installed file may hold the source or build tree's path (except static archives,
# which are linked, never run).
file(GLOB_RECURSE installed LIST_DIRECTORIES false "${work}/moved/*")
foreach(file IN LISTS installed)
  if(file MATCHES "\\.a$")
    continue()
  endif()
  foreach(tree IN ITEMS "${SOURCE_DIR}" "${BUILD_DIR}")
    string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" tree_pattern "${tree}")
    file(STRINGS "${file}" hits REGEX "${tree_pattern}")
    if(hits)
      file(REMOVE_RECURSE "${work}")
      message(FATAL_ERROR "${file} names ${tree}: ${hits}")
    endif()
  endforeach()
endforeach()

file(COPY "${SOURCE_DIR}/tests/install/every_command.sh" DESTINATION "${work}")
set(commands sh "${work}/every_command.sh" "${work}/moved" "${PYTHON}"
    "${work}/moved/${PYTHON_INSTALL_DIR}" "${work}/measurements" "${work}/run")
set(empty_environment env -i PATH=/usr/bin:/bin HOME=${work} LANG=C.UTF-8)
execute_process(COMMAND unshare --user --map-root-user --mount true RESULT_VARIABLE no_namespace
                OUTPUT_QUIET ERROR_QUIET)
if(no_namespace EQUAL 0)
  # Empty folders over the two trees, seen by this command alone; the inner one first when
  # one holds the other.
  set(first "${BUILD_DIR}")
  set(second "${SOURCE_DIR}")
  string(LENGTH "${BUILD_DIR}" build_length)
  string(LENGTH "${SOURCE_DIR}" source_length)
  if(source_length GREATER build_length)
    set(first "${SOURCE_DIR}")
    set(second "${BUILD_DIR}")
  endif()
  set(hide "mount -t tmpfs none '${first}' && mount -t tmpfs none '${second}' && test ! -e '${SOURCE_DIR}/CMakeLists.txt' && echo 'source and build trees hidden' && exec \"$@\"")
  run_or_fail("every command, source and build trees hidden"
    unshare --user --map-root-user --mount sh -c "${hide}" hide ${empty_environment} ${commands})
else()
  message(STATUS "no user namespaces here: the trees stay visible, but no installed file names them")
  run_or_fail("every command" ${empty_environment} ${commands})
endif()
file(REMOVE_RECURSE "${work}")

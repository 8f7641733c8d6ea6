# Builds the lab-kit archive (SPEC §6), run as
#   cmake -DSOURCE_DIR=<project root> -DWORK_DIR=<scratch folder> -DOUTPUT=<file.zip>
#         -DZIP_EXECUTABLE=<Info-ZIP zip> -P build_lab_kit.cmake
# The archive holds one folder, iteragpu-lab-v1/, with the members of lab_kit_members.cmake
# and a MANIFEST.json giving the size and SHA-256 of each (not of itself). The same inputs
# give a byte-identical archive: fixed member order, permissions and timestamps, and no
# extra fields (uid/gid, access and change times) in the zip entries.
cmake_minimum_required(VERSION 3.19)  # string(JSON), file(CHMOD), COMMAND_ERROR_IS_FATAL

foreach(argument SOURCE_DIR WORK_DIR OUTPUT ZIP_EXECUTABLE)
  if(NOT ${argument})
    message(FATAL_ERROR "build_lab_kit.cmake: -D${argument}=... is required")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/lab_kit_members.cmake)

# A fixed date for every member (the original kit's version date), in UTC so the zip's
# local-time DOS timestamps do not depend on the builder's time zone.
set(ENV{TZ} UTC)
set(kit_timestamp 202609240000.00)  # touch -t format: 2026-09-24 00:00:00

# The notebook ships with every output empty: refuse to build a kit from an executed one.
set(notebook ${SOURCE_DIR}/examples/mesure-memoire.ipynb)
file(READ ${notebook} notebook_text)
string(JSON cell_count ERROR_VARIABLE json_error LENGTH "${notebook_text}" cells)
if(json_error)
  message(FATAL_ERROR "${notebook}: not a notebook (${json_error})")
endif()
set(executed_cells)
if(cell_count GREATER 0)
  math(EXPR last_cell "${cell_count} - 1")
  foreach(cell RANGE ${last_cell})
    string(JSON cell_type GET "${notebook_text}" cells ${cell} cell_type)
    if(cell_type STREQUAL "code")
      string(JSON output_count LENGTH "${notebook_text}" cells ${cell} outputs)
      string(JSON execution_count_type TYPE "${notebook_text}" cells ${cell} execution_count)
      if(NOT output_count EQUAL 0 OR NOT execution_count_type STREQUAL "NULL")
        math(EXPR cell_number "${cell} + 1")
        list(APPEND executed_cells ${cell_number})
      endif()
    endif()
  endforeach()
endif()
if(executed_cells)
  list(JOIN executed_cells ", " executed_cells)
  message(FATAL_ERROR "${notebook}: code cell(s) ${executed_cells} (counting from 1) have outputs or an "
                      "execution count; the kit ships the notebook with every output empty "
                      "(clear them, e.g. jupyter nbconvert --clear-output --inplace)")
endif()

# Stage copies with fixed permissions and timestamps, then write the manifest.
set(staging ${WORK_DIR}/staging)
set(kit_dir ${staging}/${ITERAGPU_LAB_KIT_NAME})
file(REMOVE_RECURSE ${staging})
file(MAKE_DIRECTORY ${kit_dir})
set(file_mode FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
set(members)
set(manifest_entries)
foreach(source IN LISTS ITERAGPU_LAB_KIT_SOURCES)
  get_filename_component(member ${source} NAME)
  file(COPY ${SOURCE_DIR}/${source} DESTINATION ${kit_dir} ${file_mode})
  file(SIZE ${kit_dir}/${member} size)
  file(SHA256 ${kit_dir}/${member} sha256)
  string(APPEND manifest_entries
         "    {\"path\": \"${member}\", \"size\": ${size}, \"sha256\": \"${sha256}\"},\n")
  list(APPEND members ${member})
endforeach()
list(APPEND members MANIFEST.json)
file(WRITE ${kit_dir}/MANIFEST.json
"{
  \"schema\": \"iteragpu.lab-kit-manifest\",
  \"schema_version\": 1,
  \"kit\": \"${ITERAGPU_LAB_KIT_NAME}\",
  \"note\": \"Every member of the kit folder is listed. MANIFEST.json lists itself without size or SHA-256: a file cannot carry its own fingerprint. Check an unpacked kit with: iteragpu kit verify ${ITERAGPU_LAB_KIT_NAME}\",
  \"members\": [
${manifest_entries}    {\"path\": \"MANIFEST.json\", \"size\": null, \"sha256\": null}
  ]
}
")
file(CHMOD ${kit_dir}/MANIFEST.json ${file_mode})

set(member_paths)
foreach(member IN LISTS members)
  list(APPEND member_paths ${ITERAGPU_LAB_KIT_NAME}/${member})
endforeach()
execute_process(COMMAND touch -t ${kit_timestamp} ${member_paths}
                WORKING_DIRECTORY ${staging} COMMAND_ERROR_IS_FATAL ANY)
# -X: no uid/gid or extended-timestamp fields; -D: no directory entries, only the members.
set(partial ${WORK_DIR}/${ITERAGPU_LAB_KIT_NAME}.zip)
file(REMOVE ${partial})
execute_process(COMMAND ${ZIP_EXECUTABLE} -X -D -q -9 ${partial} ${member_paths}
                WORKING_DIRECTORY ${staging} COMMAND_ERROR_IS_FATAL ANY)
# Renamed into place only once complete: a failed build leaves no archive behind.
file(RENAME ${partial} ${OUTPUT})

# The version of the build: project(VERSION) and, when the source is a git
# checkout, `git describe --always --dirty` at configure time. A later commit
# shows after the next `cmake --preset ...` (not on every build: that would
# relink every binary after every commit). Without git, or outside a
# checkout, the revision is empty.
set(TINYTCP_REVISION "" CACHE INTERNAL "")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} describe --always --dirty
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE revision
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET
    RESULT_VARIABLE git_status)
  if(git_status EQUAL 0)
    set(TINYTCP_REVISION ${revision} CACHE INTERNAL "")
  endif()
endif()

# Public (installed with the headers): the version numbers.
set(TINYTCP_GENERATED_INCLUDE ${PROJECT_BINARY_DIR}/generated/include)
configure_file(${PROJECT_SOURCE_DIR}/cmake/version_number.hh.in
               ${TINYTCP_GENERATED_INCLUDE}/util/version_number.hh @ONLY)
# Private to src/util/version.cc: the revision.
set(TINYTCP_GENERATED_PRIVATE ${PROJECT_BINARY_DIR}/generated/private)
configure_file(${PROJECT_SOURCE_DIR}/cmake/version_revision.hh.in
               ${TINYTCP_GENERATED_PRIVATE}/util/version_revision.hh @ONLY)

# Helpers shared by every CMakeLists.txt of tinytcp.

# The warning set of STYLE.md, on our own targets only.
function(tinytcp_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Werror)
endfunction()

function(tinytcp_common target)
  tinytcp_warnings(${target})
  # SPDLOG_DEBUG compiles in everywhere; the runtime level decides.
  target_compile_definitions(${target} PUBLIC SPDLOG_ACTIVE_LEVEL=SPDLOG_LEVEL_DEBUG)
  if(TINYTCP_DCHECKS)
    target_compile_definitions(${target} PUBLIC TINYTCP_DCHECKS_ABORT=1)
  endif()
endfunction()

set(TINYTCP_LAYER_TARGETS "" CACHE INTERNAL "")

# tinytcp_layer(NAME DEPS ...): one static library per folder of src/, made of
# every .cc below it. A layer with no sources yet is skipped.
function(tinytcp_layer name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cc)
  if(NOT sources)
    return()
  endif()
  set(target tinytcp_${name})
  add_library(${target} STATIC ${sources})
  # Layers include each other as "tcp/x.hh": src/ in the build tree,
  # include/tinytcp/ once installed (docs/library.md).
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/tinytcp>)
  # Installed as tinytcp::<layer> (cmake/install.cmake).
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  set(deps "")
  foreach(dep ${ARG_DEPS})
    if(TARGET ${dep})
      list(APPEND deps ${dep})
    endif()
  endforeach()
  target_link_libraries(${target} PUBLIC ${deps})
  tinytcp_common(${target})
  set(TINYTCP_LAYER_TARGETS ${TINYTCP_LAYER_TARGETS} ${target} CACHE INTERNAL "")
endfunction()

# tinytcp_executable(NAME SOURCES ...): an app, tool or test binary of ours.
function(tinytcp_executable name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE tinytcp_all)
  tinytcp_common(${name})
endfunction()

# Manual pages of the apps, made from their --help by help2man (Debian
# package help2man, scripts/install-deps.sh) at build time and installed to
# share/man/man1; the version comes from project(), so --version is not run
# for it. Without help2man there are none (a note at configure time).
find_program(HELP2MAN help2man)
if(NOT HELP2MAN)
  message(STATUS "help2man not found: no manual pages (Debian: apt-get install help2man)")
  return()
endif()

# The NAME line of each page; an app not listed gets its --help's first line.
set(TINYTCP_MAN_NAME_webget "HTTP/1.1 GET through tinytcp's TCP/IP stack")
set(TINYTCP_MAN_NAME_tt-serve "echo, discard and HTTP servers on tinytcp's TCP/IP stack")
set(TINYTCP_MAN_NAME_file-send "send files to file-recv over tinytcp or kernel TCP")
set(TINYTCP_MAN_NAME_file-recv "receive files from file-send, SHA-256 verified")
set(TINYTCP_MAN_NAME_tt-tunnel "carry kernel TCP connections over tinytcp in a UDP tunnel")
set(TINYTCP_MAN_NAME_tt-perf "throughput and latency workloads over tinytcp or kernel TCP")
set(TINYTCP_MAN_NAME_tinyrouter "IPv4 router between TAP interfaces on tinytcp's network layer")

set(man_dir ${PROJECT_BINARY_DIR}/man/man1)
set(man_pages "")
foreach(app ${TINYTCP_APPS})
  set(name "${TINYTCP_MAN_NAME_${app}}")
  if(NOT name)
    set(name "the ${app} app of tinytcp")
  endif()
  set(page ${man_dir}/${app}.1)
  add_custom_command(
    OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
    COMMAND ${HELP2MAN} --no-info --section=1 --source=tinytcp "--name=${name}"
            --version-string=${PROJECT_VERSION}
            --output=${page} $<TARGET_FILE:${app}>
    DEPENDS ${app}
    COMMENT "Manual page ${app}.1"
    VERBATIM)
  list(APPEND man_pages ${page})
endforeach()
add_custom_target(tinytcp_man_pages ALL DEPENDS ${man_pages})
add_dependencies(tinytcp_installed tinytcp_man_pages)
install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# What `cmake --install` puts under the prefix, and the .deb CPack builds from
# the same rules (docs/library.md):
#   lib/libtinytcp_<layer>.a           one static library per layer of src/
#   include/tinytcp/<layer>/*.hh       the layers' headers, paths kept
#   include/tinytcp/tinytcp.hh         the umbrella header (every layer)
#   include/tinytcp/util/version_number.hh
#   lib/cmake/tinytcp/                 find_package(tinytcp CONFIG) -> tinytcp::tinytcp
#   lib/pkgconfig/tinytcp.pc           pkg-config --cflags --libs tinytcp
#   bin/<app>                          every app of apps/
#   share/man/man1/<app>.1             when help2man exists (cmake/man_pages.cmake)
#   share/tinytcp/scripts/             tun.sh, tap.sh (and tuntap.sh they run)
#   share/doc/tinytcp/                 README, CHANGELOG, docs/, examples/
#
# The layers include each other as "tcp/x.hh", so an embedder's compiler
# needs include/tinytcp on its path besides include/ (for
# <tinytcp/tinytcp.hh>): the CMake package and the .pc file give both.
include(CMakePackageConfigHelpers)

set(TINYTCP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tinytcp)
set(TINYTCP_INCLUDE_DIR ${CMAKE_INSTALL_INCLUDEDIR}/tinytcp)

# Headers, and the umbrella header that includes every one of them.
set(TINYTCP_UMBRELLA_INCLUDES "")
set(pc_libs "")
foreach(target ${TINYTCP_LAYER_TARGETS})
  string(REPLACE "tinytcp_" "" layer ${target})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/${layer}/ DESTINATION ${TINYTCP_INCLUDE_DIR}/${layer}
          FILES_MATCHING PATTERN "*.hh")
  file(GLOB_RECURSE headers RELATIVE ${PROJECT_SOURCE_DIR}/src CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/src/${layer}/*.hh)
  list(SORT headers)
  foreach(header ${headers})
    string(APPEND TINYTCP_UMBRELLA_INCLUDES "#include \"${header}\"\n")
  endforeach()
  # Static libraries: a layer before the layers it uses.
  set(pc_libs "-l${target} ${pc_libs}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/tinytcp.hh.in
               ${TINYTCP_GENERATED_INCLUDE}/tinytcp/tinytcp.hh @ONLY)
install(FILES ${TINYTCP_GENERATED_INCLUDE}/tinytcp/tinytcp.hh DESTINATION ${TINYTCP_INCLUDE_DIR})
install(FILES ${TINYTCP_GENERATED_INCLUDE}/util/version_number.hh
        DESTINATION ${TINYTCP_INCLUDE_DIR}/util)

# Libraries and the CMake package.
install(TARGETS tinytcp_pcap ${TINYTCP_LAYER_TARGETS} tinytcp_all EXPORT tinytcpTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT tinytcpTargets NAMESPACE tinytcp:: DESTINATION ${TINYTCP_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tinytcpConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tinytcpConfig.cmake INSTALL_DESTINATION ${TINYTCP_CMAKE_DIR})
# Semantic versioning: before 1.0 a minor release may break the API.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(compatibility SameMinorVersion)
else()
  set(compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tinytcpConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${compatibility})
install(FILES ${PROJECT_BINARY_DIR}/tinytcpConfig.cmake
              ${PROJECT_BINARY_DIR}/tinytcpConfigVersion.cmake
        DESTINATION ${TINYTCP_CMAKE_DIR})

# pkg-config: relocatable (the prefix is found from the .pc file's place), so
# `cmake --install --prefix DIR` and the .deb both work.
file(RELATIVE_PATH TINYTCP_PC_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
if(LIBURING_FOUND)  # io/uring_writer
  string(APPEND pc_libs " -luring")
endif()
string(STRIP "${pc_libs}" TINYTCP_PC_LIBS)
set(TINYTCP_PC_CFLAGS "-DSPDLOG_ACTIVE_LEVEL=SPDLOG_LEVEL_DEBUG")
if(TINYTCP_DCHECKS)
  string(APPEND TINYTCP_PC_CFLAGS " -DTINYTCP_DCHECKS_ABORT=1")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/tinytcp.pc.in ${PROJECT_BINARY_DIR}/tinytcp.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tinytcp.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Apps: every folder of apps/ but common.
file(GLOB app_dirs LIST_DIRECTORIES true ${PROJECT_SOURCE_DIR}/apps/*)
set(TINYTCP_APPS "")
foreach(dir ${app_dirs})
  get_filename_component(app ${dir} NAME)
  if(IS_DIRECTORY ${dir} AND TARGET ${app})
    list(APPEND TINYTCP_APPS ${app})
  endif()
endforeach()
install(TARGETS ${TINYTCP_APPS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# What the rules above install, to build without the tests and benchmarks
# (scripts/check-install.sh); `make install` and cpack do not build `all`
# first either (build it, or this target, before).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
add_custom_target(tinytcp_installed)
add_dependencies(tinytcp_installed ${TINYTCP_LAYER_TARGETS} ${TINYTCP_APPS})

# Scripts a user runs, and the docs.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/tun.sh ${PROJECT_SOURCE_DIR}/scripts/tap.sh
                 ${PROJECT_SOURCE_DIR}/scripts/tuntap.sh
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tinytcp/scripts)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
if(EXISTS ${PROJECT_SOURCE_DIR}/examples)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
endif()

# The .deb: one package with the libraries, headers, apps, scripts and docs.
# The apps' shared libraries come from dpkg-shlibdeps; the -dev packages are
# what the static libraries and headers need at an embedder's build.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tinytcp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR tinytcp)
set(CPACK_PACKAGE_CONTACT "tinytcp maintainers <tinytcp@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "user-space TCP/IP stack: apps, static libraries and headers")
set(CPACK_PACKAGE_DESCRIPTION
    "tinytcp runs TCP/IP in user space over TUN, TAP or a UDP tunnel. The package holds its apps (webget, tt-serve, file-send, file-recv, tt-tunnel, ...), the static libraries and headers with a CMake package and a pkg-config file, manual pages and docs.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libfmt-dev, libspdlog-dev, libssl-dev, libpcap-dev")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
include(CPack)
include(${PROJECT_SOURCE_DIR}/cmake/man_pages.cmake)

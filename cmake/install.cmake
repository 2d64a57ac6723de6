# What `make install` puts on a machine (included from CMakeLists.txt after every library is
# complete):
#
#   bin/osn                          the command (the static, LTO/PGO build that tests run)
#   lib/libosn.so.0                  the toolkit as one shared library, for C programs and the
#                                    Python module (every module but the command)
#   include/osn/*.h                  its public headers
#   lib/pkgconfig/osn.pc             `pkg-config --cflags --libs osn`
#   share/man/man1/osn.1             the man page, made from the commands' --help at build time
#   lib/python3.X/dist-packages/osn  the Python module over libosn (ctypes); lib/python3/... for
#                                    PREFIX=/usr, as Debian's python3 searches
#
# PREFIX and DESTDIR are honoured: `cmake --install build --prefix P` with DESTDIR=D in the
# environment stages everything under D/P, and osn.pc names P (pkg-config's
# PKG_CONFIG_SYSROOT_DIR=D finds the staged copy).
include(GNUInstallDirs)

# The shared library is compiled from the static libraries' own source lists, so the two can
# never hold different code; position-independent, and without link-time optimisation (its
# callers pay a call per solve, not per event, and it halves the build's extra cost). The
# command keeps linking the static archives: its speed comes from LTO and PGO across them.
set(OSN_LIB_PARTS osn_base osn_model osn_des osn_study osn_sim osn_ctl osn_fluid osn_sip osn_elem osn_node
                  osn_ini osn_io)
set(OSN_LIB_SOURCES "")
foreach(part IN LISTS OSN_LIB_PARTS)
  get_target_property(part_sources ${part} SOURCES)
  list(APPEND OSN_LIB_SOURCES ${part_sources})
endforeach()
add_library(osn_shared SHARED ${OSN_LIB_SOURCES})
set_target_properties(osn_shared PROPERTIES
  OUTPUT_NAME osn
  VERSION ${PROJECT_VERSION}
  SOVERSION 0
  INTERPROCEDURAL_OPTIMIZATION OFF)
target_include_directories(osn_shared
  PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${CMAKE_SOURCE_DIR}/src/model ${OSN_GEN_DIR})
target_link_libraries(osn_shared PRIVATE PkgConfig::INIH PkgConfig::JANSSON PkgConfig::MHD
                                         Threads::Threads m ${CMAKE_DL_LIBS})
add_dependencies(osn_shared osn_version_header)

# The man page: the overview and every command's --help, as roff (scripts/manpage.sh).
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/osn.1
  COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/manpage.sh $<TARGET_FILE:osn> ${CMAKE_BINARY_DIR}/osn.1
  DEPENDS osn ${CMAKE_SOURCE_DIR}/scripts/manpage.sh
  VERBATIM)
add_custom_target(osn_man ALL DEPENDS ${CMAKE_BINARY_DIR}/osn.1)

# Where Debian's python3 looks for modules under the prefix.
find_package(Python3 COMPONENTS Interpreter)
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(OSN_PYTHON_DEFAULT lib/python3/dist-packages)
elseif(Python3_FOUND)
  set(OSN_PYTHON_DEFAULT lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/dist-packages)
else()
  set(OSN_PYTHON_DEFAULT lib/python3/dist-packages)
endif()
set(OSN_PYTHON_DIR ${OSN_PYTHON_DEFAULT} CACHE STRING
    "where the Python module goes, relative to the prefix")
# The module finds libosn relative to itself, so a staged or relocated tree still works.
cmake_path(RELATIVE_PATH CMAKE_INSTALL_LIBDIR BASE_DIRECTORY ${OSN_PYTHON_DIR}/osn
           OUTPUT_VARIABLE OSN_PY_LIB_RELPATH)
configure_file(${CMAKE_SOURCE_DIR}/python/osn/_where.py.in ${CMAKE_BINARY_DIR}/python/_where.py
               @ONLY)

install(TARGETS osn RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS osn_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Unspecified)
# The installed C API is chosen (docs/api.md): the exact analysis, the optimiser, the JSON entry
# points the Python module uses, and the headers they include. The other headers of include/osn
# are the modules' interfaces to each other, free to change: they stay in the source tree.
set(OSN_PUBLIC_HEADERS err.h version.h xd.h law.h policy.h split.h model.h optimize.h json_api.h)
list(TRANSFORM OSN_PUBLIC_HEADERS PREPEND ${CMAKE_SOURCE_DIR}/include/osn/)
install(FILES ${OSN_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/osn)
install(FILES ${CMAKE_BINARY_DIR}/osn.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/python/osn/__init__.py ${CMAKE_BINARY_DIR}/python/_where.py
        DESTINATION ${OSN_PYTHON_DIR}/osn)
# osn.pc names the prefix of this install (which `cmake --install --prefix` may change), so it
# is written when installing, not when configuring.
configure_file(${CMAKE_SOURCE_DIR}/cmake/osn.pc.in ${CMAKE_BINARY_DIR}/osn.pc.in @ONLY)
install(CODE "
  file(READ \"${CMAKE_BINARY_DIR}/osn.pc.in\" pc)
  string(REPLACE \"%PREFIX%\" \"\${CMAKE_INSTALL_PREFIX}\" pc \"\${pc}\")
  file(WRITE \"${CMAKE_BINARY_DIR}/osn.pc\" \"\${pc}\")")
install(FILES ${CMAKE_BINARY_DIR}/osn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# A library in a new directory of the loader's path is found only once its cache knows it.
install(CODE "
  if(\"\$ENV{DESTDIR}\" STREQUAL \"\")
    execute_process(COMMAND ldconfig RESULT_VARIABLE rc ERROR_QUIET)
  endif()")

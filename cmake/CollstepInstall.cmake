# cmake/CollstepInstall.cmake - what `cmake --install` puts where.
#
#   PREFIX/bin/collstep                       RUNPATH $ORIGIN/../lib (+ CUDA's, PMIx's,
#                                             a SimGrid's outside the system: CollstepSimGrid.cmake)
#   PREFIX/lib/libcs_<lib>.a                  one static library per folder
#   PREFIX/lib/libcs_gpu_kernels.so           the CUDA kernels (CUDA builds only)
#   PREFIX/include/collstep/cs_*.h            the public headers: #include <collstep/cs_sched.h>
#   PREFIX/lib/pkgconfig/collstep.pc          pkg-config --cflags --libs collstep
#   PREFIX/lib/cmake/collstep/                find_package(collstep): collstep::core, ...
#
# Each library folder lists its public headers and hands its target to
# cs_install_library() at the end of its CMakeLists.txt; the top level calls
# cs_install_finish() once every folder is added, which writes the CMake
# package, the pkg-config file and the umbrella target collstep::collstep.
# docs/install.md is the user's side of this file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CS_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/collstep)
set(CS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/collstep)

# Installed binaries find collstep's own shared library (libcs_gpu_kernels.so)
# relative to themselves, so a prefix can be moved; libraries from outside
# the build tree (CUDA's runtime and NCCL in /usr/local/cuda) keep the
# directory they were linked from.  Set before any target is created; a
# -DCMAKE_INSTALL_RPATH=... of the packager's wins.
if(NOT DEFINED CMAKE_INSTALL_RPATH)
  file(RELATIVE_PATH _cs_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
  set(CMAKE_INSTALL_RPATH "$ORIGIN/${_cs_bin_to_lib}")
endif()
if(NOT DEFINED CMAKE_INSTALL_RPATH_USE_LINK_PATH)
  set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
endif()

# Headers are reached as <collstep/NAME.h> both installed and in the build
# tree: build/include/collstep/ holds a symbolic link to every public header.
set(CS_BUILD_INCLUDEDIR ${PROJECT_BINARY_DIR}/include)
file(MAKE_DIRECTORY ${CS_BUILD_INCLUDEDIR}/collstep)

# cs_install_library(TARGET NAME export-name [HEADERS h...])
# Installs TARGET as collstep::NAME (also its alias in the tree) with the
# headers of its folder.  The target's public include directories of the
# source tree are kept for the build only; installed users get PREFIX/include.
function(cs_install_library tgt)
  cmake_parse_arguments(A "" "NAME" "HEADERS" ${ARGN})
  if(NOT A_NAME)
    message(FATAL_ERROR "cs_install_library(${tgt}): NAME is missing")
  endif()
  get_target_property(type ${tgt} TYPE)
  get_target_property(dirs ${tgt} INTERFACE_INCLUDE_DIRECTORIES)
  set(iface "")
  foreach(d IN LISTS dirs)
    if(d STREQUAL "dirs-NOTFOUND")
      continue()
    endif()
    string(FIND "${d}" "${PROJECT_SOURCE_DIR}/" in_src)
    string(FIND "${d}" "${PROJECT_BINARY_DIR}/" in_bin)
    if(in_src EQUAL 0 OR in_bin EQUAL 0)
      list(APPEND iface "$<BUILD_INTERFACE:${d}>")
    else()
      list(APPEND iface "${d}")  # a generator expression or an outside directory (NCCL)
    endif()
  endforeach()
  if(NOT type STREQUAL "SHARED_LIBRARY")
    list(APPEND iface "$<BUILD_INTERFACE:${CS_BUILD_INCLUDEDIR}>"
                      "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
  endif()
  set_target_properties(${tgt} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${iface}"
                                          EXPORT_NAME ${A_NAME})
  add_library(collstep::${A_NAME} ALIAS ${tgt})
  install(TARGETS ${tgt} EXPORT collstepTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # A static library with C++ objects needs the C++ runtime, which the C
  # driver does not add when a C program links it.
  get_target_property(srcs ${tgt} SOURCES)
  list(FILTER srcs INCLUDE REGEX "\\.(cpp|cc|cxx)$")
  if(srcs AND type STREQUAL "STATIC_LIBRARY")
    foreach(l IN LISTS CMAKE_CXX_IMPLICIT_LINK_LIBRARIES)
      if(l MATCHES "^(stdc\\+\\+|c\\+\\+)$")
        target_link_libraries(${tgt} PUBLIC $<$<NOT:$<LINK_LANGUAGE:CXX>>:${l}>)
        set_property(GLOBAL PROPERTY CS_CXX_RUNTIME ${l})
        break()
      endif()
    endforeach()
  endif()
  get_target_property(srcdir ${tgt} SOURCE_DIR)
  foreach(h IN LISTS A_HEADERS)
    if(NOT EXISTS ${srcdir}/${h})
      message(FATAL_ERROR "cs_install_library(${tgt}): no header ${srcdir}/${h}")
    endif()
    file(CREATE_LINK ${srcdir}/${h} ${CS_BUILD_INCLUDEDIR}/collstep/${h} SYMBOLIC)
    install(FILES ${srcdir}/${h} DESTINATION ${CS_INSTALL_INCLUDEDIR})
  endforeach()
  set_property(GLOBAL APPEND PROPERTY CS_INSTALLED_TARGETS ${tgt})
endfunction()

# The pkg-config file's libraries in link order: users before what they
# use (cs_planner calls cs_sim, cs_exec_gpu calls cs_exec's bootstrap, cs_exec
# none of cs_exec_gpu).
set(_cs_pc_order cs_planner cs_validate cs_calibrate cs_model cs_sim cs_exec_gpu cs_gpu_kernels cs_exec cs_traces cs_platforms
                 cs_interop cs_algos cs_core)

function(cs_install_finish)
  get_property(tgts GLOBAL PROPERTY CS_INSTALLED_TARGETS)

  # The umbrella target: every library this build installed.
  add_library(cs_collstep INTERFACE)
  foreach(t IN LISTS tgts)
    get_target_property(type ${t} TYPE)
    if(NOT type STREQUAL "SHARED_LIBRARY")  # the kernels come through cs_exec_gpu
      target_link_libraries(cs_collstep INTERFACE ${t})
    endif()
  endforeach()
  set_target_properties(cs_collstep PROPERTIES EXPORT_NAME collstep)
  add_library(collstep::collstep ALIAS cs_collstep)
  install(TARGETS cs_collstep EXPORT collstepTargets)

  # ---- CMake package ---------------------------------------------------
  set(CS_COMPONENTS "")
  foreach(t IN LISTS tgts)
    get_target_property(n ${t} EXPORT_NAME)
    list(APPEND CS_COMPONENTS ${n})
  endforeach()
  # The pkg-config modules the exported targets name (PkgConfig::<PREFIX>,
  # public or $<LINK_ONLY:...>), recreated by collstepConfig.cmake with the
  # same prefixes; the modules go to the .pc file's Requires.  The compile
  # definitions users see go to its Cflags.
  set(CS_PKG_DEPS "")
  set(prefixes "")
  set(requires "")
  set(defs "")
  foreach(t IN LISTS tgts)
    get_target_property(links ${t} INTERFACE_LINK_LIBRARIES)
    string(REGEX MATCHALL "PkgConfig::[A-Za-z0-9_]+" found "${links}")
    foreach(f IN LISTS found)
      string(REPLACE "PkgConfig::" "" prefix ${f})
      if(prefix IN_LIST prefixes)
        continue()
      endif()
      set(module "${${prefix}_MODULE_NAME}")  # cached by pkg_check_modules
      if(NOT module)
        message(FATAL_ERROR "${t} links ${f}, which is not one pkg-config module")
      endif()
      list(APPEND prefixes ${prefix})
      string(APPEND CS_PKG_DEPS "${prefix} ${module} ")
      # A SimGrid outside pkg-config's own path (cmake/CollstepSimGrid.cmake:
      # the patched build, CS_SIMGRID_PREFIX) is named by its flags below,
      # so that users' programs find that one, not the system's.
      if(NOT (prefix STREQUAL "SIMGRID" AND CS_SG_PREFIX))
        list(APPEND requires ${module})
      endif()
    endforeach()
    get_target_property(d ${t} INTERFACE_COMPILE_DEFINITIONS)
    if(d)
      list(FILTER d EXCLUDE REGEX "\\$<")
      list(APPEND defs ${d})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES requires)
  list(REMOVE_DUPLICATES defs)
  get_property(CS_CUDA_ROOT GLOBAL PROPERTY CS_CUDA_ROOT)
  install(EXPORT collstepTargets NAMESPACE collstep:: DESTINATION ${CS_INSTALL_CMAKEDIR}
          FILE collstepTargets.cmake)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/collstepConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/cmake/collstepConfig.cmake
                                INSTALL_DESTINATION ${CS_INSTALL_CMAKEDIR})
  # 0.x: a minor version may change the API.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/collstepConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/cmake/collstepConfig.cmake
                ${PROJECT_BINARY_DIR}/cmake/collstepConfigVersion.cmake
          DESTINATION ${CS_INSTALL_CMAKEDIR})

  # ---- pkg-config ------------------------------------------------------
  # The libraries are static, so what they link goes to Libs and Requires,
  # not to the *.private fields (those are read only with --static, and
  # there is no shared libcollstep that would carry them).
  set(libs "-L\${libdir}")
  set(cflags "-I\${includedir}")
  foreach(d IN LISTS defs)
    string(APPEND cflags " -D${d}")
  endforeach()
  foreach(t IN LISTS tgts)
    if(NOT t IN_LIST _cs_pc_order)
      message(FATAL_ERROR "${t}: add it to _cs_pc_order in ${CMAKE_CURRENT_FUNCTION_LIST_FILE}")
    endif()
  endforeach()
  foreach(t IN LISTS _cs_pc_order)
    if(NOT t IN_LIST tgts)
      continue()
    endif()
    get_target_property(out ${t} OUTPUT_NAME)
    if(NOT out)
      set(out ${t})
    endif()
    string(APPEND libs " -l${out}")
  endforeach()
  set(extra "")
  if(cs_gpu_kernels IN_LIST tgts)
    # libcs_gpu_kernels.so, CUDA's runtime and NCCL are found at run time
    # through the program's RUNPATH, as with the CMake package.
    get_property(cuda_dirs GLOBAL PROPERTY CS_CUDA_LIBRARY_DIRS)
    list(REMOVE_DUPLICATES cuda_dirs)
    string(APPEND libs " -Wl,-rpath,\${libdir}")
    foreach(d IN LISTS cuda_dirs)
      string(APPEND libs " -L${d} -Wl,-rpath,${d}")
    endforeach()
    string(APPEND libs " -lnccl -lcudart")
  endif()
  get_property(cxx_runtime GLOBAL PROPERTY CS_CXX_RUNTIME)
  if(cxx_runtime)
    string(APPEND extra " -l${cxx_runtime}")
  endif()
  if(cs_exec IN_LIST tgts)
    foreach(l IN LISTS CMAKE_DL_LIBS)
      string(APPEND extra " -l${l}")
    endforeach()
  endif()
  if("SIMGRID" IN_LIST prefixes AND CS_SG_PREFIX)
    string(APPEND cflags " -I${CS_SG_PREFIX}/include")
    string(APPEND libs " -L${CS_SG_LIBDIR} -Wl,-rpath,${CS_SG_LIBDIR} -lsimgrid")
  endif()
  string(APPEND libs "${extra} -pthread -lm")
  list(JOIN requires ", " CS_PC_REQUIRES)
  list(JOIN CS_COMPONENTS " " CS_PC_COMPONENTS)
  set(CS_PC_LIBS "${libs}")
  set(CS_PC_CFLAGS "${cflags}")
  # Relative to the .pc file, so that a moved prefix still works.
  set(pcdir ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig)
  file(RELATIVE_PATH CS_PC_PREFIX ${pcdir} ${CMAKE_INSTALL_PREFIX})
  file(RELATIVE_PATH CS_PC_LIBDIR ${CMAKE_INSTALL_PREFIX} ${CMAKE_INSTALL_FULL_LIBDIR})
  file(RELATIVE_PATH CS_PC_INCLUDEDIR ${CMAKE_INSTALL_PREFIX} ${CMAKE_INSTALL_FULL_INCLUDEDIR})
  string(REGEX REPLACE "/$" "" CS_PC_PREFIX "\${pcfiledir}/${CS_PC_PREFIX}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/collstep.pc.in
                 ${PROJECT_BINARY_DIR}/cmake/collstep.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/cmake/collstep.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

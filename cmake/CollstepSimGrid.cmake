# cmake/CollstepSimGrid.cmake - which SimGrid sim/ and platforms/ build on.
#
# SimGrid before 3.34 keeps the activities maestro runs in a list scanned on
# every completion; 3.34 keeps them in a set, which the activity-DAG engine
# needs to be fast (scripts/simgrid/maestro-activity-set.patch says more;
# scripts/simgrid/route-cache.patch, applied with it, makes each
# communication's route lookup a cache hit).
# The first of these that exists is used:
#   1. -DCS_SIMGRID_PREFIX=DIR: the SimGrid installed in DIR
#      (DIR/lib/pkgconfig/simgrid.pc); it has the fix when it is >= 3.34 or
#      holds the stamp of scripts/setup-simgrid.sh;
#   2. a system SimGrid >= 3.34 (pkg-config simgrid);
#   3. the patched build scripts/setup-simgrid.sh caches for these patches,
#      CS_SIMGRID_CACHE/simgrid-VERSION-HASH (by default $CS_SIMGRID_CACHE
#      at the first configure, else /var/cache/collstep), complete when its
#      stamp is there (the highest VERSION);
#   4. the system SimGrid as it is (pkg-config simgrid), without the fix.
# The choice is made again at every configure, so a cache built after the
# first configure is picked up by the next one.
#
# Result:
#   PkgConfig::SIMGRID     imported target (global) of the chosen SimGrid:
#                          its library by full path, so the build tree's
#                          programs get its folder in their RUNPATH, and the
#                          installed ones too (CMAKE_INSTALL_RPATH_USE_LINK_PATH)
#   CS_SG_ACTIVITY_SET     1 when it keeps maestro's activities in a set, else 0
#   CS_SG_DESCRIBE         e.g. "3.32 (patched: maestro activity set, DIR)"
#   CS_SG_PREFIX           its prefix when it is not the system's, else empty
#   CS_SG_LIBDIR           the folder of its libsimgrid
#   CS_SG_PCDIR            the folder of its simgrid.pc when it is not the
#                          system's (the installed CMake package looks there)
set(CS_SIMGRID_PREFIX "" CACHE PATH
    "a SimGrid installation to build on (default: chosen as cmake/CollstepSimGrid.cmake says)")
if(DEFINED ENV{CS_SIMGRID_CACHE} AND NOT "$ENV{CS_SIMGRID_CACHE}" STREQUAL "")
  set(_cs_sg_cache_default "$ENV{CS_SIMGRID_CACHE}")
else()
  set(_cs_sg_cache_default "/var/cache/collstep")
endif()
set(CS_SIMGRID_CACHE "${_cs_sg_cache_default}" CACHE PATH
    "where scripts/setup-simgrid.sh caches the patched SimGrid (default: $CS_SIMGRID_CACHE, else /var/cache/collstep)")

# the hash scripts/setup-simgrid.sh names its build by: the SHA-256 of the
# patches of scripts/simgrid/ one after the other, in bytewise name order
file(GLOB _cs_sg_patches ${PROJECT_SOURCE_DIR}/scripts/simgrid/*.patch)
list(SORT _cs_sg_patches)
set(_cs_sg_all "")
foreach(p IN LISTS _cs_sg_patches)
  file(READ ${p} _cs_sg_text)
  string(APPEND _cs_sg_all "${_cs_sg_text}")
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_cs_sg_patches})
set(_cs_sg_stamp collstep-simgrid.stamp)
string(SHA256 _cs_sg_hash "${_cs_sg_all}")
string(SUBSTRING "${_cs_sg_hash}" 0 12 _cs_sg_hash)

# _cs_sg_modversion(OUT [PCDIR]): pkg-config --modversion simgrid, with
# PCDIR searched first; empty when there is none.  Run at every configure
# (pkg_check_modules caches its answer).
function(_cs_sg_modversion out)
  set(env "")
  if(ARGN)
    set(env ${CMAKE_COMMAND} -E env "PKG_CONFIG_PATH=${ARGN}:$ENV{PKG_CONFIG_PATH}")
  endif()
  execute_process(COMMAND ${env} ${PKG_CONFIG_EXECUTABLE} --modversion simgrid
                  OUTPUT_VARIABLE v ERROR_QUIET RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    set(v "")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# _cs_sg_pcdir(OUT PREFIX): PREFIX's folder holding simgrid.pc, or empty
function(_cs_sg_pcdir out prefix)
  set(dir "")
  foreach(d lib lib64 ${CMAKE_INSTALL_LIBDIR} lib/${CMAKE_LIBRARY_ARCHITECTURE})
    if(EXISTS ${prefix}/${d}/pkgconfig/simgrid.pc)
      set(dir ${prefix}/${d}/pkgconfig)
      break()
    endif()
  endforeach()
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

# _cs_sg_patched(OUT PREFIX): what scripts/setup-simgrid.sh's build in
# PREFIX has, from its stamp
function(_cs_sg_patched out prefix)
  set(what "maestro activity set")
  file(STRINGS ${prefix}/${_cs_sg_stamp} lines REGEX "^patch route-cache[.]patch ")
  if(lines)
    string(APPEND what ", route cache")
  endif()
  file(STRINGS ${prefix}/${_cs_sg_stamp} lines REGEX "^patch sendto-direct[.]patch ")
  if(lines)
    string(APPEND what ", direct comms")
  endif()
  file(STRINGS ${prefix}/${_cs_sg_stamp} lines REGEX "^patch zone-dijkstra-seal[.]patch ")
  if(lines)
    string(APPEND what ", Dijkstra routing")
  endif()
  set(${out} "${what}" PARENT_SCOPE)
endfunction()

set(CS_SG_PREFIX "")
set(CS_SG_PCDIR "")
set(CS_SG_ACTIVITY_SET 0)
_cs_sg_modversion(_cs_sg_sysver)
if(CS_SIMGRID_PREFIX)
  _cs_sg_pcdir(CS_SG_PCDIR ${CS_SIMGRID_PREFIX})
  if(NOT CS_SG_PCDIR)
    message(FATAL_ERROR "CS_SIMGRID_PREFIX=${CS_SIMGRID_PREFIX}: no lib/pkgconfig/simgrid.pc there")
  endif()
  set(CS_SG_PREFIX ${CS_SIMGRID_PREFIX})
  _cs_sg_modversion(_cs_sg_ver ${CS_SG_PCDIR})
  if(_cs_sg_ver VERSION_GREATER_EQUAL 3.34)
    set(CS_SG_ACTIVITY_SET 1)
    set(CS_SG_DESCRIBE "${_cs_sg_ver} (maestro activity set, ${CS_SG_PREFIX})")
  elseif(EXISTS ${CS_SG_PREFIX}/${_cs_sg_stamp})
    set(CS_SG_ACTIVITY_SET 1)
    _cs_sg_patched(_cs_sg_what ${CS_SG_PREFIX})
    set(CS_SG_DESCRIBE "${_cs_sg_ver} (patched: ${_cs_sg_what}, ${CS_SG_PREFIX})")
  else()
    set(CS_SG_DESCRIBE "${_cs_sg_ver} (no maestro activity set, ${CS_SG_PREFIX})")
  endif()
elseif(_cs_sg_sysver VERSION_GREATER_EQUAL 3.34)
  set(CS_SG_ACTIVITY_SET 1)
  set(CS_SG_DESCRIBE "${_cs_sg_sysver} (system: maestro activity set)")
else()
  file(GLOB _cs_sg_cached LIST_DIRECTORIES true ${CS_SIMGRID_CACHE}/simgrid-*-${_cs_sg_hash})
  list(SORT _cs_sg_cached COMPARE NATURAL ORDER DESCENDING)
  foreach(d IN LISTS _cs_sg_cached)
    _cs_sg_pcdir(_cs_sg_pc ${d})
    if(EXISTS ${d}/${_cs_sg_stamp} AND _cs_sg_pc)
      set(CS_SG_PREFIX ${d})
      set(CS_SG_PCDIR ${_cs_sg_pc})
      break()
    endif()
  endforeach()
  if(CS_SG_PREFIX)
    _cs_sg_modversion(_cs_sg_ver ${CS_SG_PCDIR})
    set(CS_SG_ACTIVITY_SET 1)
    _cs_sg_patched(_cs_sg_what ${CS_SG_PREFIX})
    set(CS_SG_DESCRIBE "${_cs_sg_ver} (patched: ${_cs_sg_what}, ${CS_SG_PREFIX})")
  else()
    set(CS_SG_DESCRIBE "${_cs_sg_sysver} (system: no maestro activity set)")
  endif()
endif()

# The imported target, from the chosen simgrid.pc; forget what an earlier
# configure found, which may have been another SimGrid.
unset(SIMGRID_FOUND CACHE)
unset(pkgcfg_lib_SIMGRID_simgrid CACHE)
set(_cs_sg_env "$ENV{PKG_CONFIG_PATH}")
if(CS_SG_PCDIR)
  set(ENV{PKG_CONFIG_PATH} "${CS_SG_PCDIR}:${_cs_sg_env}")
endif()
pkg_check_modules(SIMGRID REQUIRED QUIET IMPORTED_TARGET GLOBAL simgrid)
set(ENV{PKG_CONFIG_PATH} "${_cs_sg_env}")
if(NOT pkgcfg_lib_SIMGRID_simgrid)
  message(FATAL_ERROR "pkg-config simgrid: no libsimgrid in '${SIMGRID_LDFLAGS}'")
endif()
get_filename_component(CS_SG_LIBDIR ${pkgcfg_lib_SIMGRID_simgrid} DIRECTORY)
if(CS_SG_PREFIX)
  string(FIND "${CS_SG_LIBDIR}/" "${CS_SG_PREFIX}/" _cs_sg_in)
  if(NOT _cs_sg_in EQUAL 0)
    message(FATAL_ERROR "${CS_SG_PCDIR}/simgrid.pc names ${pkgcfg_lib_SIMGRID_simgrid}, not a library in ${CS_SG_PREFIX}")
  endif()
endif()
message(STATUS "SimGrid ${CS_SG_DESCRIBE}: ${pkgcfg_lib_SIMGRID_simgrid}")

# cs_sg_definitions(TARGET): the definitions above on TARGET, PUBLIC.
# CS_SG_DESCRIBE (spaces, quotes) only in the build tree: an installed
# program asks cs_sim_simgrid() instead, and pkg-config's Cflags could not
# carry it through a shell.  CS_SG_LIBDIR for cs_sim's own sources only.
function(cs_sg_definitions tgt)
  string(REPLACE ">" "$<ANGLE-R>" desc "${CS_SG_DESCRIBE}")
  string(REPLACE "," "$<COMMA>" desc "${desc}")
  target_compile_definitions(${tgt} PUBLIC CS_SG_ACTIVITY_SET=${CS_SG_ACTIVITY_SET}
                             "$<BUILD_INTERFACE:CS_SG_DESCRIBE=\"${desc}\">"
                             PRIVATE "CS_SG_LIBDIR=\"${CS_SG_LIBDIR}\"")
endfunction()

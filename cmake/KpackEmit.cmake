# KpackEmit.cmake: build HIP targets so that their device code goes to .kpack
# archives instead of the host binary (docs/cmake.md).
#
#   find_package(rocm-kpack CONFIG REQUIRED)   # brings this module
#   kpack_emit(mylib myapp)                    # these targets
#   # or configure with -DROCM_KPACK_EMIT=ON:  every target of the project
#
# What a target gets:
#   compile  -Xarch_host -fpass-plugin=KpackPlugin.so   (CXX and HIP sources:
#            kpack-ready objects)
#   link     -fuse-ld=lld --ld-path=<libexec>/kpack/ld.lld (ld.kpack)
#            -Wl,--kpack-dir=<output dir>/<ARCHIVE_DIR>  (archives + metadata)
#            -Wl,--kpack-metadata-room=1024  (so that `kpack split` can put
#            TheRock's metadata in place without relinking)
# Static and object libraries only get the compile option, plus the linker
# choice as a usage requirement: whoever links them goes through ld.kpack,
# which refuses to produce an unfinalized binary.
#
# kpack_emit(<target>... [ARCHIVE_DIR <dir>] [NAME <kernel name>]
#            [SINGLE_ARCHIVE] [SEARCH_PATHS <path>...] [GROUP <name>]
#            [FAMILY <name>] [COMPRESSION <scheme>] [COMPRESSION_LEVEL <n>]
#            [METADATA_ROOM <bytes>]
#            [INSTALL_DESTINATION <dir>])
#   ARCHIVE_DIR   where the archives go, relative to the target's output
#                 directory (default ".kpack"); the metadata records the path
#                 relative to the binary, so the layout survives installation.
#   NAME          TOC kernel name and archive prefix (default: file name).
#   SINGLE_ARCHIVE  one multi-target <name>.kpack instead of one archive per
#                 target ID (<name>_<target id>.kpack, @GFXARCH@ pattern).
#   SEARCH_PATHS  replace the recorded search paths.
#   METADATA_ROOM bytes reserved for the metadata (default 1024: TheRock's
#                 split metadata, kernel_name "<prefix>/<relpath>" and one
#                 "../.kpack/<name>_@GFXARCH@.kpack" path, is far shorter);
#                 0 reserves only what the link's own metadata needs.
#   INSTALL_DESTINATION  install the archives to <dir>/<ARCHIVE_DIR>, <dir>
#                 being where the target itself is installed.
#
# Cache variables: ROCM_KPACK_EMIT (OFF), ROCM_KPACK_PLUGIN (KpackPlugin.so),
# ROCM_KPACK_LINKER (ld.kpack's ld.lld alias). The tools are looked up in the
# installation this file belongs to.

include_guard(GLOBAL)

option(ROCM_KPACK_EMIT "Emit device code of every target as .kpack archives" OFF)

# <prefix>/<libdir>/cmake/rocm-kpack/KpackEmit.cmake, libdir possibly
# multiarch (lib/x86_64-linux-gnu): try both depths.
set(_kpack_prefixes)
foreach(_up "../../.." "../../../..")
  get_filename_component(_p "${CMAKE_CURRENT_LIST_DIR}/${_up}" ABSOLUTE)
  list(APPEND _kpack_prefixes "${_p}")
endforeach()
set(_kpack_plugin_hints)
set(_kpack_linker_hints)
foreach(_p IN LISTS _kpack_prefixes)
  list(APPEND _kpack_plugin_hints "${_p}/lib" "${_p}/lib64" "${_p}/lib/x86_64-linux-gnu")
  list(APPEND _kpack_linker_hints "${_p}/libexec/kpack")
endforeach()
find_file(ROCM_KPACK_PLUGIN KpackPlugin.so HINTS ${_kpack_plugin_hints}
  NO_DEFAULT_PATH DOC "KpackPlugin.so (host compilation pass plugin)")
# Only the alias beside this installation: a system ld.lld is not ld.kpack.
find_program(ROCM_KPACK_LINKER ld.lld HINTS ${_kpack_linker_hints}
  NO_DEFAULT_PATH DOC "ld.kpack under its ld.lld alias (libexec/kpack/ld.lld)")

function(_kpack_check_tools)
  if(NOT ROCM_KPACK_PLUGIN OR NOT EXISTS "${ROCM_KPACK_PLUGIN}")
    message(FATAL_ERROR "kpack_emit: KpackPlugin.so not found; set ROCM_KPACK_PLUGIN")
  endif()
  if(NOT ROCM_KPACK_LINKER OR NOT EXISTS "${ROCM_KPACK_LINKER}")
    message(FATAL_ERROR "kpack_emit: ld.kpack (libexec/kpack/ld.lld) not found; set ROCM_KPACK_LINKER")
  endif()
  foreach(_lang CXX HIP)
    if(CMAKE_${_lang}_COMPILER_LOADED AND NOT CMAKE_${_lang}_COMPILER_ID MATCHES "Clang")
      message(FATAL_ERROR "kpack_emit: needs clang as the ${_lang} compiler "
                          "(found ${CMAKE_${_lang}_COMPILER_ID})")
    endif()
  endforeach()
endfunction()

function(kpack_emit)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "SINGLE_ARCHIVE"
    "ARCHIVE_DIR;NAME;GROUP;FAMILY;COMPRESSION;COMPRESSION_LEVEL;METADATA_ROOM;INSTALL_DESTINATION"
    "SEARCH_PATHS")
  _kpack_check_tools()
  if(NOT ARG_ARCHIVE_DIR)
    set(ARG_ARCHIVE_DIR ".kpack")
  endif()
  if(NOT DEFINED ARG_METADATA_ROOM)
    set(ARG_METADATA_ROOM 1024)
  endif()
  foreach(tgt IN LISTS ARG_UNPARSED_ARGUMENTS)
    if(NOT TARGET ${tgt})
      message(FATAL_ERROR "kpack_emit: no target named '${tgt}'")
    endif()
    get_target_property(_type ${tgt} TYPE)
    get_target_property(_aliased ${tgt} ALIASED_TARGET)
    if(_aliased OR _type STREQUAL "INTERFACE_LIBRARY" OR _type STREQUAL "UTILITY")
      continue()
    endif()
    set_property(TARGET ${tgt} PROPERTY KPACK_EMIT ON)
    # One option pair (SHELL: keeps CMake from de-duplicating -Xarch_host),
    # for the languages clang compiles as HIP; C may use another compiler.
    target_compile_options(${tgt} PRIVATE
      "$<$<COMPILE_LANGUAGE:CXX,HIP>:SHELL:-Xarch_host -fpass-plugin=${ROCM_KPACK_PLUGIN}>")
    set(_linker -fuse-ld=lld "--ld-path=${ROCM_KPACK_LINKER}")
    if(_type STREQUAL "STATIC_LIBRARY" OR _type STREQUAL "OBJECT_LIBRARY")
      target_link_options(${tgt} INTERFACE ${_linker})
      continue()
    endif()

    set(_dir "$<TARGET_FILE_DIR:${tgt}>/${ARG_ARCHIVE_DIR}")
    set(_name "$<TARGET_FILE_NAME:${tgt}>")
    if(ARG_NAME)
      set(_name "${ARG_NAME}")
    endif()
    set(_opts ${_linker} "-Wl,--kpack-name=${_name}")
    if(ARG_SINGLE_ARCHIVE)
      list(APPEND _opts "-Wl,--kpack-output=${_dir}/${_name}.kpack")
    else()
      list(APPEND _opts "-Wl,--kpack-dir=${_dir}")
    endif()
    foreach(_path IN LISTS ARG_SEARCH_PATHS)
      list(APPEND _opts "-Wl,--kpack-search-path=${_path}")
    endforeach()
    if(ARG_GROUP)
      list(APPEND _opts "-Wl,--kpack-group=${ARG_GROUP}")
    endif()
    if(ARG_FAMILY)
      list(APPEND _opts "-Wl,--kpack-family=${ARG_FAMILY}")
    endif()
    if(ARG_COMPRESSION)
      list(APPEND _opts "-Wl,--kpack-compression=${ARG_COMPRESSION}")
    endif()
    if(DEFINED ARG_COMPRESSION_LEVEL)
      list(APPEND _opts "-Wl,--kpack-compression-level=${ARG_COMPRESSION_LEVEL}")
    endif()
    if(ARG_METADATA_ROOM)
      list(APPEND _opts "-Wl,--kpack-metadata-room=${ARG_METADATA_ROOM}")
    endif()
    target_link_options(${tgt} PRIVATE ${_opts})
    # The archives are written by the link step; relink when the tools change.
    set_property(TARGET ${tgt} APPEND PROPERTY LINK_DEPENDS
      "${ROCM_KPACK_LINKER}")

    if(ARG_INSTALL_DESTINATION)
      if(ARG_SINGLE_ARCHIVE)
        set(_glob "${_name}.kpack")
      else()
        set(_glob "${_name}_*.kpack")
      endif()
      install(CODE "
        file(GLOB _kpack_archives \"${_dir}/${_glob}\")
        file(INSTALL \${_kpack_archives}
             DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${ARG_INSTALL_DESTINATION}/${ARG_ARCHIVE_DIR}\")")
    endif()
  endforeach()
endfunction()

# ROCM_KPACK_EMIT=ON: at the end of the top-level configure, every target not
# already configured by kpack_emit() gets the defaults, if the project
# compiles HIP at all (_kpack_project_uses_hip).
function(_kpack_collect_targets dir out)
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    _kpack_collect_targets("${_sub}" _more)
    list(APPEND _targets ${_more})
  endforeach()
  set(${out} ${_targets} PARENT_SCOPE)
endfunction()

# Whether the project compiles HIP at all: the HIP language, a hip package,
# or offload options (-x hip, --offload-arch) in the C++ flags, a directory's
# or a target's options, or a hip:: library linked. ROCM_KPACK_EMIT may reach
# projects without HIP (TheRock passes a global flag to every subproject,
# amd-llvm included, through its project_init.cmake); they are left exactly
# as they are: no tool checks, no options, their own linker.
function(_kpack_project_uses_hip targets out)
  set(_hip_regex "(^|[; ])(-x;?[ ]*hip|-xhip|--offload-arch|--cuda-gpu-arch|hip::)")
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  get_property(_packages GLOBAL PROPERTY PACKAGES_FOUND)
  set(_uses FALSE)
  if("HIP" IN_LIST _langs OR "hip" IN_LIST _packages OR "HIP" IN_LIST _packages)
    set(_uses TRUE)
  endif()
  set(_flags "${CMAKE_CXX_FLAGS}")
  foreach(_config IN LISTS CMAKE_CONFIGURATION_TYPES CMAKE_BUILD_TYPE)
    string(TOUPPER "${_config}" _config)
    string(APPEND _flags " ${CMAKE_CXX_FLAGS_${_config}}")
  endforeach()
  if(_flags MATCHES "${_hip_regex}")
    set(_uses TRUE)
  endif()
  foreach(tgt IN LISTS targets)
    if(_uses)
      break()
    endif()
    foreach(_prop COMPILE_OPTIONS INTERFACE_COMPILE_OPTIONS LINK_LIBRARIES
                  INTERFACE_LINK_LIBRARIES)
      get_target_property(_value ${tgt} ${_prop})
      if(_value AND "${_value}" MATCHES "${_hip_regex}")
        set(_uses TRUE)
      endif()
    endforeach()
    get_target_property(_dir ${tgt} SOURCE_DIR)
    get_property(_dir_options DIRECTORY "${_dir}" PROPERTY COMPILE_OPTIONS)
    if("${_dir_options}" MATCHES "${_hip_regex}")
      set(_uses TRUE)
    endif()
  endforeach()
  set(${out} ${_uses} PARENT_SCOPE)
endfunction()

function(_kpack_emit_all)
  _kpack_collect_targets("${CMAKE_SOURCE_DIR}" _all)
  _kpack_project_uses_hip("${_all}" _uses_hip)
  if(NOT _uses_hip)
    message(STATUS "ROCM_KPACK_EMIT: ${PROJECT_NAME} compiles no HIP; "
                   "its targets are left as they are")
    return()
  endif()
  set(_todo)
  foreach(tgt IN LISTS _all)
    get_target_property(_done ${tgt} KPACK_EMIT)
    get_target_property(_type ${tgt} TYPE)
    if(NOT _done AND _type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY|STATIC_LIBRARY|OBJECT_LIBRARY)$")
      list(APPEND _todo ${tgt})
    endif()
  endforeach()
  if(_todo)
    kpack_emit(${_todo})
  endif()
endfunction()

if(ROCM_KPACK_EMIT)
  get_property(_kpack_deferred GLOBAL PROPERTY _KPACK_EMIT_ALL_DEFERRED)
  if(NOT _kpack_deferred)
    set_property(GLOBAL PROPERTY _KPACK_EMIT_ALL_DEFERRED ON)
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _kpack_emit_all)
  endif()
endif()

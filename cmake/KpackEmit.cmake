# KpackEmit.cmake: build HIP targets so that their device code goes to .kpack
# archives instead of the host binary (docs/cmake.md).
#
#   find_package(rocm-kpack CONFIG REQUIRED)   # brings this module
#   kpack_emit(mylib myapp)                    # these targets
#
# or, for every target of a project that knows nothing of kpack:
#
#   cmake -DROCM_KPACK_EMIT=ON \
#     -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<prefix>/<libdir>/cmake/rocm-kpack/KpackEmit.cmake ...
#
# (CMAKE_PROJECT_INCLUDE=<that file> works as well; a project that calls
# find_package(rocm-kpack) itself needs only -DROCM_KPACK_EMIT=ON). At the
# end of the configure one line names the targets that emit:
#   -- kpack: emitting vecops, vecdemo (3 GPU targets)
#
# What a target gets:
#   compile  -Xarch_host -fpass-plugin=KpackPlugin.so   (CXX and HIP sources:
#            kpack-ready objects); the objects depend on KpackPlugin.so
#            (OBJECT_DEPENDS: a new plugin recompiles them), and each HIP
#            source gets -cuid=<hash of the target and its path relative to
#            the project>, so that the device code does not depend on where
#            the project is checked out (unless the flags choose a CUID)
#   link     -fuse-ld=lld --ld-path=<libexec>/kpack/ld.lld (ld.kpack)
#            -Wl,--kpack-dir=<output dir>/<ARCHIVE_DIR>  (archives + metadata)
#            -Wl,--kpack-metadata-room=1024  (so that `kpack split` can put
#            TheRock's metadata in place without relinking)
#   install  wherever the binary is installed (install(TARGETS), any
#            component), the archives of its link go beside it, to
#            <dir>/<ARCHIVE_DIR>, in the same `cmake --install` run, so in
#            the same component
# Static and object libraries only get the compile side, plus the linker
# choice as a usage requirement: whoever links them goes through ld.kpack,
# which refuses to produce an unfinalized binary.
#
# kpack_emit(<target>... [ARCHIVE_DIR <dir>] [NAME <kernel name>]
#            [SINGLE_ARCHIVE] [SEARCH_PATHS <path>...] [GROUP <name>]
#            [FAMILY <name>] [COMPRESSION <scheme>] [COMPRESSION_LEVEL <n>]
#            [METADATA_ROOM <bytes>]
#            [INSTALL_DESTINATION <dir> [COMPONENT <c> [PER_TARGET_COMPONENTS]]])
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
#   INSTALL_DESTINATION  install the archives by a rule of their own, to
#                 <dir>/<ARCHIVE_DIR>, <dir> being where the target itself is
#                 installed, instead of beside wherever the target is
#                 installed; in COMPONENT <c> (default: the default component),
#                 with PER_TARGET_COMPONENTS each in <c>-<target id> (":" of a
#                 feature target written "-": vecops-gfx90a-xnack+), for
#                 CPack / per-GPU packages.
#
# Only the archives of the binary's own link are installed: one per GPU
# target the configuration compiles for (HIP_ARCHITECTURES, --offload-arch),
# never an archive an earlier configuration left in the build tree.
#
# Cache variables: ROCM_KPACK_EMIT (OFF), ROCM_KPACK_PLUGIN (KpackPlugin.so),
# ROCM_KPACK_LINKER (ld.kpack's ld.lld alias), ROCM_KPACK_CACHE_DIR (empty:
# none; else every emitting link gets -Wl,--kpack-cache-dir=<dir>, so that a
# relink compresses only the code objects that changed) and
# ROCM_KPACK_CACHE_POLICY (empty: LLVM's default pruning; else
# -Wl,--kpack-cache-policy=<policy>, lld's --thinlto-cache-policy syntax).
# The tools are looked up in the installation this file belongs to.

include_guard(GLOBAL)

option(ROCM_KPACK_EMIT "Emit device code of every target as .kpack archives" OFF)
set(ROCM_KPACK_CACHE_DIR "" CACHE PATH
  "Compressed-frame cache of ld.kpack for incremental links (empty: none)")
set(ROCM_KPACK_CACHE_POLICY "" CACHE STRING
  "Pruning of ROCM_KPACK_CACHE_DIR, lld's --thinlto-cache-policy syntax")

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
  cmake_parse_arguments(PARSE_ARGV 0 ARG "SINGLE_ARCHIVE;PER_TARGET_COMPONENTS"
    "ARCHIVE_DIR;NAME;GROUP;FAMILY;COMPRESSION;COMPRESSION_LEVEL;METADATA_ROOM;INSTALL_DESTINATION;COMPONENT"
    "SEARCH_PATHS")
  _kpack_check_tools()
  if(NOT ARG_ARCHIVE_DIR)
    set(ARG_ARCHIVE_DIR ".kpack")
  endif()
  if(NOT DEFINED ARG_METADATA_ROOM)
    set(ARG_METADATA_ROOM 1024)
  endif()
  if((ARG_COMPONENT OR ARG_PER_TARGET_COMPONENTS) AND NOT ARG_INSTALL_DESTINATION)
    message(FATAL_ERROR "kpack_emit: COMPONENT and PER_TARGET_COMPONENTS need "
      "INSTALL_DESTINATION (where the target is installed); without them the "
      "archives are installed beside the target, in its own install rule's component")
  endif()
  if(ARG_PER_TARGET_COMPONENTS AND (NOT ARG_COMPONENT OR ARG_SINGLE_ARCHIVE))
    message(FATAL_ERROR "kpack_emit: PER_TARGET_COMPONENTS needs COMPONENT (the "
      "components' prefix) and one archive per target (no SINGLE_ARCHIVE)")
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
    # The rest (GPU targets, object dependencies, CUIDs, install rules) is
    # done at the end of the configure (_kpack_finalize), when the target's
    # sources and options are complete.
    set_property(GLOBAL APPEND PROPERTY _KPACK_EMIT_TARGETS ${tgt})
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
    if(ROCM_KPACK_CACHE_DIR)
      list(APPEND _opts "-Wl,--kpack-cache-dir=${ROCM_KPACK_CACHE_DIR}")
      if(ROCM_KPACK_CACHE_POLICY)
        list(APPEND _opts "-Wl,--kpack-cache-policy=${ROCM_KPACK_CACHE_POLICY}")
      endif()
    endif()
    target_link_options(${tgt} PRIVATE ${_opts})
    # The archives are written by the link step; relink when the tools change.
    set_property(TARGET ${tgt} APPEND PROPERTY LINK_DEPENDS
      "${ROCM_KPACK_LINKER}")
    set_target_properties(${tgt} PROPERTIES
      _KPACK_ARCHIVE_DIR "${ARG_ARCHIVE_DIR}"
      _KPACK_NAME "${_name}"
      _KPACK_SINGLE_ARCHIVE "${ARG_SINGLE_ARCHIVE}"
      _KPACK_INSTALL_DESTINATION "${ARG_INSTALL_DESTINATION}"
      _KPACK_COMPONENT "${ARG_COMPONENT}"
      _KPACK_PER_TARGET_COMPONENTS "${ARG_PER_TARGET_COMPONENTS}")
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

# Whether the C++ compiler is a hipcc (ROCm's, or this project's with
# --emit-kpack), which compiles .cpp sources as HIP by itself.
function(_kpack_cxx_is_hipcc out)
  set(_is FALSE)
  if(CMAKE_CXX_COMPILER_LOADED)
    get_filename_component(_cxx "${CMAKE_CXX_COMPILER}" NAME)
    if(_cxx MATCHES "^hipcc")
      set(_is TRUE)
    endif()
  endif()
  set(${out} ${_is} PARENT_SCOPE)
endfunction()

# Whether the project compiles HIP at all: the HIP language, a hip package,
# hipcc as the C++ compiler, or offload options (-x hip, --offload-arch) in
# the C++ flags, a directory's or a target's options, or a hip:: library
# linked. ROCM_KPACK_EMIT may reach projects without HIP (TheRock passes a
# global flag to every subproject, amd-llvm included, through its
# project_init.cmake); they are left exactly as they are: no tool checks, no
# options, their own linker.
function(_kpack_project_uses_hip targets out)
  set(_hip_regex "(^|[; ])(-x;?[ ]*hip|-xhip|--offload-arch|--cuda-gpu-arch|hip::)")
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  get_property(_packages GLOBAL PROPERTY PACKAGES_FOUND)
  _kpack_cxx_is_hipcc(_uses)
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

# The GPU targets a target's own sources compile for, from what CMake will
# pass: HIP_ARCHITECTURES for HIP-language sources, --offload-arch=,
# --cuda-gpu-arch= and hipcc's --amdgpu-target= (a comma list each;
# --no-offload-arch= removes) in the language flags, the directory's and the
# target's options and the interface options of everything it links. Target
# IDs in clang's canonical form (features sorted: gfx90a:sramecc-:xnack+),
# as the bundles and ld.kpack's archive names spell them.
function(_kpack_parse_archs text out)
  set(_archs ${${out}})
  string(REGEX MATCHALL
    "(--no-offload-arch|--offload-arch|--cuda-gpu-arch|--amdgpu-target)=[^ ;\"'>]+"
    _options "${text}")
  foreach(_option IN LISTS _options)
    string(REGEX REPLACE "^([^=]+)=(.*)$" "\\1" _flag "${_option}")
    string(REGEX REPLACE "^([^=]+)=(.*)$" "\\2" _value "${_option}")
    string(REPLACE "," ";" _values "${_value}")
    if(_flag STREQUAL "--no-offload-arch")
      if("all" IN_LIST _values)
        set(_archs)
      else()
        _kpack_canonical_archs(_values)
        list(REMOVE_ITEM _archs ${_values})
      endif()
    else()
      _kpack_canonical_archs(_values)
      list(APPEND _archs ${_values})
    endif()
  endforeach()
  set(${out} ${_archs} PARENT_SCOPE)
endfunction()

function(_kpack_canonical_archs var)
  set(_result)
  foreach(_arch IN LISTS ${var})
    string(REPLACE ":" ";" _parts "${_arch}")
    list(POP_FRONT _parts _processor)
    list(SORT _parts)
    list(PREPEND _parts "${_processor}")
    list(JOIN _parts ":" _arch)
    list(APPEND _result "${_arch}")
  endforeach()
  set(${var} ${_result} PARENT_SCOPE)
endfunction()

# Every target that <tgt> links, transitively (interface dependencies of
# what it links), aliases resolved.
function(_kpack_linked_targets tgt out)
  set(_seen)
  set(_todo ${tgt})
  set(_first TRUE)
  while(_todo)
    list(POP_FRONT _todo _t)
    if(_first)
      get_property(_items TARGET ${_t} PROPERTY LINK_LIBRARIES)
      set(_first FALSE)
    else()
      get_property(_items TARGET ${_t} PROPERTY INTERFACE_LINK_LIBRARIES)
    endif()
    foreach(_item IN LISTS _items)
      if(_item MATCHES "^\\$<LINK_ONLY:(.*)>$")
        set(_item "${CMAKE_MATCH_1}")
      endif()
      if(_item MATCHES "^::@" OR NOT TARGET "${_item}")
        continue()
      endif()
      get_target_property(_aliased "${_item}" ALIASED_TARGET)
      if(_aliased)
        set(_item "${_aliased}")
      endif()
      if(NOT _item IN_LIST _seen AND NOT _item STREQUAL tgt)
        list(APPEND _seen "${_item}")
        list(APPEND _todo "${_item}")
      endif()
    endforeach()
  endwhile()
  set(${out} ${_seen} PARENT_SCOPE)
endfunction()

# For <tgt>: whether its own sources compile HIP (<prefix>_HIP), for which
# GPU targets (<prefix>_ARCHS; <prefix>_UNKNOWN when they cannot be told:
# none named, or "native"), which sources clang compiles (<prefix>_SOURCES:
# CXX and HIP, absolute), which of them as HIP (<prefix>_HIP_SOURCES), and
# whether the flags choose a CUID already (<prefix>_USER_CUID).
function(_kpack_target_device_info tgt prefix)
  get_target_property(_sources ${tgt} SOURCES)
  get_target_property(_src_dir ${tgt} SOURCE_DIR)
  get_target_property(_bin_dir ${tgt} BINARY_DIR)
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(_hip_ext ${CMAKE_HIP_SOURCE_FILE_EXTENSIONS})
  if(NOT _hip_ext)
    set(_hip_ext hip)
  endif()
  set(_cxx_ext ${CMAKE_CXX_SOURCE_FILE_EXTENSIONS})
  if(NOT _cxx_ext)
    set(_cxx_ext C c++ cc cpp cxx CPP)
  endif()
  set(_hip_sources)
  set(_cxx_sources)
  set(_objects)
  foreach(_src IN LISTS _sources)
    if(_src MATCHES "^\\$<TARGET_OBJECTS:([^>]+)>$")
      list(APPEND _objects "${CMAKE_MATCH_1}")
      continue()
    elseif(_src MATCHES "\\$<")
      continue()
    endif()
    if(NOT IS_ABSOLUTE "${_src}")
      if(EXISTS "${_src_dir}/${_src}" OR NOT EXISTS "${_bin_dir}/${_src}")
        set(_src "${_src_dir}/${_src}")
      else()
        set(_src "${_bin_dir}/${_src}")
      endif()
    endif()
    get_source_file_property(_lang "${_src}" TARGET_DIRECTORY ${tgt} LANGUAGE)
    if(NOT _lang)
      get_filename_component(_ext "${_src}" LAST_EXT)
      string(REGEX REPLACE "^\\." "" _ext "${_ext}")
      if("HIP" IN_LIST _langs AND _ext IN_LIST _hip_ext)
        set(_lang HIP)
      elseif("CXX" IN_LIST _langs AND _ext IN_LIST _cxx_ext)
        set(_lang CXX)
      endif()
    endif()
    if(_lang STREQUAL "HIP")
      list(APPEND _hip_sources "${_src}")
    elseif(_lang STREQUAL "CXX")
      list(APPEND _cxx_sources "${_src}")
    endif()
  endforeach()

  # The options, as text: C++ and HIP flags of every configuration, the
  # directory's, the target's, and the interface options of what it links.
  set(_options)
  get_property(_dir_options DIRECTORY "${_src_dir}" PROPERTY COMPILE_OPTIONS)
  get_property(_tgt_options TARGET ${tgt} PROPERTY COMPILE_OPTIONS)
  list(APPEND _options ${_dir_options} ${_tgt_options})
  _kpack_linked_targets(${tgt} _linked)
  foreach(_dep IN LISTS _linked)
    get_property(_dep_options TARGET ${_dep} PROPERTY INTERFACE_COMPILE_OPTIONS)
    list(APPEND _options ${_dep_options})
  endforeach()
  set(_cxx_flags "${CMAKE_CXX_FLAGS}")
  set(_hip_flags "${CMAKE_HIP_FLAGS}")
  foreach(_config IN LISTS CMAKE_CONFIGURATION_TYPES CMAKE_BUILD_TYPE)
    string(TOUPPER "${_config}" _config)
    string(APPEND _cxx_flags " ${CMAKE_CXX_FLAGS_${_config}}")
    string(APPEND _hip_flags " ${CMAKE_HIP_FLAGS_${_config}}")
  endforeach()
  set(_cxx_text "${_cxx_flags};${_options}")
  set(_hip_text "${_hip_flags};${_options}")

  set(_hip FALSE)
  set(_archs)
  set(_hip_compiled)
  if(_hip_sources)
    set(_hip TRUE)
    get_target_property(_hip_archs ${tgt} HIP_ARCHITECTURES)
    if(_hip_archs AND NOT _hip_archs STREQUAL "OFF")
      _kpack_canonical_archs(_hip_archs)
      list(APPEND _archs ${_hip_archs})
    endif()
    _kpack_parse_archs("${_hip_text}" _archs)
    list(APPEND _hip_compiled ${_hip_sources})
  endif()
  _kpack_cxx_is_hipcc(_hipcc)
  # Options that make clang compile C++ as HIP.
  if(_cxx_sources AND (_hipcc OR "${_cxx_text}" MATCHES "(^|[; ])(-x;?[ ]*hip|-xhip)([; >]|$)"))
    set(_hip TRUE)
    _kpack_parse_archs("${_cxx_text}" _archs)
    list(APPEND _hip_compiled ${_cxx_sources})
  endif()
  set(_unknown FALSE)
  if(_hip AND (NOT _archs OR "native" IN_LIST _archs))
    set(_unknown TRUE)
    list(REMOVE_ITEM _archs native)
  endif()
  set(_user_cuid FALSE)
  if("${_cxx_text};${_hip_text}" MATCHES "(^|[; ])-(cuid=|fuse-cuid=)")
    set(_user_cuid TRUE)
  endif()
  set(${prefix}_HIP ${_hip} PARENT_SCOPE)
  set(${prefix}_ARCHS ${_archs} PARENT_SCOPE)
  set(${prefix}_UNKNOWN ${_unknown} PARENT_SCOPE)
  set(${prefix}_SOURCES ${_hip_sources} ${_cxx_sources} PARENT_SCOPE)
  set(${prefix}_HIP_SOURCES ${_hip_compiled} PARENT_SCOPE)
  set(${prefix}_USER_CUID ${_user_cuid} PARENT_SCOPE)
  # Static and object libraries linked, and object libraries' objects:
  # their code objects end up in this target's link.
  set(_parts ${_objects})
  foreach(_dep IN LISTS _linked)
    get_target_property(_dep_type ${_dep} TYPE)
    get_target_property(_imported ${_dep} IMPORTED)
    if(NOT _imported AND _dep_type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY)$")
      list(APPEND _parts ${_dep})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _parts)
  set(${prefix}_PARTS ${_parts} PARENT_SCOPE)
endfunction()

# The GPU targets of everything that goes into <tgt>'s link: its own and
# those of the static and object libraries it links.
function(_kpack_link_device_info tgt prefix)
  _kpack_target_device_info(${tgt} _own)
  set(_hip ${_own_HIP})
  set(_archs ${_own_ARCHS})
  set(_unknown ${_own_UNKNOWN})
  foreach(_part IN LISTS _own_PARTS)
    if(NOT TARGET ${_part})
      continue()
    endif()
    _kpack_target_device_info(${_part} _dep)
    if(_dep_HIP)
      set(_hip TRUE)
      list(APPEND _archs ${_dep_ARCHS})
      if(_dep_UNKNOWN)
        set(_unknown TRUE)
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _archs)
  set(${prefix}_HIP ${_hip} PARENT_SCOPE)
  set(${prefix}_ARCHS ${_archs} PARENT_SCOPE)
  set(${prefix}_UNKNOWN ${_unknown} PARENT_SCOPE)
endfunction()

# Object settings of an emitting target: every C++/HIP object depends on
# KpackPlugin.so (a new plugin recompiles them: ninja and make; ccache needs
# CCACHE_EXTRAFILES, docs/cmake.md), and every HIP source gets a CUID that
# depends only on the target and the source's path relative to the project
# (clang's default hashes the absolute path and every option), so that two
# checkouts at different paths give the same device code. Source properties
# belong to a directory, not a target: the CUID is selected by target name.
function(_kpack_object_settings tgt)
  _kpack_target_device_info(${tgt} _info)
  foreach(_src IN LISTS _info_SOURCES)
    get_source_file_property(_deps "${_src}" TARGET_DIRECTORY ${tgt} OBJECT_DEPENDS)
    if(NOT _deps OR NOT "${ROCM_KPACK_PLUGIN}" IN_LIST _deps)
      set_property(SOURCE "${_src}" TARGET_DIRECTORY ${tgt} APPEND
        PROPERTY OBJECT_DEPENDS "${ROCM_KPACK_PLUGIN}")
    endif()
  endforeach()
  if(_info_USER_CUID)
    return()
  endif()
  foreach(_src IN LISTS _info_HIP_SOURCES)
    get_source_file_property(_src_options "${_src}" TARGET_DIRECTORY ${tgt} COMPILE_OPTIONS)
    if(_src_options AND "${_src_options}" MATCHES "(^|[; ])-(cuid=|fuse-cuid=)")
      continue()
    endif()
    set(_rel "${_src}")
    foreach(_root "${CMAKE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}")
      file(RELATIVE_PATH _candidate "${_root}" "${_src}")
      if(NOT _candidate MATCHES "^\\.\\./")
        set(_rel "${_candidate}")
        break()
      endif()
    endforeach()
    string(SHA256 _cuid "${tgt}:${_rel}")
    string(SUBSTRING "${_cuid}" 0 16 _cuid)
    set_property(SOURCE "${_src}" TARGET_DIRECTORY ${tgt} APPEND PROPERTY COMPILE_OPTIONS
      "$<$<STREQUAL:$<TARGET_PROPERTY:NAME>,${tgt}>:-cuid=${_cuid}>")
  endforeach()
endfunction()

# The install side of an emitting binary: the archive file names its link
# writes, from the GPU targets of the configuration. With
# INSTALL_DESTINATION, rules of its own (install(FILES), its component or
# per-GPU components); otherwise a line of the install-time script
# (_kpack_install_binary, below) that installs them beside every installed
# copy of the binary.
function(_kpack_install_rules tgt archs unknown out_code)
  get_target_property(_archive_dir ${tgt} _KPACK_ARCHIVE_DIR)
  get_target_property(_name ${tgt} _KPACK_NAME)
  get_target_property(_single ${tgt} _KPACK_SINGLE_ARCHIVE)
  get_target_property(_destination ${tgt} _KPACK_INSTALL_DESTINATION)
  get_target_property(_component ${tgt} _KPACK_COMPONENT)
  get_target_property(_per_target ${tgt} _KPACK_PER_TARGET_COMPONENTS)
  set(_build_dir "$<TARGET_FILE_DIR:${tgt}>/${_archive_dir}")
  set(_files)
  if(_single)
    set(_files "${_name}.kpack")
  else()
    foreach(_arch IN LISTS archs)
      list(APPEND _files "${_name}_${_arch}.kpack")
    endforeach()
  endif()
  set(${out_code} "" PARENT_SCOPE)
  if(_destination)
    set(_component_args)
    if(_component)
      set(_component_args COMPONENT "${_component}")
    endif()
    if(unknown AND NOT _single)
      if(_per_target)
        message(FATAL_ERROR "kpack_emit(${tgt} PER_TARGET_COMPONENTS): the GPU "
          "targets of ${tgt} are not known at configure time (no "
          "HIP_ARCHITECTURES or --offload-arch, or \"native\"): name them")
      endif()
      # Every archive of the name (the warning says so).
      install(CODE "
        file(GLOB _kpack_archives \"${_build_dir}/${_name}_gfx*.kpack\")
        file(INSTALL \${_kpack_archives}
             DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${_destination}/${_archive_dir}\")"
        ${_component_args})
    elseif(_per_target)
      foreach(_arch IN LISTS archs)
        string(REPLACE ":" "-" _suffix "${_arch}")
        install(FILES "${_build_dir}/${_name}_${_arch}.kpack"
          DESTINATION "${_destination}/${_archive_dir}"
          COMPONENT "${_component}-${_suffix}")
      endforeach()
    elseif(_files)
      list(TRANSFORM _files PREPEND "${_build_dir}/")
      install(FILES ${_files} DESTINATION "${_destination}/${_archive_dir}"
        ${_component_args})
    endif()
    return()
  endif()
  if(_single)
    set(_stale "")
  else()
    set(_stale "${_name}_gfx*.kpack")
  endif()
  set(_all "")
  if(unknown AND NOT _single)
    set(_all "ALL")
  endif()
  set(${out_code}
    "_kpack_install_binary(\"${tgt}\" \"$<TARGET_FILE_NAME:${tgt}>\" \"${_build_dir}\" \"${_archive_dir}\" \"${_files}\" \"${_stale}\" \"${_all}\")\n"
    PARENT_SCOPE)
endfunction()

# The install-time part, written with the binaries' lines into
# <build>/kpack/install-<config>.cmake and included by one install(CODE)
# rule that runs for every component. The install script records every
# file it installs in CMAKE_INSTALL_MANIFEST_FILES (without DESTDIR); an
# installed file whose name is an emitting binary's gets that binary's
# archives beside it, installed with file(INSTALL) as any file. The files
# installed before the rule are handled when it runs; those installed after
# it (a subdirectory's rules come last where CMP0082 is OLD, i.e. projects
# requiring CMake < 3.14) through a watch on the variable. (A function, not
# a variable: this file may be included in a scope the end of the configure
# does not see.)
function(_kpack_install_helpers out)
  set(${out} [==[
# An install script runs with no policy set; functions keep those of their
# definition (IN_LIST, GREATER_EQUAL).
cmake_policy(VERSION 3.7)

function(_kpack_install_binary tgt name build_dir archive_dir files stale all)
  get_property(_count GLOBAL PROPERTY _KPACK_INSTALL_COUNT)
  if(NOT _count)
    set(_count 0)
  endif()
  math(EXPR _count "${_count} + 1")
  set_property(GLOBAL PROPERTY _KPACK_INSTALL_COUNT ${_count})
  set_property(GLOBAL APPEND PROPERTY "_KPACK_INSTALL_BY_NAME_${name}" ${_count})
  foreach(_field tgt name build_dir archive_dir files stale all)
    set_property(GLOBAL PROPERTY "_KPACK_INSTALL_${_count}_${_field}" "${${_field}}")
  endforeach()
endfunction()

function(_kpack_install_entry id installed_dir)
  foreach(_field tgt name build_dir archive_dir files stale all)
    get_property(_${_field} GLOBAL PROPERTY "_KPACK_INSTALL_${id}_${_field}")
  endforeach()
  set(_sources)
  if(_all)
    file(GLOB _sources "${_build_dir}/${_stale}")
  else()
    foreach(_file IN LISTS _files)
      if(NOT EXISTS "${_build_dir}/${_file}")
        message(FATAL_ERROR "kpack: ${_build_dir}/${_file} not found: the "
          "configuration compiles ${_tgt} for that GPU target, but its link "
          "wrote no such archive; build (cmake --build) before installing")
      endif()
      list(APPEND _sources "${_build_dir}/${_file}")
    endforeach()
    if(_stale)
      get_property(_warned GLOBAL PROPERTY "_KPACK_INSTALL_${id}_warned")
      file(GLOB _found "${_build_dir}/${_stale}")
      foreach(_archive IN LISTS _found)
        get_filename_component(_file "${_archive}" NAME)
        if(NOT _file IN_LIST _files AND NOT _warned)
          string(LENGTH "${_name}_" _skip)
          string(SUBSTRING "${_file}" ${_skip} -1 _arch)
          string(REGEX REPLACE "\\.kpack$" "" _arch "${_arch}")
          message(STATUS "kpack: not installing ${_archive}: ${_arch} is not a "
            "GPU target of ${_tgt} in this configuration (an archive of an "
            "earlier build)")
        endif()
      endforeach()
      set_property(GLOBAL PROPERTY "_KPACK_INSTALL_${id}_warned" TRUE)
    endif()
  endif()
  if(_sources)
    file(INSTALL ${_sources} DESTINATION "${installed_dir}/${_archive_dir}")
    set(CMAKE_INSTALL_MANIFEST_FILES "${CMAKE_INSTALL_MANIFEST_FILES}" PARENT_SCOPE)
  endif()
endfunction()

# The manifest entries from index _KPACK_INSTALL_SEEN on are new; a list
# shorter than that (a file(INSTALL) in a function or block scope of someone
# else's install code, whose entries went with that scope) has one new entry.
function(_kpack_install_scan manifest)
  set(CMAKE_INSTALL_MANIFEST_FILES "${manifest}")
  get_property(_seen GLOBAL PROPERTY _KPACK_INSTALL_SEEN)
  list(LENGTH manifest _length)
  if(NOT _seen)
    set(_seen 0)
  elseif(_seen GREATER_EQUAL _length AND _length GREATER 0)
    math(EXPR _seen "${_length} - 1")
  endif()
  set(_new)
  if(_length GREATER _seen)
    math(EXPR _last "${_length} - 1")
    foreach(_i RANGE ${_seen} ${_last})
      list(GET manifest ${_i} _path)
      list(APPEND _new "${_path}")
    endforeach()
  endif()
  foreach(_path IN LISTS _new)
    get_filename_component(_name "${_path}" NAME)
    get_property(_ids GLOBAL PROPERTY "_KPACK_INSTALL_BY_NAME_${_name}")
    foreach(_id IN LISTS _ids)
      get_filename_component(_dir "${_path}" DIRECTORY)
      _kpack_install_entry(${_id} "${_dir}")
    endforeach()
  endforeach()
  list(LENGTH CMAKE_INSTALL_MANIFEST_FILES _length)
  set_property(GLOBAL PROPERTY _KPACK_INSTALL_SEEN ${_length})
  set(CMAKE_INSTALL_MANIFEST_FILES "${CMAKE_INSTALL_MANIFEST_FILES}" PARENT_SCOPE)
endfunction()

# Called for every change of CMAKE_INSTALL_MANIFEST_FILES, ours included
# (file(INSTALL) of the archives, the PARENT_SCOPE updates): those are
# ignored while busy.
function(_kpack_install_watch variable access value)
  get_property(_busy GLOBAL PROPERTY _KPACK_INSTALL_BUSY)
  if(_busy OR NOT access STREQUAL "MODIFIED_ACCESS")
    return()
  endif()
  set_property(GLOBAL PROPERTY _KPACK_INSTALL_BUSY TRUE)
  _kpack_install_scan("${value}")
  if(NOT CMAKE_INSTALL_MANIFEST_FILES STREQUAL value)
    set(CMAKE_INSTALL_MANIFEST_FILES "${CMAKE_INSTALL_MANIFEST_FILES}" PARENT_SCOPE)
  endif()
  set_property(GLOBAL PROPERTY _KPACK_INSTALL_BUSY FALSE)
endfunction()

function(_kpack_install_start)
  set_property(GLOBAL PROPERTY _KPACK_INSTALL_BUSY TRUE)
  _kpack_install_scan("${CMAKE_INSTALL_MANIFEST_FILES}")
  set(CMAKE_INSTALL_MANIFEST_FILES "${CMAKE_INSTALL_MANIFEST_FILES}" PARENT_SCOPE)
  set_property(GLOBAL PROPERTY _KPACK_INSTALL_BUSY FALSE)
  variable_watch(CMAKE_INSTALL_MANIFEST_FILES _kpack_install_watch)
endfunction()
]==] PARENT_SCOPE)
endfunction()

# The end of the top-level configure: ROCM_KPACK_EMIT's targets, then for
# every emitting target its objects' settings and its install rules, and one
# line naming them.
function(_kpack_finalize)
  if(ROCM_KPACK_EMIT)
    _kpack_emit_all()
  endif()
  get_property(_targets GLOBAL PROPERTY _KPACK_EMIT_TARGETS)
  if(NOT _targets)
    if(NOT ROCM_KPACK_EMIT)
      foreach(_var CMAKE_PROJECT_TOP_LEVEL_INCLUDES CMAKE_PROJECT_INCLUDE
                   CMAKE_PROJECT_${CMAKE_PROJECT_NAME}_INCLUDE)
        if("${${_var}}" MATCHES "KpackEmit\\.cmake")
          message(WARNING "kpack: ${_var} includes KpackEmit.cmake, but "
            "ROCM_KPACK_EMIT is OFF and no target calls kpack_emit(): nothing "
            "emits .kpack archives (configure with -DROCM_KPACK_EMIT=ON)")
          break()
        endif()
      endforeach()
    endif()
    return()
  endif()
  list(REMOVE_DUPLICATES _targets)
  set(_binaries)
  set(_ready)
  set(_all_archs)
  set(_code "")
  foreach(tgt IN LISTS _targets)
    _kpack_object_settings(${tgt})
    get_target_property(_type ${tgt} TYPE)
    if(_type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY)$")
      _kpack_target_device_info(${tgt} _info)
      if(_info_HIP)
        list(APPEND _ready ${tgt})
        list(APPEND _all_archs ${_info_ARCHS})
      endif()
      continue()
    endif()
    _kpack_link_device_info(${tgt} _info)
    if(_info_HIP)
      list(APPEND _binaries ${tgt})
      list(APPEND _all_archs ${_info_ARCHS})
    endif()
    if(_info_UNKNOWN)
      message(WARNING "kpack: the GPU targets of ${tgt} are not known at "
        "configure time (no HIP_ARCHITECTURES or --offload-arch, or \"native\"): "
        "its install installs every archive in its archive directory, stale "
        "ones included; name the GPU targets")
    endif()
    _kpack_install_rules(${tgt} "${_info_ARCHS}" ${_info_UNKNOWN} _line)
    string(APPEND _code "${_line}")
  endforeach()
  list(REMOVE_DUPLICATES _all_archs)
  list(LENGTH _all_archs _count)
  set(_what "GPU targets")
  if(_count EQUAL 1)
    set(_what "GPU target")
  endif()
  if(_binaries)
    list(JOIN _binaries ", " _list)
    set(_line "kpack: emitting ${_list} (${_count} ${_what})")
    if(_ready)
      list(JOIN _ready ", " _list)
      string(APPEND _line "; kpack-ready objects: ${_list}")
    endif()
    message(STATUS "${_line}")
  elseif(_ready)
    list(JOIN _ready ", " _list)
    message(STATUS "kpack: kpack-ready objects: ${_list} (${_count} ${_what})")
  elseif(ROCM_KPACK_EMIT)
    message(WARNING "kpack: ROCM_KPACK_EMIT is ON, but no target of "
      "${CMAKE_PROJECT_NAME} compiles GPU code that kpack can see (HIP sources, "
      "or C++ compiled with -x hip): nothing emits .kpack archives")
  endif()

  if(_code)
    set(_script "${CMAKE_BINARY_DIR}/kpack/install-$<CONFIG>.cmake")
    _kpack_install_helpers(_helpers)
    file(GENERATE OUTPUT "${_script}"
      CONTENT "# Generated by KpackEmit.cmake: installs the .kpack archives of the\n# emitting binaries beside them.\n${_helpers}${_code}_kpack_install_start()\n")
    set(_args)
    if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.21)
      set(_args ALL_COMPONENTS)
    else()
      message(WARNING "kpack: CMake ${CMAKE_VERSION} has no install(CODE ... "
        "ALL_COMPONENTS) (3.21): the archives are installed only when the "
        "default component is")
    endif()
    install(CODE "
      set(_kpack_script \"${CMAKE_BINARY_DIR}/kpack/install-\${CMAKE_INSTALL_CONFIG_NAME}.cmake\")
      if(NOT EXISTS \"\${_kpack_script}\")
        # cmake --install --config <other> of a single-configuration build.
        file(GLOB _kpack_script \"${CMAKE_BINARY_DIR}/kpack/install-*.cmake\")
        list(GET _kpack_script 0 _kpack_script)
      endif()
      include(\"\${_kpack_script}\")" ${_args})
  endif()
endfunction()

get_property(_kpack_deferred GLOBAL PROPERTY _KPACK_FINALIZE_DEFERRED)
if(NOT _kpack_deferred)
  set_property(GLOBAL PROPERTY _KPACK_FINALIZE_DEFERRED ON)
  cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _kpack_finalize)
endif()

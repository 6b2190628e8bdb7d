# KpackHipLanguage.cmake: lets CMake's HIP language (project(... LANGUAGES
# HIP), enable_language(HIP)) configure against a HIP installation that has no
# CMake "ROCm root" shape, such as Debian's packages (headers in /usr/include,
# libamdhip64 and the device libraries under lib/<multiarch>, no
# lib/cmake/hip-lang) with clang (docs/cmake.md, "CMake's HIP language").
#
# One line, before the first project() call enables HIP:
#
#   cmake -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<prefix>/<libdir>/cmake/rocm-kpack/KpackHipLanguage.cmake ...
#
# (CMAKE_PROJECT_TOP_LEVEL_INCLUDES is a list: it composes with other
# files, e.g. TheRock's project_init). It looks at the HIP installation
# the HIP compiler reports ("Found HIP installation: <dir>", what CMake's own
# lookup of the ROCm root uses) and, only if <dir>/lib/cmake/hip-lang is
# missing there:
#   - sets CMAKE_HIP_COMPILER_ROCM_ROOT to hip-lang-root/ beside this file,
#     whose hip-lang package describes that installation (hip-lang::device,
#     libamdhip64, its headers);
#   - appends to CMAKE_HIP_FLAGS what the compiler cannot find by itself:
#     --rocm-device-lib-path=<dir> naming the installation's device
#     libraries (Debian's lib/<multiarch>/amdgcn/bitcode is a place clang
#     does not search), and
#     -mcode-object-version=<n> when they lack the code object ABI the
#     compiler defaults to (ROCm 5.2's libraries stop at 5; clang 22 defaults
#     to 6) and are linked (not with -nogpulib). Flags already there (from
#     -DCMAKE_HIP_FLAGS or HIPFLAGS) are kept and never duplicated.
# Generic targets (gfx11-generic, ...) need code object version 6: with
# device libraries that stop below, the configure stops naming them, for
# CMAKE_HIP_ARCHITECTURES and --offload-arch= in the flags at once, for the
# targets' own HIP_ARCHITECTURES at the end of the configure.
# A real ROCm root, or a CMAKE_HIP_COMPILER_ROCM_ROOT given by the user, is
# left alone. Nothing outside the build tree is written.

include_guard(GLOBAL)

set(_kpack_hip_adapter_root "${CMAKE_CURRENT_LIST_DIR}/hip-lang-root")

# Stops the configure when generic processors are among <archs> but the
# code object version is <version> (< 6): the version the device libraries
# in <bitcode> stop at.
function(_kpack_hip_check_generic archs version bitcode)
  set(_generic ${archs})
  list(FILTER _generic INCLUDE REGEX "-generic(:|$)")
  if(_generic AND version LESS 6)
    list(REMOVE_DUPLICATES _generic)
    list(JOIN _generic ", " _generic)
    message(FATAL_ERROR "KpackHipLanguage: ${_generic} needs code object "
      "version 6, and the device libraries in ${bitcode} stop at ${version} "
      "(-mcode-object-version=${version}, no oclc_abi_version_600.bc): build "
      "without them (-nogpulib in CMAKE_HIP_FLAGS), give device libraries that "
      "have version 6 (--rocm-device-lib-path in CMAKE_HIP_FLAGS), or name "
      "processors instead of generic targets")
  endif()
endfunction()

# The end of the top-level configure: the targets' own HIP_ARCHITECTURES
# (a project may set them after the module ran) against the version in
# CMAKE_HIP_FLAGS, when the module set the project up.
function(_kpack_hip_language_check)
  if(NOT CMAKE_HIP_COMPILER_ROCM_ROOT STREQUAL _kpack_hip_adapter_root
     OR NOT CMAKE_HIP_FLAGS MATCHES "-mcode-object-version=([0-9]+)")
    return()
  endif()
  set(_version ${CMAKE_MATCH_1})
  set(_bitcode "the device library path")
  if(CMAKE_HIP_FLAGS MATCHES "--(rocm|hip)-device-lib-path=([^ ]+)")
    set(_bitcode "${CMAKE_MATCH_2}")
  endif()
  set(_archs)
  set(_dirs "${CMAKE_SOURCE_DIR}")
  while(_dirs)
    list(POP_FRONT _dirs _dir)
    get_property(_subdirs DIRECTORY "${_dir}" PROPERTY SUBDIRECTORIES)
    list(APPEND _dirs ${_subdirs})
    get_property(_targets DIRECTORY "${_dir}" PROPERTY BUILDSYSTEM_TARGETS)
    foreach(_target IN LISTS _targets)
      get_target_property(_type ${_target} TYPE)
      if(NOT _type STREQUAL "INTERFACE_LIBRARY" AND NOT _type STREQUAL "UTILITY")
        get_target_property(_target_archs ${_target} HIP_ARCHITECTURES)
        if(_target_archs)
          list(APPEND _archs ${_target_archs})
        endif()
      endif()
    endforeach()
  endwhile()
  _kpack_hip_check_generic("${_archs}" ${_version} "${_bitcode}")
endfunction()

function(_kpack_hip_language_setup)
  if(CMAKE_HIP_COMPILER_ROCM_ROOT
     AND NOT CMAKE_HIP_COMPILER_ROCM_ROOT STREQUAL _kpack_hip_adapter_root)
    return()
  endif()

  # The compiler CMake will use: CMAKE_HIP_COMPILER, else $HIPCXX, else the
  # first clang++ (CMakeDetermineHIPCompiler's order).
  set(_compiler "${CMAKE_HIP_COMPILER}")
  if(NOT _compiler AND NOT "$ENV{HIPCXX}" STREQUAL "")
    separate_arguments(_hipcxx NATIVE_COMMAND "$ENV{HIPCXX}")
    list(GET _hipcxx 0 _compiler)
  endif()
  if(NOT _compiler)
    find_program(_compiler NAMES clang++ NO_CACHE)
  endif()
  if(NOT _compiler)
    return()
  endif()
  if(NOT IS_ABSOLUTE "${_compiler}")
    find_program(_compiler_path NAMES "${_compiler}" NO_CACHE)
    if(_compiler_path)
      set(_compiler "${_compiler_path}")
    endif()
  endif()

  separate_arguments(_user_flags NATIVE_COMMAND "$ENV{HIPFLAGS} ${CMAKE_HIP_FLAGS}")
  execute_process(COMMAND "${_compiler}" ${_user_flags} -v -print-targets
    RESULT_VARIABLE _result OUTPUT_QUIET ERROR_VARIABLE _err)
  if(NOT _result EQUAL 0 OR NOT _err MATCHES "Found HIP installation: *([^,\n]*)[,\n]")
    return()
  endif()
  file(TO_CMAKE_PATH "${CMAKE_MATCH_1}" _hip)
  if(EXISTS "${_hip}/lib/cmake/hip-lang/hip-lang-config.cmake")
    return()
  endif()

  set(CMAKE_HIP_COMPILER_ROCM_ROOT "${_kpack_hip_adapter_root}" CACHE PATH
    "ROCm root of CMake's HIP language (the rocm-kpack hip-lang adapter for ${_hip})")

  # The device libraries: where clang looks by itself, else the multiarch
  # directory Debian uses.
  file(GLOB _ocml
    "${_hip}/amdgcn/bitcode/ocml.bc"
    "${_hip}/lib/amdgcn/bitcode/ocml.bc"
    "${_hip}/lib/*/amdgcn/bitcode/ocml.bc"
    "${_hip}/lib64/amdgcn/bitcode/ocml.bc")
  set(_add)
  set(_flags "${CMAKE_HIP_FLAGS}")
  if(NOT DEFINED CACHE{CMAKE_HIP_FLAGS})
    string(STRIP "$ENV{HIPFLAGS} ${CMAKE_HIP_FLAGS_INIT}" _flags)
  endif()
  if(_ocml)
    list(GET _ocml 0 _ocml)
    get_filename_component(_bitcode "${_ocml}" DIRECTORY)
    if(NOT _flags MATCHES "--(rocm|hip)-device-lib-path")
      list(APPEND _add "--rocm-device-lib-path=${_bitcode}")
    endif()
    # Only when the device libraries are linked (no -nogpulib): otherwise
    # their ABI does not matter and clang's default (6) serves every target.
    if(NOT EXISTS "${_bitcode}/oclc_abi_version_600.bc"
       AND NOT _flags MATCHES "-mcode-object-version"
       AND NOT _flags MATCHES "(^| )-nogpulib( |$)")
      file(GLOB _abis RELATIVE "${_bitcode}" "${_bitcode}/oclc_abi_version_*.bc")
      set(_best 0)
      foreach(_abi IN LISTS _abis)
        if(_abi MATCHES "^oclc_abi_version_([0-9]+)00\\.bc$" AND CMAKE_MATCH_1 GREATER _best)
          set(_best ${CMAKE_MATCH_1})
        endif()
      endforeach()
      if(_best GREATER 0)
        # The generic processors exist from code object version 6 on: a
        # version below cannot build them (the backend stops).
        set(_archs ${CMAKE_HIP_ARCHITECTURES})
        string(REGEX MATCHALL "--offload-arch=[^ ]+" _options "${_flags}")
        foreach(_option IN LISTS _options)
          string(REGEX REPLACE "^--offload-arch=" "" _option "${_option}")
          string(REPLACE "," ";" _option "${_option}")
          list(APPEND _archs ${_option})
        endforeach()
        _kpack_hip_check_generic("${_archs}" ${_best} "${_bitcode}")
        list(APPEND _add "-mcode-object-version=${_best}")
      endif()
    endif()
  endif()
  list(JOIN _add " " _add)
  if(_add)
    string(STRIP "${_flags} ${_add}" _flags)
  endif()
  if(_add OR NOT DEFINED CACHE{CMAKE_HIP_FLAGS})
    set(CMAKE_HIP_FLAGS "${_flags}" CACHE STRING
      "Flags used by the HIP compiler during all build types." FORCE)
  endif()
  message(STATUS "KpackHipLanguage: ${_hip} has no lib/cmake/hip-lang: "
    "CMAKE_HIP_COMPILER_ROCM_ROOT=${_kpack_hip_adapter_root}")
  if(_add)
    message(STATUS "KpackHipLanguage: CMAKE_HIP_FLAGS += ${_add}")
  endif()
endfunction()

_kpack_hip_language_setup()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _kpack_hip_language_check)

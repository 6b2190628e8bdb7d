# hip-lang package of rocm-kpack's adapter ROCm root (docs/cmake.md, "CMake's
# HIP language"). CMake's HIP language loads
# ${CMAKE_HIP_COMPILER_ROCM_ROOT}/lib/cmake/hip-lang/hip-lang-config.cmake
# and links every HIP target with the target named by
# _CMAKE_HIP_DEVICE_RUNTIME_TARGET. KpackHipLanguage.cmake points
# CMAKE_HIP_COMPILER_ROCM_ROOT here when the HIP installation the compiler
# uses has no such package (Debian's libamdhip64-dev). This package describes
# that installation:
#
#   hip-lang::amdhip64  the HIP runtime library (<hip>/lib, lib64 or
#                       lib/<multiarch>), with <hip>/include for HIP sources
#   hip-lang::host      links hip-lang::amdhip64
#   hip-lang::device    hip-lang::host, plus --hip-link when HIP links
#
# <hip> is the installation the compiler reports ("Found HIP installation",
# with CMAKE_HIP_FLAGS, so --rocm-path/--hip-path there count), the same
# lookup CMake makes for the ROCm root; it is repeated here because CMake
# loads this file in its own try_compile projects too.

if(TARGET hip-lang::device)
  set(_CMAKE_HIP_DEVICE_RUNTIME_TARGET "hip-lang::device")
  return()
endif()

function(_kpack_hip_lang_locate out_prefix out_library)
  separate_arguments(_flags NATIVE_COMMAND "${CMAKE_HIP_FLAGS}")
  execute_process(COMMAND "${CMAKE_HIP_COMPILER}" ${_flags} -v -print-targets
    RESULT_VARIABLE _result OUTPUT_QUIET ERROR_VARIABLE _err)
  if(NOT _result EQUAL 0 OR NOT _err MATCHES "Found HIP installation: *([^,\n]*)[,\n]")
    message(FATAL_ERROR "hip-lang (rocm-kpack adapter, ${CMAKE_CURRENT_LIST_DIR}): "
      "the HIP compiler ${CMAKE_HIP_COMPILER} reports no HIP installation "
      "(no 'Found HIP installation' in '${CMAKE_HIP_COMPILER} -v -print-targets'); "
      "give it one with --rocm-path=<dir> in CMAKE_HIP_FLAGS")
  endif()
  file(TO_CMAKE_PATH "${CMAKE_MATCH_1}" _hip)
  file(GLOB _libs LIST_DIRECTORIES false
    "${_hip}/lib/libamdhip64.so"
    "${_hip}/lib64/libamdhip64.so"
    "${_hip}/lib/*/libamdhip64.so")
  if(NOT _libs)
    message(FATAL_ERROR "hip-lang (rocm-kpack adapter, ${CMAKE_CURRENT_LIST_DIR}): "
      "no libamdhip64.so in ${_hip}/lib, lib64 or lib/<multiarch> (the HIP "
      "installation ${CMAKE_HIP_COMPILER} reports); on Debian it comes from "
      "the package libamdhip64-dev")
  endif()
  list(GET _libs 0 _lib)
  set(${out_prefix} "${_hip}" PARENT_SCOPE)
  set(${out_library} "${_lib}" PARENT_SCOPE)
endfunction()

_kpack_hip_lang_locate(_kpack_hip_prefix _kpack_hip_library)

add_library(hip-lang::amdhip64 SHARED IMPORTED)
set_target_properties(hip-lang::amdhip64 PROPERTIES
  IMPORTED_LOCATION "${_kpack_hip_library}"
  INTERFACE_COMPILE_DEFINITIONS "$<$<COMPILE_LANGUAGE:HIP>:__HIP_ROCclr__=1>"
  INTERFACE_INCLUDE_DIRECTORIES "$<$<COMPILE_LANGUAGE:HIP>:${_kpack_hip_prefix}/include>")
add_library(hip-lang::host INTERFACE IMPORTED)
set_target_properties(hip-lang::host PROPERTIES
  INTERFACE_LINK_LIBRARIES hip-lang::amdhip64)
add_library(hip-lang::device INTERFACE IMPORTED)
set_target_properties(hip-lang::device PROPERTIES
  INTERFACE_LINK_LIBRARIES hip-lang::host
  INTERFACE_LINK_OPTIONS "$<$<LINK_LANGUAGE:HIP>:--hip-link>")
unset(_kpack_hip_prefix)
unset(_kpack_hip_library)

set(hip-lang_FOUND TRUE)
set(_CMAKE_HIP_DEVICE_RUNTIME_TARGET "hip-lang::device")

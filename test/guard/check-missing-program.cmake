# The guard of cmake/KpackPrograms.cmake: a configuration with a required
# program missing fails and names the program and its Debian package.
# cmake -DKPACK_SOURCE_DIR=... -DKPACK_LLVM_BIN=... -DWORK_DIR=...
#       -DGUARD_GENERATOR=... -DGUARD_MAKE_PROGRAM=... -P <this>
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/empty")

# configure(<name> <expect: ok|fail> <regex> <cmake -D arguments>...)
function(configure name expect regex)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${KPACK_SOURCE_DIR}/test/guard/project
            -B ${WORK_DIR}/${name} -G ${GUARD_GENERATOR}
            -DCMAKE_MAKE_PROGRAM=${GUARD_MAKE_PROGRAM} -DKPACK_SOURCE_DIR=${KPACK_SOURCE_DIR}
            -DKPACK_LLVM_BIN=${KPACK_LLVM_BIN} -DGUARD_HOST_PROGRAM=sh ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect STREQUAL "ok" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: configuration failed:\n${out}${err}")
  elseif(expect STREQUAL "fail" AND rc EQUAL 0)
    message(FATAL_ERROR "${name}: configuration succeeded with a program missing:\n${out}")
  endif()
  # CMake wraps long messages: compare with whitespace runs as one space.
  string(REGEX REPLACE "[ \t\n]+" " " text "${out}${err}")
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${name}: output does not match '${regex}':\n${out}${err}")
  endif()
  message(STATUS "${name}: ok")
endfunction()

# Everything there: the absolute paths are recorded for lit.
configure(all-there ok "kpack_programs\\[\"FileCheck\"\\] = \\(\"${KPACK_LLVM_BIN}/FileCheck\", \"llvm-22-tools\"\\)")
# LLVM 22's directory without FileCheck.
configure(llvm-dir-without fail
  "required program 'FileCheck' not found in ${WORK_DIR}/empty .*Debian package llvm-22-tools"
  -DKPACK_LLVM_BIN=${WORK_DIR}/empty)
# A path found earlier (cached) that no longer exists.
configure(cached-path-gone fail
  "required program 'FileCheck' not found .*/nonexistent/FileCheck.*Debian package llvm-22-tools"
  -DKPACK_PROGRAM_FILECHECK=/nonexistent/FileCheck)
# A system program that is on no path.
configure(not-on-path fail
  "required program 'kpack-guard-no-such-program' not found .*Debian package guard-package"
  -DGUARD_HOST_PROGRAM=kpack-guard-no-such-program)

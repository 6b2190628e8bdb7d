# External programs and system files: everything the build, scripts/demo.sh
# and the tests run or read that the build does not produce. Each is looked up
# once, at configure time, by an explicit lookup that stops the configuration
# with the program's name and the Debian package that provides it (all of
# them installed by scripts/install-deps.sh). The tests get the absolute paths
# (lit.site.cfg.py, unit-test compile definitions) and never search the host
# PATH at test time, so a missing program fails the run instead of being
# skipped or replaced by another one (docs/testing.md).

# kpack_require_program(<name> <package> [LLVM]): finds <name>, in LLVM 22's
# bin directory (KPACK_LLVM_BIN) with LLVM, else in the directories Debian's
# packages install programs to (not the user's PATH: a pyenv or /usr/local
# program is no package of install-deps.sh), and
# caches its absolute path in KPACK_PROGRAM_<NAME> (clang++ -> CLANGXX,
# ld.lld -> LD_LLD); a cached path that no longer exists is an error too.
function(kpack_require_program name package)
  cmake_parse_arguments(ARG "LLVM" "" "" ${ARGN})
  string(REPLACE "+" "X" var "${name}")
  string(MAKE_C_IDENTIFIER "${var}" var)
  string(TOUPPER "KPACK_PROGRAM_${var}" var)
  if(ARG_LLVM)
    find_program(${var} ${name} PATHS "${KPACK_LLVM_BIN}" NO_DEFAULT_PATH)
  else()
    find_program(${var} ${name} PATHS /usr/bin /bin /usr/sbin /sbin NO_DEFAULT_PATH)
  endif()
  set(path "${${var}}")
  if(NOT path OR NOT EXISTS "${path}" OR IS_DIRECTORY "${path}")
    if(ARG_LLVM)
      set(where " in ${KPACK_LLVM_BIN}")
    endif()
    message(FATAL_ERROR
      "required program '${name}' not found${where} (${var}=${path}); "
      "it comes from the Debian package ${package}: run scripts/install-deps.sh")
  endif()
  get_property(known GLOBAL PROPERTY KPACK_REQUIRED_PROGRAMS)
  if(NOT "${name}|${path}|${package}" IN_LIST known)
    set_property(GLOBAL APPEND PROPERTY KPACK_REQUIRED_PROGRAMS "${name}|${path}|${package}")
  endif()
endfunction()

# kpack_require_file(<var> <path> <package>): a system file a test reads (a
# real ROCm library, ROCm's device libraries); caches <path> in <var>.
function(kpack_require_file var path package)
  set(${var} "${path}" CACHE FILEPATH "Needed by the tests (Debian package ${package})")
  if(NOT EXISTS "${${var}}")
    message(FATAL_ERROR
      "required file '${${var}}' not found (${var}); "
      "it comes from the Debian package ${package}: run scripts/install-deps.sh")
  endif()
  set_property(GLOBAL APPEND PROPERTY KPACK_REQUIRED_FILES "${var}|${${var}}|${package}")
endfunction()

# kpack_required_paths_for_lit(<out>): Python lines for lit.site.cfg.py that
# fill config.kpack_programs / config.kpack_files ({name: (path, package)}).
function(kpack_required_paths_for_lit out)
  set(lines "")
  foreach(kind programs files)
    string(TOUPPER "KPACK_REQUIRED_${kind}" prop)
    get_property(entries GLOBAL PROPERTY ${prop})
    foreach(e ${entries})
      string(REPLACE "|" ";" e "${e}")
      list(GET e 0 name)
      list(GET e 1 path)
      list(GET e 2 package)
      string(APPEND lines "config.kpack_${kind}[\"${name}\"] = (\"${path}\", \"${package}\")\n")
    endforeach()
  endforeach()
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# lit configuration for the kpack toolchain.
import os
import lit.formats
import lit.util

config.name = "kpack"
config.test_format = lit.formats.ShTest(not lit.util.which("bash") is None)
config.suffixes = [".test", ".c", ".cpp", ".hip"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "README.md"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kpack_obj_root, "test", "lit")

# Every program a test runs is the build's own or was found by CMake at
# configure time (cmake/KpackPrograms.cmake, docs/testing.md); a missing one
# stops the run here, naming it, instead of skipping tests or resolving to
# some other program on the host PATH.
for name, (path, package) in sorted(config.kpack_programs.items()):
    if not os.access(path, os.X_OK):
        lit_config.fatal("required program '%s' not found at %s (Debian package %s): "
                         "run scripts/install-deps.sh and reconfigure" % (name, path, package))
for name, (path, package) in sorted(config.kpack_files.items()):
    if not os.path.exists(path):
        lit_config.fatal("required file %s not found (Debian package %s): "
                         "run scripts/install-deps.sh" % (path, package))
if not os.path.isdir(config.upstream_testdata):
    lit_config.fatal("upstream's sample archives not found in %s: the tests need "
                     "../shared beside the clone" % config.upstream_testdata)
# The build's outputs the tests run or load (by these names on PATH, or by the
# substitutions below).
build_outputs = [os.path.join(config.kpack_tools_dir, t) for t in
                 ["kpack", "kpack-convert", "kpack-ready", "kpack-offload-wrapper",
                  "hipcc", "ld.kpack"]]
build_outputs += [os.path.join(config.kpack_lib_dir, l) for l in
                  ["librocm_kpack.so", "librocm_kpack_hip.so", "libhip_standin.so",
                   "KpackPlugin.so", "hip-standin-as-amdhip64/libamdhip64.so.5"]]
build_outputs.append(os.path.join(config.kpack_obj_root, "libexec", "kpack", "ld.lld"))
for path in build_outputs:
    if not os.path.exists(path):
        lit_config.fatal("build output %s not found: build the whole project "
                         "(scripts/build.sh) before running lit" % path)

# `--param kpack_sanitized_build=<dir>` (scripts/test.sh): the libraries the
# test programs load (the shim, the stand-in, librocm_kpack: %kpack_lib,
# %shim, %standin...) come from that sanitizer build (-DKPACK_SANITIZE, tools
# off), the tools (kpack, kpack-convert, ...) from this one; the programs the
# tests link get that build's sanitizers (%sanitize_link), and the outputs go
# below that build. Meant for test/lit/shim.
sanitized_build = lit_config.params.get("kpack_sanitized_build", "")
if sanitized_build:
    sanitized_build = os.path.abspath(sanitized_build)
    sanitize = ""
    try:
        with open(os.path.join(sanitized_build, "CMakeCache.txt")) as cache:
            for line in cache:
                if line.startswith("KPACK_SANITIZE:"):
                    sanitize = line.split("=", 1)[1].strip()
    except OSError:
        lit_config.fatal("kpack_sanitized_build: no CMakeCache.txt in %s" % sanitized_build)
    if not sanitize:
        lit_config.fatal("kpack_sanitized_build: %s is not a -DKPACK_SANITIZE build" % sanitized_build)
    config.sanitize = sanitize
    config.kpack_lib_dir = os.path.join(sanitized_build, "lib")
    for lib in ["librocm_kpack.so", "librocm_kpack_hip.so", "libhip_standin.so",
                "hip-standin-as-amdhip64/libamdhip64.so.5"]:
        if not os.path.exists(os.path.join(config.kpack_lib_dir, lib)):
            lit_config.fatal("build output %s not found in the sanitizer build %s"
                             % (lib, sanitized_build))
    config.test_exec_root = os.path.join(sanitized_build, "test", "lit")

# `--param kpack_plain_libs=<dir>` (scripts/test.sh), in a -DKPACK_SANITIZE
# build with the tools: the tools (kpack, ld.kpack, hipcc, kpack-ready,
# kpack-offload-wrapper) run instrumented, from this build, while the
# libraries the test programs load (the stand-in, the shim, librocm_kpack,
# KpackPlugin.so) come from that plain build, so the programs need no
# sanitizer runtime and every test runs, the e2e, wheel and CMake ones
# included. The libraries themselves run instrumented in the unit tests and
# in test/lit/shim with kpack_sanitized_build (docs/testing.md).
plain_libs = lit_config.params.get("kpack_plain_libs", "")
config.sanitized_tools = ""
if plain_libs:
    if sanitized_build:
        lit_config.fatal("kpack_plain_libs and kpack_sanitized_build exclude each other")
    if not config.sanitize:
        lit_config.fatal("kpack_plain_libs: %s is not a -DKPACK_SANITIZE build" % config.kpack_obj_root)
    plain_libs = os.path.abspath(plain_libs)
    config.kpack_lib_dir = os.path.join(plain_libs, "lib")
    for lib in ["librocm_kpack.so", "librocm_kpack_hip.so", "libhip_standin.so",
                "KpackPlugin.so", "hip-standin-as-amdhip64/libamdhip64.so.5"]:
        if not os.path.exists(os.path.join(config.kpack_lib_dir, lib)):
            lit_config.fatal("build output %s not found in the plain build %s"
                             % (lib, plain_libs))
    config.sanitized_tools = config.sanitize
    config.sanitize = ""

# PATH: the build's tools, LLVM 22's, a directory of links to the other
# programs CMake found, then only the base system's /usr/bin and /bin
# (coreutils, bash, sed, awk, grep); never the host's PATH.
programs_dir = os.path.join(config.kpack_obj_root, "test", "lit", "kpack-programs")
os.makedirs(programs_dir, exist_ok=True)
for name, (path, _) in config.kpack_programs.items():
    link = os.path.join(programs_dir, name)
    if os.path.islink(link) and os.readlink(link) == path:
        continue
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(path, link)
config.environment["PATH"] = os.path.pathsep.join(
    [config.kpack_tools_dir, config.llvm_tools_dir, programs_dir, "/usr/bin", "/bin"])
for var in ["HOME", "TMPDIR", "LANG"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
# The loader's environment must not leak into tests.
for var in list(config.environment):
    if var.startswith("ROCM_KPACK_"):
        del config.environment[var]

inputs = os.path.join(config.kpack_src_root, "test", "inputs")
clangxx = config.kpack_programs["clang++"][0]
clang = config.kpack_programs["clang"][0]
# HIP without ROCm: clang-22 with a minimal header (test/inputs/hip_min.h).
hip_flags = "-x hip -nogpuinc -nogpulib -I%s" % inputs
config.substitutions.append(("%inputs", inputs))
config.substitutions.append(("%upstream", config.upstream_testdata))
config.substitutions.append(("%hipcxx", "%s %s" % (clangxx, hip_flags)))
config.substitutions.append(("%clangxx", clangxx))
config.substitutions.append(("%clang", clang))
config.substitutions.append(("%kpack_lib", config.kpack_lib_dir))
config.substitutions.append(("%kpack_src", config.kpack_src_root))
config.substitutions.append(("%kpack_plugin", os.path.join(config.kpack_lib_dir, "KpackPlugin.so")))
# ld.kpack under its ld.lld alias: clang then drives the link (and the HIP
# device link) exactly as for -fuse-ld=lld (docs/ld-kpack.md).
config.substitutions.append(("%fuse_ld_kpack", "-fuse-ld=lld --ld-path=" + os.path.join(config.kpack_obj_root, "libexec", "kpack", "ld.lld")))
# The project's hipcc (utils/hipcc), by absolute path: ROCm's own hipcc may be
# on PATH too.
config.substitutions.append(("%kpack_hipcc", os.path.join(config.kpack_tools_dir, "hipcc")))
# Programs that load the stand-in (or any instrumented library of the build)
# must carry the sanitizer runtime in sanitizer builds: link them with
# %sanitize_link, or link against the stand-in with %standin_link.
# -fsanitize-link-c++-runtime: C programs too, since the shim and the
# stand-in are C++ (UBSan's vptr checks, TSan's operator new). ASan's
# redzones around globals would grow the fat binary wrappers'
# .hipFatBinSegment beyond 24 bytes a wrapper, which the tools reject: off.
sanitize_link = ""
if config.sanitize:
    sanitize_link = ("-Xarch_host -fsanitize=%s -Xarch_host -fsanitize-link-c++-runtime"
                     % config.sanitize)
    if "address" in config.sanitize.split(","):
        sanitize_link += " -Xarch_host -mllvm=-asan-globals=0"
config.substitutions.append(("%sanitize_link", sanitize_link))
config.substitutions.append(("%standin_link", "-fuse-ld=lld -L{0} -lhip_standin -Wl,-rpath,{0} {1}".format(config.kpack_lib_dir, sanitize_link)))
# Directory whose libamdhip64.so.5 is the stand-in, for real ROCm libraries
# (listed before %standin, which is a prefix of it).
config.substitutions.append(("%standin_as_amdhip64", os.path.join(config.kpack_lib_dir, "hip-standin-as-amdhip64")))
config.substitutions.append(("%standin", os.path.join(config.kpack_lib_dir, "libhip_standin.so")))
config.substitutions.append(("%python", config.kpack_programs["python3"][0]))
# For the tests of the guard above (test/lit/guard).
config.substitutions.append(("%kpack_obj", config.kpack_obj_root))
# The build whose librocm_kpack the CMake consumers install (--component
# rocm_kpack): the plain build with kpack_plain_libs.
config.substitutions.append(("%kpack_runtime_obj", plain_libs or config.kpack_obj_root))
config.substitutions.append(("%lit", config.kpack_programs["lit"][0]))

if config.sanitized_tools:
    # The tools' reports fail the test (their exit status), leaks included.
    config.available_features.add("sanitized-tools")
    # Scripts that link test programs take the libraries from here
    # (test/lit/split/Inputs/build_tree.sh).
    config.environment["KPACK_LIT_LIB_DIR"] = config.kpack_lib_dir
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
if config.sanitize:
    config.available_features.add("sanitizer")
    if "thread" in config.sanitize.split(","):
        config.available_features.add("tsan")
    if "address" in config.sanitize.split(","):
        config.available_features.add("asan")
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    # A report fails the program at once. die_after_fork=0: fork children
    # of the multithreaded test programs start threads of their own (the
    # shim's handler), which TSan otherwise refuses.
    config.environment["TSAN_OPTIONS"] = "halt_on_error=1:die_after_fork=0"
# Slow tests over the large real inputs (e.g. converting the 1.3 GB
# librocsparse) run only with `lit --param kpack_long=1` (docs/convert.md).
if lit_config.params.get("kpack_long", "0") not in ("", "0"):
    config.available_features.add("long")

# lit configuration for the kpack toolchain.
import os
import shutil
import lit.formats
import lit.util

config.name = "kpack"
config.test_format = lit.formats.ShTest(not lit.util.which("bash") is None)
config.suffixes = [".test", ".c", ".cpp", ".hip"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "README.md"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kpack_obj_root, "test", "lit")

# Tools: ours first, then LLVM 22's (FileCheck, not, split-file, clang-offload-bundler, ...).
path = os.path.pathsep.join([config.kpack_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.environment["PATH"] = path
for var in ["HOME", "TMPDIR", "LANG"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
# The loader's environment must not leak into tests.
for var in list(config.environment):
    if var.startswith("ROCM_KPACK_"):
        del config.environment[var]

inputs = os.path.join(config.kpack_src_root, "test", "inputs")
clangxx = os.path.join(config.llvm_tools_dir, "clang++")
clang = os.path.join(config.llvm_tools_dir, "clang")
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
if os.path.exists(os.path.join(config.kpack_tools_dir, "hipcc")):
    config.available_features.add("hipcc")
# Programs that load the stand-in (or any instrumented library of the build)
# must carry the sanitizer runtime in sanitizer builds: link them with
# %sanitize_link, or link against the stand-in with %standin_link.
sanitize_link = ("-Xarch_host -fsanitize=%s" % config.sanitize) if config.sanitize else ""
config.substitutions.append(("%sanitize_link", sanitize_link))
config.substitutions.append(("%standin_link", "-fuse-ld=lld -L{0} -lhip_standin -Wl,-rpath,{0} {1}".format(config.kpack_lib_dir, sanitize_link)))
# Directory whose libamdhip64.so.5 is the stand-in, for real ROCm libraries
# (listed before %standin, which is a prefix of it).
config.substitutions.append(("%standin_as_amdhip64", os.path.join(config.kpack_lib_dir, "hip-standin-as-amdhip64")))
config.substitutions.append(("%standin", os.path.join(config.kpack_lib_dir, "libhip_standin.so")))
config.substitutions.append(("%python", "python3"))

if os.path.exists(os.path.join(config.kpack_lib_dir, "libhip_standin.so")):
    config.available_features.add("standin")
# The kpack CLI (utils/kpack), once it is part of the build.
if os.path.exists(os.path.join(config.kpack_tools_dir, "kpack")):
    config.available_features.add("kpack_cli")
for lib, feature in [("/usr/lib/x86_64-linux-gnu/librocrand.so.1.1", "librocrand"),
                     ("/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1", "librocsparse"),
                     ("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", "libamdhip64")]:
    if os.path.exists(lib):
        config.available_features.add(feature)
for tool in ["eu-elflint", "gdb", "strip"]:
    if shutil.which(tool):
        config.available_features.add(tool.replace("-", "_"))
if config.sanitize:
    config.available_features.add("sanitizer")
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
# Host tools used by the runtime's packaging tests (test/lit/runtime).
for tool in ["gcc", "pkg-config"]:
    if shutil.which(tool):
        config.available_features.add(tool)
# Slow tests over the large real inputs (e.g. converting the 1.3 GB
# librocsparse) run only with `lit --param kpack_long=1` (docs/convert.md).
if lit_config.params.get("kpack_long", "0") not in ("", "0"):
    config.available_features.add("long")
# GNU ld, for converter tests on its section layouts (test/lit/convert).
if shutil.which("ld.bfd"):
    config.available_features.add("ld_bfd")

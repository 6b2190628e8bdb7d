//===- hipcc.cpp - HIP compiler driver with --emit-kpack ------------------===//
//
// A small hipcc: forwards to clang++ (HIP sources get -x hip) and, with
// --emit-kpack, compiles host code through KpackPlugin.so and links through
// ld.kpack so that device code goes to .kpack archives instead of the host
// binary (docs/hipcc.md). argv is parsed by hand: everything hipcc does not
// know is passed to clang++ unchanged and in order. --help and --version are
// clang's, followed by hipcc's part; hipcc's own errors follow the
// toolchain's form (kpack/ToolCommandLine.h).
//
//===----------------------------------------------------------------------===//

#include "kpack/KpackReady.h"
#include "kpack/LLVMError.h"
#include "kpack/ToolCommandLine.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Object/Archive.h"
#include "llvm/Object/Binary.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

using namespace llvm;

namespace {

constexpr const char *Tool = "hipcc";

int fail(const Twine &Message) {
  return kpack::reportToolError(Tool, kpack::makeError(Message));
}

int usage(const Twine &Message) {
  return kpack::reportUsageError(Tool, Message);
}

/// What hipcc adds to clang's --help.
void printHipccHelp(raw_ostream &OS) {
  OS << "\nHIPCC OPTIONS (" << kpack::toolVersion(Tool)
     << "; every other argument goes to clang++):\n"
     << "  --emit-kpack              Device code into .kpack archives: "
        "kpack-ready objects; a link\n"
     << "                            writes per-target archives beside the "
        "output\n"
     << "  --emit-kpack=FILE         The same; the link writes one archive "
        "FILE\n"
     << "  --emit-kpack-dir=DIR      The same; the link writes "
        "DIR/<output name>_<target id>.kpack\n"
     << "  --amdgpu-target=T         ROCm hipcc's spelling of "
        "--offload-arch=T\n"
     << "ENVIRONMENT: HIP_CLANG_PATH, ROCM_PATH, HIPCC_COMPILE_FLAGS_APPEND, "
        "HIPCC_LINK_FLAGS_APPEND,\n"
     << "  HIPCC_VERBOSE (docs/hipcc.md)\n"
     << kpack::ExitStatusHelp
     << "  A compile or link that clang++ runs exits with clang++'s "
        "status.\n";
}

/// clang options whose value is the next argument (so it is not a source).
bool takesSeparateValue(StringRef A) {
  static const StringRef Names[] = {
      "-o",          "-I",           "-D",        "-U",
      "-L",          "-l",           "-include",  "-isystem",
      "-x",          "-MF",          "-MT",       "-MQ",
      "-Xlinker",    "-Xarch_host",  "-Xarch_device", "-Xclang",
      "-mllvm",      "-target",      "-isysroot", "--sysroot",
      "-idirafter",  "-iquote",      "-imacros",  "-Xoffload-linker",
      "-Xassembler", "-Xpreprocessor", "-z",      "-u",
      "-T",          "-arch",        "-iprefix",  "-iwithprefix"};
  return is_contained(Names, A);
}

/// Sources hipcc compiles as HIP, like ROCm's hipcc (C++ sources too).
bool isHipSource(StringRef Path) {
  StringRef Ext = sys::path::extension(Path);
  return is_contained({".hip", ".cu", ".cpp", ".cc", ".cxx", ".c++", ".C"},
                      Ext);
}

bool isSource(StringRef Path) {
  return isHipSource(Path) ||
         is_contained({".c", ".s", ".S", ".ll", ".bc"},
                      sys::path::extension(Path));
}

/// Splits an environment variable's value on blanks.
std::vector<std::string> envFlags(const char *Name) {
  std::vector<std::string> Out;
  std::optional<std::string> V = sys::Process::GetEnv(Name);
  if (!V)
    return Out;
  SmallVector<StringRef, 8> Parts;
  StringRef(*V).split(Parts, ' ', -1, /*KeepEmpty=*/false);
  for (StringRef P : Parts)
    Out.push_back(P.str());
  return Out;
}

/// Whether \p Bin is an object with key records (kpack/KpackReady.h), or an
/// archive with such a member.
bool holdsKpackReady(object::Binary &Bin) {
  if (auto *Obj = dyn_cast<object::ObjectFile>(&Bin)) {
    for (const object::SectionRef &Sec : Obj->sections()) {
      Expected<StringRef> Name = Sec.getName();
      if (!Name) {
        consumeError(Name.takeError());
        continue;
      }
      if (*Name == kpack::ready::KeySectionName ||
          (Obj->isCOFF() && *Name == kpack::ready::CoffKeySectionName))
        return true;
    }
    return false;
  }
  auto *Ar = dyn_cast<object::Archive>(&Bin);
  if (!Ar)
    return false;
  Error Err = Error::success();
  for (const object::Archive::Child &C : Ar->children(Err)) {
    Expected<std::unique_ptr<object::Binary>> Member = C.getAsBinary();
    if (!Member) {
      consumeError(Member.takeError());
      continue;
    }
    if (holdsKpackReady(**Member)) {
      consumeError(std::move(Err));
      return true;
    }
  }
  consumeError(std::move(Err));
  return false;
}

/// Whether the file at \p Path is (or, an archive, holds) a kpack-ready
/// object. Anything unreadable is left to the linker.
bool isKpackReadyInput(StringRef Path) {
  Expected<object::OwningBinary<object::Binary>> Bin =
      object::createBinary(Path);
  if (!Bin) {
    consumeError(Bin.takeError());
    return false;
  }
  return holdsKpackReady(*Bin->getBinary());
}

/// The directory this hipcc lives in.
/// Does the command line compile or link for an MSVC-style Windows triple
/// (a --target/-target naming windows or win32, but not mingw, gnu or
/// cygnus), whose links clang hands to a linker named `lld-link`?
bool targetsMsvc(ArrayRef<std::string> Args) {
  auto IsMsvc = [](StringRef T) {
    return (T.contains("windows") || T.contains("win32")) &&
           !T.contains("mingw") && !T.contains("gnu") && !T.contains("cygnus");
  };
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (A.consume_front("--target=") && IsMsvc(A))
      return true;
    if ((A == "-target" || A == "--target") && I + 1 < Args.size() &&
        IsMsvc(Args[I + 1]))
      return true;
  }
  return false;
}

std::string selfDir(const char *Argv0) {
  static int Anchor;
  std::string Exe = sys::fs::getMainExecutable(Argv0, &Anchor);
  return sys::path::parent_path(Exe).str();
}

std::optional<std::string> firstExisting(ArrayRef<std::string> Candidates) {
  for (const std::string &C : Candidates)
    if (sys::fs::exists(C))
      return C;
  return std::nullopt;
}

std::string join(StringRef A, StringRef B, StringRef C = "") {
  SmallString<256> P(A);
  sys::path::append(P, B, C);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

/// The directory of the link's output: that of the last "-o FILE" or
/// "-oFILE" in Args (clang's rule: the last one wins), else "." (a.out).
std::string outputDirectory(ArrayRef<std::string> Args) {
  StringRef Output;
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (A == "-o" && I + 1 < Args.size())
      Output = Args[++I];
    else if (A.size() > 2 && A.starts_with("-o"))
      Output = A.drop_front(2);
    else if (takesSeparateValue(A))
      ++I; // "-x o": a value, never an option
  }
  StringRef Dir = sys::path::parent_path(Output);
  return Dir.empty() ? std::string(".") : Dir.str();
}

} // namespace

int main(int Argc, char **Argv) {
  InitLLVM X(Argc, Argv);
  std::string Self = selfDir(Argv[0]);

  std::optional<std::string> EmitFile, EmitDir;
  // --kpack-cache-dir=DIR: ld.kpack's compressed-frame cache (links that emit).
  std::optional<std::string> CacheDir;
  bool EmitKpack = false;
  bool Links = true;
  bool HasHipSource = false;
  bool UserSetLanguage = false;
  std::vector<std::string> Args; // for clang++, in order
  std::vector<std::string> LinkInputs; // files that are not sources
  // Index of a "-x none" that ends a HIP source's "-x hip" and is needed
  // only if another input follows (clang warns about a trailing one); 0 if
  // none (it always follows "-x hip <file>"). Not std::optional: GCC 12 warns
  // (-Wmaybe-uninitialized) on its use.
  size_t TrailingNone = 0;

  for (int I = 1; I < Argc; ++I) {
    StringRef A = Argv[I];
    if (A == "--emit-kpack") {
      EmitKpack = true;
      continue;
    }
    if (A.consume_front("--emit-kpack=")) {
      if (A.empty())
        return usage("--emit-kpack= needs a file name");
      EmitKpack = true;
      EmitFile = A.str();
      continue;
    }
    if (A.consume_front("--emit-kpack-dir=")) {
      if (A.empty())
        return usage("--emit-kpack-dir= needs a directory");
      EmitKpack = true;
      EmitDir = A.str();
      continue;
    }
    if (A.consume_front("--kpack-cache-dir=")) {
      if (A.empty())
        return fail("--kpack-cache-dir= needs a directory");
      CacheDir = A.str();
      continue;
    }
    A = Argv[I];
    // ROCm's hipcc spelling of --offload-arch.
    if (A.consume_front("--amdgpu-target=")) {
      Args.push_back(("--offload-arch=" + A).str());
      continue;
    }
    A = Argv[I];
    if (is_contained({"-c", "-S", "-E", "-M", "-MM", "-fsyntax-only"}, A))
      Links = false;
    if (A == "-x")
      UserSetLanguage = true;
    if (takesSeparateValue(A) && I + 1 < Argc) {
      Args.push_back(A.str());
      Args.push_back(Argv[++I]);
      continue;
    }
    if (!A.starts_with("-") && isHipSource(A) && !UserSetLanguage) {
      // Only this file is HIP; later inputs get their language back.
      if (TrailingNone) // "-x hip" is still in effect: drop the "-x none"
        Args.erase(Args.begin() + TrailingNone,
                   Args.begin() + TrailingNone + 2);
      else
        Args.insert(Args.end(), {"-x", "hip"});
      Args.push_back(A.str());
      TrailingNone = Args.size();
      Args.insert(Args.end(), {"-x", "none"});
      HasHipSource = true;
      continue;
    }
    if (!A.starts_with("-")) {
      TrailingNone = 0; // the "-x none" is needed for this input
      if (isSource(A))
        HasHipSource |= UserSetLanguage;
      else
        LinkInputs.push_back(A.str());
    }
    Args.push_back(A.str());
  }
  if (TrailingNone)
    Args.erase(Args.begin() + TrailingNone, Args.begin() + TrailingNone + 2);
  if (EmitFile && EmitDir)
    return usage("--emit-kpack= and --emit-kpack-dir= are mutually exclusive");

  // kpack-ready objects (`hipcc --emit-kpack -c`) link only through
  // ld.kpack, and only with a place for their device code: an error naming
  // the fix, rather than guessing where the archives go (docs/hipcc.md).
  if (Links && !EmitKpack)
    for (const std::string &In : LinkInputs)
      if (isKpackReadyInput(In))
        return fail("'" + In +
                    "' is kpack-ready (compiled with --emit-kpack): link "
                    "with --emit-kpack, --emit-kpack=FILE or "
                    "--emit-kpack-dir=DIR");
  std::vector<std::string> Cmd;
  std::string Clang;
  if (std::optional<std::string> Dir = sys::Process::GetEnv("HIP_CLANG_PATH"))
    Clang = join(*Dir, "clang++");
  else
    Clang = KPACK_CLANGXX;
  // --help and --version: clang++'s answer, then hipcc's part.
  for (StringRef A : Args) {
    if (!is_contained({"--help", "-help", "--version"}, A))
      continue;
    std::string ErrMsg;
    int RC = sys::ExecuteAndWait(Clang, {Clang, A}, /*Env=*/std::nullopt,
                                 /*Redirects=*/{}, /*SecondsToWait=*/0,
                                 /*MemoryLimit=*/0, &ErrMsg);
    if (RC < 0)
      return fail("cannot run " + Clang + ": " + ErrMsg);
    if (A == "--version")
      kpack::printToolVersion(outs(), Tool);
    else
      printHipccHelp(outs());
    return RC;
  }
  Cmd.push_back(Clang);
  if (std::optional<std::string> Rocm = sys::Process::GetEnv("ROCM_PATH"))
    if (none_of(Args, [](StringRef A) { return A.starts_with("--rocm-path"); }))
      Cmd.push_back("--rocm-path=" + *Rocm);

  // Every target, Windows too: the plugin writes kpack-ready ELF or COFF
  // objects (docs/kpack-ready.md).
  if (EmitKpack && HasHipSource) {
    std::optional<std::string> Plugin =
        firstExisting({join(Self, "..", "lib/KpackPlugin.so"),
                       join(Self, "..", KPACK_INSTALL_LIBDIR "/KpackPlugin.so")});
    if (!Plugin)
      return fail("cannot find KpackPlugin.so beside " + Self);
    Cmd.push_back("-Xarch_host");
    Cmd.push_back("-fpass-plugin=" + *Plugin);
  }
  append_range(Cmd, Args);
  if (HasHipSource || !Links)
    append_range(Cmd, envFlags("HIPCC_COMPILE_FLAGS_APPEND"));

  if (Links) {
    // Like ROCm's hipcc: links always go through the HIP link step, which
    // device-links -fgpu-rdc objects and adds the HIP runtime.
    Cmd.push_back("--hip-link");
    if (EmitKpack) {
      // ld.kpack under its ld.lld alias: clang then drives the link (and
      // the -fgpu-rdc device link) exactly as for -fuse-ld=lld, so the
      // device code equals that of an ordinary lld build.
      std::optional<std::string> Linker = firstExisting(
          {join(Self, "..", "libexec/kpack/ld.lld"),
           join(Self, "..", KPACK_INSTALL_LIBEXECDIR "/kpack/ld.lld")});
      if (!Linker)
        return fail("cannot find ld.kpack's ld.lld alias in " + Self +
                    "/../libexec/kpack");
      Cmd.push_back("-fuse-ld=lld");
      Cmd.push_back("--ld-path=" + *Linker);
      // clang's MSVC toolchain ignores --ld-path and looks up `lld-link` in
      // the -B directories first: ld.kpack's alias there.
      if (targetsMsvc(Args))
        Cmd.push_back("-B" + sys::path::parent_path(*Linker).str());
      if (EmitFile)
        Cmd.push_back("-Wl,--kpack-output=" + *EmitFile);
      else if (EmitDir)
        Cmd.push_back("-Wl,--kpack-dir=" + *EmitDir);
      else // Bare --emit-kpack: per-target archives beside the output.
        Cmd.push_back("-Wl,--kpack-dir=" + outputDirectory(Args));
      if (CacheDir)
        Cmd.push_back("-Wl,--kpack-cache-dir=" + *CacheDir);
    }
    append_range(Cmd, envFlags("HIPCC_LINK_FLAGS_APPEND"));
  }

  std::optional<std::string> Verbose = sys::Process::GetEnv("HIPCC_VERBOSE");
  if (Verbose && !Verbose->empty() && (*Verbose)[0] != '0') {
    for (const std::string &C : Cmd)
      errs() << C << " ";
    errs() << "\n";
  }

  std::vector<StringRef> Refs(Cmd.begin(), Cmd.end());
  std::string ErrMsg;
  int RC = sys::ExecuteAndWait(Clang, Refs, /*Env=*/std::nullopt,
                               /*Redirects=*/{}, /*SecondsToWait=*/0,
                               /*MemoryLimit=*/0, &ErrMsg);
  if (RC < 0)
    return fail("cannot run " + Clang + ": " + ErrMsg);
  return RC;
}

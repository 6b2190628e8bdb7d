//===- RegistrationShim.cpp - HIPK -> HIPF registration shim --------------===//
//
// librocm_kpack_hip.so sits in front of a stock HIP runtime (LD_PRELOAD, or
// linked ahead of libamdhip64) and defines __hipRegisterFatBinary and
// __hipUnregisterFatBinary, unversioned and as hip_4.2 like libamdhip64.
//
//   HIPF wrapper -> passed to the real runtime untouched.
//   HIPK wrapper -> for every GPU present, the best code object (native target
//                   first, then generic; kpack/TargetId.h) is found in the
//                   archives (librocm_kpack's loader), the code objects go
//                   into an uncompressed offload bundle, and the real runtime
//                   gets a HIPF wrapper pointing at it. Both live until
//                   __hipUnregisterFatBinary.
//
// The bundle is lazy where userfaultfd allows (LazyBundle.h): registration
// reads only the archives' TOCs and writes the bundle header; each code
// object is decompressed when the runtime first reads it (a stock CLR does
// that at the first launch of one of the binary's kernels: docs/shim.md).
// Elsewhere, or with ROCM_KPACK_SHIM_EAGER=1, the code objects are loaded
// and copied into the bundle at registration.
//
// On Windows the same file builds rocm_kpack_hip.dll (cmake/windows), eager
// only (LazyBundleUnavailable.cpp; no userfaultfd): a program or DLL linked
// against its import library ahead of amdhip64's imports these two entry
// points from it, and it finds the real ones in the amdhip64 DLL already
// loaded (docs/shim.md, "Windows").
//
//===----------------------------------------------------------------------===//

#include "AgentTargets.h"
#include "CodeObjectTarget.h"
#include "LazyBundle.h"
#include "Report.h"
#include "kpack/BundleWriter.h"
#include "kpack/LoaderCache.h"
#include "kpack/Metadata.h"
#include "kpack/ReadableMemory.h"
#include "kpack/SearchPaths.h"
#include "kpack/TargetId.h"
#include "kpack/Wrapper.h"
#include "rocm_kpack/kpack.h"

#include "kpack/Platform.h"

#ifdef _WIN32
#ifndef NOMINMAX
#define NOMINMAX
#endif
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#define KPACK_SHIM_EXPORT __declspec(dllexport)
#else
#include <dlfcn.h>
#define KPACK_SHIM_EXPORT __attribute__((visibility("default")))
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

using namespace kpack;

namespace {

using RegisterFn = void **(*)(const void *);
using UnregisterFn = void (*)(void **);

void report(const char *Kind, const char *Format, ...) KPACK_SHIM_PRINTF(2, 3);
void report(const char *Kind, const char *Format, ...) {
  char Line[8192];
  va_list Args;
  va_start(Args, Format);
  std::vsnprintf(Line, sizeof(Line), Format, Args);
  va_end(Args);
  shim::reportLine("%s%s", Kind, Line);
}
#define SHIM_ERROR(...) report("error: ", __VA_ARGS__)
#define SHIM_DEBUG(...)                                                        \
  do {                                                                         \
    if (envFlag("ROCM_KPACK_DEBUG"))                                           \
      report("", __VA_ARGS__);                                                 \
  } while (0)

#ifdef _WIN32
/// The real runtime's entry points on Windows: from the HIP runtime DLL the
/// process has already loaded, under one of the names ROCm's HIP SDK gives
/// it (amdhip64_<major>.dll since 6.x, amdhip64.dll before). A PE import
/// names its DLL, so the program's own imports of every other HIP function
/// already bind to that DLL; the shim never loads a runtime itself.
template <typename Fn> Fn findNext(const char *Name) {
  for (const wchar_t *Lib :
       {L"amdhip64_7.dll", L"amdhip64_6.dll", L"amdhip64.dll"})
    if (HMODULE Module = GetModuleHandleW(Lib))
      if (FARPROC Sym = GetProcAddress(Module, Name))
        return reinterpret_cast<Fn>(reinterpret_cast<void *>(Sym));
  return nullptr;
}
#else
/// Looks Name up in Handle, preferring the hip_4.2 version that ROCm-built
/// binaries import.
void *findVersioned(void *Handle, const char *Name) {
  if (void *Sym = dlvsym(Handle, Name, "hip_4.2"))
    return Sym;
  return dlsym(Handle, Name);
}

/// The real runtime's entry points: the next definition after this library
/// in the global scope or, when the HIP library was dlopen'ed RTLD_LOCAL (so
/// its libamdhip64 is not in the global scope, as in Python extensions), the
/// runtime already loaded under one of its usual names.
template <typename Fn> Fn findNext(const char *Name) {
  if (void *Sym = findVersioned(RTLD_NEXT, Name))
    return reinterpret_cast<Fn>(Sym);
  for (const char *Lib : {"libamdhip64.so.7", "libamdhip64.so.6",
                          "libamdhip64.so.5", "libamdhip64.so"}) {
    // RTLD_NOLOAD: never load a runtime ourselves; the handle keeps a
    // reference that lives as long as the process, like the shim's use.
    if (void *Handle = dlopen(Lib, RTLD_LAZY | RTLD_NOLOAD))
      if (void *Sym = findVersioned(Handle, Name))
        return reinterpret_cast<Fn>(Sym);
  }
  return nullptr;
}
#endif

struct RealRuntime {
  RegisterFn Register = nullptr;
  UnregisterFn Unregister = nullptr;
};

const RealRuntime &realRuntime() {
  static const RealRuntime R = [] {
    RealRuntime R;
    R.Register = findNext<RegisterFn>("__hipRegisterFatBinary");
    R.Unregister = findNext<UnregisterFn>("__hipUnregisterFatBinary");
    return R;
  }();
  return R;
}

/// Process-wide state, created at the first HIPK registration.
struct Loader {
  std::vector<TargetId> Agents;
  std::unique_ptr<LoaderCache> Cache;
  bool Lazy = false; ///< lazy bundles can be created (LazyBundle.h)
};

Loader &loader() {
  // Never destroyed: unregistration may run after this library's destructors,
  // and lazy bundles are filled from it until then.
  static Loader *L = [] {
    auto *L = new Loader;
    if (Status S = shim::detectAgentTargets(L->Agents))
      SHIM_ERROR("cannot determine the GPU targets: %s", S.message().c_str());
    std::string Names;
    for (const TargetId &A : L->Agents)
      Names += (Names.empty() ? "" : ", ") + A.str();
    SHIM_DEBUG("GPU targets: %s", Names.empty() ? "(none)" : Names.c_str());
    // The loader would replace every arch list it is given with
    // ROCM_KPACK_ARCH_OVERRIDE. The shim has already turned the override into
    // its agents and asks for one candidate at a time, so its loader must
    // not apply it again.
    KpackEnvironment Env = KpackEnvironment::fromProcess();
    Env.ArchOverride.clear();
    Env.ArchOverrideMalformed = false;
    L->Cache = std::make_unique<LoaderCache>(std::move(Env));
    std::string Why;
    L->Lazy = shim::lazyBundlesAvailable(Why);
    SHIM_DEBUG("code objects load %s%s%s",
               L->Lazy ? "on first touch (userfaultfd)" : "at registration",
               Why.empty() ? "" : ": ", Why.c_str());
    return L;
  }();
  return *L;
}

/// What the real runtime received for one HIPK registration: a bundle built
/// at registration (Bundle) or a lazy one (LazyBundle).
struct Substitute {
  std::vector<uint8_t> Bundle;
  const uint8_t *LazyBundle = nullptr;
  size_t LazyCodeObjects = 0;
  std::string Name; ///< "<binary>#<co index>", for messages
  FatbinWrapper Wrapper{};
  ~Substitute() {
    if (!LazyBundle)
      return;
    size_t Read = shim::releaseLazyBundle(LazyBundle);
    SHIM_DEBUG("%s: lazy bundle released; %zu of %zu code object(s) had been "
               "read",
               Name.c_str(), Read, LazyCodeObjects);
  }
};

// The shim's locks. Unregistration takes LiveMutex and, under it, the lazy
// bundles' locks (releaseLazyBundle); the other two are never held while
// taking another lock.
std::mutex LiveMutex;
std::mutex ReportedMutex; ///< reportMissing's set
std::mutex PathMutex;     ///< binaryPathOf's cache
std::map<void **, std::unique_ptr<Substitute>> &live() {
  static auto *M = new std::map<void **, std::unique_ptr<Substitute>>;
  return *M;
}

/// fork() copies only the calling thread: a lock another thread held at that
/// moment would stay locked in the child, and its next registration would
/// wait forever. The locks are taken around fork instead.
void atforkPrepare() {
  LiveMutex.lock();
  PathMutex.lock();
  ReportedMutex.lock();
}
void atforkParent() {
  ReportedMutex.unlock();
  PathMutex.unlock();
  LiveMutex.unlock();
}
void atforkChild() {
  atforkParent();
  // The loader's own locks are taken around fork by the runtime
  // (LoaderCache.cpp: its fork handlers), and a child forgets the archives
  // the parent had open; the parent's lazy bundles are forgotten in the
  // child (LazyBundle.cpp).
}

__attribute__((constructor)) void installForkHandlers() {
  // The lazy bundles register their own fork handlers when their state is
  // made (here, at the latest). Prepare handlers run in the reverse order of
  // registration, so these, registered after them, take LiveMutex before
  // the lazy bundles' locks: the order unregistration takes them in.
  (void)shim::lazyBundleStats();
  platform::registerForkHandlers(atforkPrepare, atforkParent, atforkChild);
}

/// A code object for one agent: loaded (eager) or only located (lazy).
struct Loaded {
  std::string Target; ///< the target ID the code object was built for
  void *Data = nullptr;
  size_t Size = 0;
  LocatedCodeObject Located;
};

/// Finds, for Agent, the code object of the first request an archive offers:
/// loaded (Read) or only located from the archive's TOC (!Read). The shim
/// asks what CLR asks (agentRequests: the agent's full target ID, then its
/// generic processor with the features that one takes), in one call, and
/// the library tries every feature subset of each. The bundle entry is
/// labelled with the target ID the code object was built for, since the
/// library may have found a feature subset: from the ELF header when
/// loaded, else the archive's target ID for it. Account receives the
/// search's account (the diagnosis of a failure).
kpack_error_t findForAgent(LoaderCache &Cache, const KpackMetadata &Ref,
                           const std::string &BinaryPath, uint32_t CoIndex,
                           const TargetId &Agent, bool Read, Loaded &Out,
                           ResolutionAccount &Account) {
  const std::vector<std::string> Requests = agentRequests(Agent);
  Status S = Read ? Cache.loadCodeObject(Ref, BinaryPath, CoIndex, Requests,
                                         Out.Data, Out.Size, &Account)
                  : Cache.locateCodeObject(Ref, BinaryPath, CoIndex, Requests,
                                           Out.Located, &Account);
  if (S)
    return S.code();
  const ProbeRecord *Found = Account.found();
  const std::string Candidate = Found ? Found->Candidate : Requests.front();
  if (Read) {
    Out.Target = shim::codeObjectTargetId(
        Out.Data, Out.Size, Candidate.substr(0, Candidate.find(':')),
        Candidate);
  } else {
    Out.Target = Out.Located.Target;
    Out.Size = size_t(Out.Located.Size);
  }
  return KPACK_SUCCESS;
}

/// Reports a GPU left without a code object with the diagnosis `kpack
/// doctor` gives (Diagnosis: "<name>: <message>", kpack/Resolution.h): one
/// message per binary and GPU (a library has one wrapper per translation
/// unit, and they all miss the same way), repeats only under
/// ROCM_KPACK_DEBUG.
void reportMissing(const std::string &BinaryPath, uint32_t CoIndex,
                   const TargetId &Gpu, const std::string &Diagnosis) {
  static auto *Reported = new std::set<std::string>;
  {
    std::lock_guard<std::mutex> Lock(ReportedMutex);
    if (!Reported->insert(BinaryPath + '\n' + Gpu.str()).second) {
      SHIM_DEBUG("%s#%u: no code object for GPU %s either", BinaryPath.c_str(),
                 CoIndex, Gpu.str().c_str());
      return;
    }
  }
  SHIM_ERROR("no code object for GPU %s in '%s' (code object #%u): %s",
             Gpu.str().c_str(),
             BinaryPath.empty() ? "(unknown binary)" : BinaryPath.c_str(),
             CoIndex, Diagnosis.c_str());
}

/// The file holding Address, as kpack_discover_binary_path finds it (from
/// /proc/self/maps), remembered per loaded object: a library registers one
/// wrapper per translation unit (rocSPARSE: 111), and reading the maps, which
/// grow with every lazy bundle, for each would make its dlopen quadratic.
std::string binaryPathOf(const void *Address) {
#ifdef _WIN32
  HMODULE Module = nullptr;
  const bool Known =
      GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                             GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                         static_cast<LPCWSTR>(Address), &Module) != 0;
  const std::string Key =
      Known ? std::to_string(reinterpret_cast<uintptr_t>(Module))
            : std::string();
#else
  Dl_info Info{};
  const bool Known = dladdr(Address, &Info) != 0 && Info.dli_fbase;
  const std::string Key =
      Known ? std::to_string(reinterpret_cast<uintptr_t>(Info.dli_fbase)) +
                  '\n' + (Info.dli_fname ? Info.dli_fname : "")
            : std::string();
#endif
  static auto *Cache = new std::map<std::string, std::string>;
  if (Known) {
    std::lock_guard<std::mutex> Lock(PathMutex);
    auto It = Cache->find(Key);
    if (It != Cache->end())
      return It->second;
  }
  char PathBuf[4096] = {0}; // PATH_MAX on Linux; UTF-8 on Windows
  size_t Offset = 0;
  if (kpack_discover_binary_path(Address, PathBuf, sizeof(PathBuf), &Offset) !=
      KPACK_SUCCESS)
    return "";
  if (Known) {
    std::lock_guard<std::mutex> Lock(PathMutex);
    (*Cache)[Key] = PathBuf;
  }
  return PathBuf;
}

/// The loader's answer for every agent when the metadata cannot be used
/// (or loading is disabled), with its diagnosis line. Readable: the bytes
/// readable at W.Binary (at most MaxKpackMetadataSize), which bound the
/// parse.
kpack_error_t metadataError(const Loader &L, const FatbinWrapper &W,
                            size_t Readable, KpackMetadata &Ref,
                            std::string &Diagnosis) {
  Status E = decodeKpackMetadata(static_cast<const uint8_t *>(W.Binary),
                                 Readable, Ref, MetadataMode::Loader);
  if (L.Cache->environment().Disabled) {
    L.Cache->debug("ROCM_KPACK_DISABLE is set; not loading");
    Diagnosis = disabledDiagnosis();
    return KPACK_ERROR_NOT_IMPLEMENTED;
  }
  if (E) {
    L.Cache->debug("invalid HIPK metadata: %s", E.message().c_str());
    Diagnosis = invalidMetadataDiagnosis(E.message());
    return E.code();
  }
  return KPACK_SUCCESS;
}

/// Builds the bundle for a HIPK wrapper: the host entry plus one entry per
/// distinct target found. GPUs without a code object are reported and left
/// out, so the runtime takes its own "no binary for this GPU" path for them.
std::unique_ptr<Substitute> substituteFor(const FatbinWrapper &W) {
  auto Start = std::chrono::steady_clock::now();
  Loader &L = loader();

  std::string BinaryPath = binaryPathOf(&W);
  if (BinaryPath.empty())
    SHIM_ERROR("cannot find the file that holds the HIPK wrapper at %p",
               static_cast<const void *>(&W));
  uint32_t CoIndex = hipkCodeObjectIndex(W);

  std::vector<Loaded> Objects;
  // A corrupt wrapper (e.g. a bad relocation addend) must not make the loader
  // read through a wild pointer: the metadata has to lie in readable memory.
  const size_t Readable = readableBytesAt(W.Binary, MaxKpackMetadataSize);
  const bool MetadataReadable = Readable != 0;
  if (!MetadataReadable) {
    SHIM_ERROR("HIPK wrapper in '%s' (code object #%u) points at %p, which "
               "is not readable memory; no code object loaded",
               BinaryPath.empty() ? "(unknown binary)" : BinaryPath.c_str(),
               CoIndex, W.Binary);
  }
  KpackMetadata Ref;
  std::string RefDiagnosis;
  const kpack_error_t RefError =
      MetadataReadable ? metadataError(L, W, Readable, Ref, RefDiagnosis)
                       : KPACK_SUCCESS;
  const bool Lazy = L.Lazy;
  for (const TargetId &Agent : MetadataReadable ? L.Agents
                                                : std::vector<TargetId>()) {
    Loaded Obj;
    ResolutionAccount Account;
    kpack_error_t E =
        RefError ? RefError
                 : findForAgent(*L.Cache, Ref, BinaryPath, CoIndex, Agent,
                                !Lazy, Obj, Account);
    if (E != KPACK_SUCCESS) {
      if (!RefError)
        L.Cache->explain(Account);
      reportMissing(BinaryPath, CoIndex, Agent,
                    RefError ? RefDiagnosis : Account.line());
      continue;
    }
    SHIM_DEBUG("%s#%u: GPU %s uses code object for %s (%zu bytes)",
               BinaryPath.c_str(), CoIndex, Agent.str().c_str(),
               Obj.Target.c_str(), Obj.Size);
    bool Duplicate =
        std::any_of(Objects.begin(), Objects.end(),
                    [&](const Loaded &O) { return O.Target == Obj.Target; });
    if (Duplicate)
      std::free(Obj.Data);
    else
      Objects.push_back(std::move(Obj));
  }

  std::vector<BundleInput> Entries;
  Entries.push_back({HostEntryId, nullptr, 0});
  for (const Loaded &O : Objects)
    Entries.push_back({HipDeviceEntryPrefix + O.Target,
                       static_cast<const uint8_t *>(O.Data), O.Size});

  auto S = std::make_unique<Substitute>();
  size_t BundleSize = 0;
  if (Lazy) {
    BundleLayout Layout = layoutBundle(Entries);
    std::vector<shim::LazyPayload> Payloads;
    for (size_t I = 0; I < Objects.size(); ++I) {
      shim::LazyPayload P;
      P.Offset = Layout.Offsets[I + 1];
      P.Size = Objects[I].Size;
      P.Name = "'" + BinaryPath + "'#" + std::to_string(CoIndex) + " for " +
               Objects[I].Target + " from '" + Objects[I].Located.ArchivePath +
               "'";
      LoaderCache *Cache = L.Cache.get();
      P.Fill = [Cache, Located = Objects[I].Located](
                   uint8_t *Dest, std::string &Error) {
        Status E = Cache->readLocated(Located, [Dest](size_t) { return Dest; });
        if (E)
          Error = E.message();
        return !E;
      };
      Payloads.push_back(std::move(P));
    }
    std::string Error;
    S->LazyBundle = shim::createLazyBundle(Layout.Header, Layout.TotalSize,
                                           std::move(Payloads), Error);
    if (!S->LazyBundle) {
      // Nothing was loaded yet: load now, as in the eager mode.
      SHIM_ERROR("cannot create a lazy bundle (%s); loading '%s'#%u now",
                 Error.c_str(), BinaryPath.c_str(), CoIndex);
      for (size_t I = 0; I < Objects.size(); ++I) {
        Loaded &O = Objects[I];
        Status E = L.Cache->readLocated(O.Located, [&O](size_t N) {
          return O.Data = std::malloc(N ? N : 1);
        });
        if (E) {
          SHIM_ERROR("cannot load '%s'#%u for %s: %s", BinaryPath.c_str(),
                     CoIndex, O.Target.c_str(), E.message().c_str());
          std::free(O.Data);
          O.Data = nullptr;
          O.Size = 0;
        }
        Entries[I + 1].Data = static_cast<const uint8_t *>(O.Data);
        Entries[I + 1].Size = O.Size;
      }
    } else {
      BundleSize = size_t(Layout.TotalSize);
      S->LazyCodeObjects = Objects.size();
      S->Name = BinaryPath + "#" + std::to_string(CoIndex);
    }
  }
  if (!S->LazyBundle) {
    S->Bundle = encodeBundle(Entries);
    BundleSize = S->Bundle.size();
  }
  for (const Loaded &O : Objects)
    std::free(O.Data);
  S->Wrapper.Magic = HipfMagic;
  S->Wrapper.Version = WrapperVersion;
  S->Wrapper.Binary =
      S->LazyBundle ? static_cast<const void *>(S->LazyBundle)
                    : static_cast<const void *>(S->Bundle.data());
  S->Wrapper.Reserved1 = 0;

  double Ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - Start)
                  .count();
  SHIM_DEBUG("%s#%u: bundle of %zu code object(s), %zu bytes, %s in %.3f ms",
             BinaryPath.c_str(), CoIndex, Objects.size(), BundleSize,
             S->LazyBundle ? "header written (code objects load on first touch)"
                           : "built",
             Ms);
  return S;
}

} // namespace

extern "C" {

KPACK_SHIM_EXPORT void **
__hipRegisterFatBinary(const void *Data) {
  const RealRuntime &Real = realRuntime();
  if (!Real.Register) {
#ifdef _WIN32
    SHIM_ERROR("no HIP runtime behind the shim: __hipRegisterFatBinary not "
               "found (no amdhip64_7.dll, amdhip64_6.dll or amdhip64.dll "
               "loaded)");
#else
    SHIM_ERROR("no HIP runtime behind the shim: __hipRegisterFatBinary not "
               "found (load libamdhip64 after librocm_kpack_hip)");
#endif
    return nullptr;
  }
  // Anything but a readable HIPK wrapper goes to the runtime untouched.
  const auto *W = static_cast<const FatbinWrapper *>(Data);
  if (!W || !isReadable(W, sizeof(FatbinWrapper)) || W->Magic != HipkMagic ||
      W->Version != WrapperVersion)
    return Real.Register(Data);

  std::unique_ptr<Substitute> S = substituteFor(*W);
  void **Handle = Real.Register(&S->Wrapper);
  std::lock_guard<std::mutex> Lock(LiveMutex);
  if (!Handle || live().count(Handle)) {
    // No handle to free it by: the runtime may still point at it, so it stays.
    (void)S.release();
    return Handle;
  }
  live()[Handle] = std::move(S);
  return Handle;
}

KPACK_SHIM_EXPORT void
__hipUnregisterFatBinary(void **Handle) {
  const RealRuntime &Real = realRuntime();
  if (Real.Unregister)
    Real.Unregister(Handle);
  // The runtime is done with the bundle only now.
  std::lock_guard<std::mutex> Lock(LiveMutex);
  live().erase(Handle);
}

} // extern "C"

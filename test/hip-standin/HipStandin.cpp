//===- HipStandin.cpp - Stand-in HIP runtime for tests --------------------===//
//
// libhip_standin.so is a TEST STAND-IN, not a HIP runtime: there is no AMD GPU
// on the machines this project is tested on. It exports the registration and
// launch entry points that clang's HIP host code calls and does with what it
// receives what CLR (ROCm's HIP runtime) does at registration and program
// build time:
//  - HIPF wrappers: decode the offload bundle (uncompressed or CCOB, with the
//    stand-in's own reader) and pick, per simulated GPU agent, the code
//    object CLR would load, by the stand-in's own model of CLR's and comgr's
//    rule (ClrRule.h; deliberately not the project's target-ID code);
//  - HIPK wrappers: ask librocm_kpack for the code object, as the kpack-aware
//    CLR does (kpack_discover_binary_path + kpack_load_code_object with what
//    CLR passes: the agent's full ISA name, then CLR's generic form of it);
//  - check that every registered kernel has its "<name>.kd" symbol and every
//    registered variable its symbol in the code object each agent received.
// When the bundle's bytes are read is HIP_STANDIN_ACCESS's choice (the code
// objects selected are copied, as ROCr's loader copies them, and checked from
// the copy):
//   (unset)        on the first launch of one of the binary's kernels, else
//                  when it is unregistered (at exit or dlclose), else when
//                  the process exits: every binary gets checked;
//   clr-deferred   as a stock CLR with deferred loading (docs/shim.md): at
//                  registration only the wrapper; at the first launch of one
//                  of the binary's kernels the bundle header, then the
//                  selected code objects; a binary none of whose kernels is
//                  launched is never read (nor checked);
//   eager          everything at registration (CLR with
//                  HIP_ENABLE_DEFERRED_LOADING=0, or registering after the
//                  runtime's initialisation).
// Kernels are never executed.
//
// Environment (see docs/testing.md):
//   HIP_STANDIN_AGENTS    comma-separated full target IDs, one per GPU agent
//   HIP_STANDIN_ACCESS    clr-deferred | eager (above)
//   HIP_STANDIN_LOG=1     one line per registration / selection / launch
//   HIP_STANDIN_DUMP_DIR  write each received code object to
//                         DIR/<binary index>.<agent, ':' -> '_'>.co
// Failures print "hip-standin: error: ..." and make the process exit with
// status 3 at exit. A summary line is always printed at exit.
//
//===----------------------------------------------------------------------===//

#include "ClrRule.h"
#include "CodeObject.h"
#include "OffloadBundle.h"

#include "kpack/Metadata.h"
#include "kpack/ReadableMemory.h"
#include "kpack/SearchPaths.h"
#include "kpack/Wrapper.h"
#include "rocm_kpack/kpack.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <new>
#include <unistd.h>
#include <vector>

#ifdef _WIN32
#define HIP_STANDIN_API extern "C" __declspec(dllexport)
// mingw-w64's C99 printf (__USE_MINGW_ANSI_STDIO, %zu), checked as such.
#define HIP_STANDIN_PRINTF(F, A) __attribute__((format(gnu_printf, F, A)))
#else
#define HIP_STANDIN_PRINTF(F, A) __attribute__((format(printf, F, A)))
#define HIP_STANDIN_API extern "C" __attribute__((visibility("default")))
#endif

namespace {

using hipstandin::CodeObjectInfo;
using hipstandin::OffloadBundle;
namespace clr = hipstandin::clr;

using kpack::HipfMagic;
using kpack::HipkMagic;
using FatBinaryWrapper = kpack::FatbinWrapper;
constexpr int ExitStatusOnFailure = 3;

// hipError_t values used here (same numbers as HIP's).
constexpr int hipSuccess = 0;
constexpr int hipErrorMissingConfiguration = 52;
constexpr int hipErrorInvalidDeviceFunction = 98;
constexpr int hipErrorNoBinaryForGpu = 209;

struct Dim3 {
  unsigned X, Y, Z;
};

struct Agent {
  std::string Name;    ///< as configured, e.g. "gfx90a:xnack+"
  std::string IsaName; ///< as CLR names it, "amdgcn-amd-amdhsa--gfx90a:xnack+"
};

/// What one agent got for one fat binary.
struct Selection {
  bool Found = false;
  CodeObjectInfo Info;
  bool AllResolved = false; ///< every kernel and variable found
};

/// The code object one agent received, copied out of the bundle.
struct AgentCode {
  bool Found = false;
  std::vector<uint8_t> Bytes;
  std::string Label; ///< the target the code object is for, for messages
};

enum class Access { UntilExit, ClrDeferred, Eager };

struct FatBinary {
  unsigned Index = 0;
  uint32_t Magic = 0;
  const void *Binary = nullptr;
  uint64_t Reserved1 = 0;
  std::vector<std::string> Kernels;   ///< device names
  std::vector<std::string> Variables; ///< device symbol names
  bool Loaded = false;   ///< the bundle was read (Code is valid)
  bool Resolved = false; ///< the code objects were checked (PerAgent)
  bool Unregistered = false;
  std::vector<AgentCode> Code;
  std::vector<Selection> PerAgent;
};

struct CallConfiguration {
  Dim3 Grid, Block;
  size_t SharedMem;
  void *Stream;
};
thread_local std::vector<CallConfiguration> CallConfigurations;

std::string magicName(uint32_t Magic) {
  if (Magic == HipfMagic)
    return "HIPF";
  if (Magic == HipkMagic)
    return "HIPK";
  char Buf[16];
  snprintf(Buf, sizeof(Buf), "0x%08x", Magic);
  return Buf;
}

using kpack::envFlag;

/// Bytes readable from P to the end of the memory region holding it, or 0.
/// Registration passes pointers without sizes; this bounds every read. The
/// region is the loaded segment for data in an ELF image, else the readable
/// mapping (wrappers and bundles built at run time, e.g. by the kpack
/// registration shim, live on the heap).
size_t readableExtent(const void *P) {
  return kpack::readableBytesAt(P, SIZE_MAX);
}

/// "kernel_name 'x', archives 'a', 'b'" for error messages.
std::string describeHipkMetadata(const void *Metadata) {
  kpack::KpackMetadata M;
  if (kpack::Status S = kpack::decodeKpackMetadataInMemory(Metadata, M))
    return "invalid kpack metadata: " + S.message();
  std::string Text = "kernel_name '" + M.KernelName + "', archives";
  for (size_t I = 0; I < M.SearchPaths.size(); ++I)
    Text += (I ? ", '" : " '") + M.SearchPaths[I] + "'";
  return Text;
}

/// Writes Size bytes to Path through a temporary file and a rename, so
/// that a reader never sees a partial file. Returns "" or a message.
std::string writeFileAtomically(const std::string &Path, const uint8_t *Data,
                                size_t Size) {
  namespace fs = std::filesystem;
  const fs::path Final = fs::u8path(Path);
  fs::path Temp = Final;
  Temp += ".tmp" + std::to_string(std::hash<std::thread::id>()(
                       std::this_thread::get_id()));
  {
    std::ofstream Out(Temp, std::ios::binary | std::ios::trunc);
    if (Out)
      Out.write(reinterpret_cast<const char *>(Data),
                static_cast<std::streamsize>(Size));
    Out.close();
    if (Out.fail()) {
      std::error_code Ignored;
      fs::remove(Temp, Ignored);
      return "cannot write " + Temp.u8string();
    }
  }
  std::error_code EC;
  fs::rename(Temp, Final, EC); // replaces Final, atomically on POSIX
  if (EC) {
    std::error_code Ignored;
    fs::remove(Temp, Ignored);
    return EC.message();
  }
  return "";
}

const char *kpackErrorName(kpack_error_t E) {
  switch (E) {
  case KPACK_SUCCESS:
    return "success";
  case KPACK_ERROR_INVALID_ARGUMENT:
    return "invalid argument";
  case KPACK_ERROR_FILE_NOT_FOUND:
    return "file not found";
  case KPACK_ERROR_INVALID_FORMAT:
    return "invalid format";
  case KPACK_ERROR_UNSUPPORTED_VERSION:
    return "unsupported version";
  case KPACK_ERROR_KERNEL_NOT_FOUND:
    return "kernel not found";
  case KPACK_ERROR_DECOMPRESSION_FAILED:
    return "decompression failed";
  case KPACK_ERROR_OUT_OF_MEMORY:
    return "out of memory";
  case KPACK_ERROR_NOT_IMPLEMENTED:
    return "not implemented";
  case KPACK_ERROR_IO_ERROR:
    return "I/O error";
  case KPACK_ERROR_MSGPACK_PARSE_FAILED:
    return "msgpack parse failed";
  case KPACK_ERROR_PATH_DISCOVERY_FAILED:
    return "path discovery failed";
  case KPACK_ERROR_INVALID_METADATA:
    return "invalid metadata";
  case KPACK_ERROR_ARCHIVE_NOT_FOUND:
    return "archive not found";
  case KPACK_ERROR_ARCH_NOT_FOUND:
    return "architecture not found";
  }
  return "unknown error";
}

/// "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+" -> "gfx90a:xnack+": how logs and
/// errors name the code object of a bundle entry.
std::string codeObjectLabel(const std::string &EntryId) {
  size_t Pos = EntryId.find(clr::IsaPrefix);
  return Pos == std::string::npos ? EntryId
                                  : EntryId.substr(Pos + strlen(clr::IsaPrefix));
}

/// The stand-in's whole state. Created on first use and never destroyed, so
/// registrations from any constructor or destructor order find it alive.
class Runtime {
public:
  static Runtime &get() {
    static Runtime *R = Instance = new Runtime();
    return *R;
  }
  /// The runtime if anything used it, else null.
  static Runtime *instance() { return Instance; }

  void **registerFatBinary(const FatBinaryWrapper *W);
  void registerKernel(void **Handle, const void *HostFunction,
                      const char *DeviceName);
  void registerVariable(void **Handle, const char *DeviceName);
  void *registerManagedVariable(void **Handle, void *InitValue,
                                const char *Name, size_t Size, unsigned Align);
  void unregisterFatBinary(void **Handle);
  int launch(const void *HostFunction, Dim3 Grid, Dim3 Block, size_t SharedMem);
  void finish();

private:
  Runtime();
  void log(const char *Fmt, ...) HIP_STANDIN_PRINTF(2, 3);
  void error(const char *Fmt, ...) HIP_STANDIN_PRINTF(2, 3);
  FatBinary *lookup(void **Handle, const char *What);
  /// Reads FB's bundle; AfterAgent(I) runs once agent I's code object is
  /// known (so that checks interleave with the loading, agent by agent).
  void load(FatBinary &FB,
            const std::function<void(size_t)> &AfterAgent = nullptr);
  void resolve(FatBinary &FB);
  /// Whether the access pattern reads FB's bundle at unregistration or exit.
  bool readsAtEnd(const FatBinary &FB) const {
    return Mode == Access::UntilExit || FB.Loaded;
  }
  void check(FatBinary &FB, size_t AgentIndex, const uint8_t *Data, size_t Size,
             const std::string &CodeObjectTarget);
  bool decodeHipf(FatBinary &FB, OffloadBundle &B);
  void loadHipk(FatBinary &FB, size_t AgentIndex);

  std::mutex Mutex;
  bool Logging = false;
  Access Mode = Access::UntilExit;
  std::string DumpDir;
  std::vector<Agent> Agents;
  bool AgentsValid = true;
  std::vector<std::unique_ptr<FatBinary>> Binaries; ///< in registration order
  std::map<void **, FatBinary *> ByHandle;
  std::map<const void *, std::pair<FatBinary *, size_t>> KernelsByHost;
  /// Managed variables' memory, alive until the process ends (destructors of
  /// other libraries may still use it), reachable from here for leak checkers.
  std::vector<void *> ManagedAllocations;
  kpack_cache_t Cache = nullptr;
  unsigned Errors = 0;
  bool Finished = false;
  static Runtime *Instance;
};

Runtime *Runtime::Instance = nullptr;

Runtime::Runtime() {
  Logging = envFlag("HIP_STANDIN_LOG");
  if (const char *D = getenv("HIP_STANDIN_DUMP_DIR"))
    DumpDir = D;
  if (const char *A = getenv("HIP_STANDIN_ACCESS"); A && *A) {
    if (strcmp(A, "clr-deferred") == 0)
      Mode = Access::ClrDeferred;
    else if (strcmp(A, "eager") == 0)
      Mode = Access::Eager;
    else
      error("HIP_STANDIN_ACCESS: '%s' is not clr-deferred or eager", A);
  }
  const char *List = getenv("HIP_STANDIN_AGENTS");
  if (!List || !*List) {
    error("HIP_STANDIN_AGENTS is not set (comma-separated target IDs, one "
          "per simulated GPU, e.g. gfx90a:xnack+,gfx1100)");
    AgentsValid = false;
    return;
  }
  std::string S(List);
  for (size_t Pos = 0; Pos <= S.size();) {
    size_t Comma = S.find(',', Pos);
    if (Comma == std::string::npos)
      Comma = S.size();
    std::string Name = S.substr(Pos, Comma - Pos);
    Pos = Comma + 1;
    std::optional<std::string> Isa = clr::agentIsaName(Name);
    if (!Isa) {
      error("HIP_STANDIN_AGENTS: '%s' is not a target ID", Name.c_str());
      AgentsValid = false;
      continue;
    }
    Agents.push_back({Isa->substr(strlen(clr::IsaPrefix)), *Isa});
  }
}

void Runtime::log(const char *Fmt, ...) {
  if (!Logging)
    return;
  va_list Args;
  va_start(Args, Fmt);
  fputs("hip-standin: ", stderr);
  vfprintf(stderr, Fmt, Args);
  fputc('\n', stderr);
  va_end(Args);
}

void Runtime::error(const char *Fmt, ...) {
  ++Errors;
  va_list Args;
  va_start(Args, Fmt);
  fputs("hip-standin: error: ", stderr);
  vfprintf(stderr, Fmt, Args);
  fputc('\n', stderr);
  va_end(Args);
}

void **Runtime::registerFatBinary(const FatBinaryWrapper *W) {
  std::lock_guard<std::mutex> Lock(Mutex);
  auto FB = std::make_unique<FatBinary>();
  FB->Index = Binaries.size();
  if (!W || readableExtent(W) < sizeof(FatBinaryWrapper)) {
    error("binary %u: fat binary wrapper %p is not readable memory", FB->Index,
          static_cast<const void *>(W));
    FB->Loaded = FB->Resolved = true; // nothing to resolve
  } else {
    FB->Magic = W->Magic;
    FB->Binary = W->Binary;
    FB->Reserved1 = W->Reserved1;
    log("binary %u magic %s registered", FB->Index,
        magicName(FB->Magic).c_str());
    // CLR refuses these wrappers too.
    if (FB->Magic != HipfMagic && FB->Magic != HipkMagic) {
      error("binary %u: unknown fat binary wrapper magic %s", FB->Index,
            magicName(FB->Magic).c_str());
      FB->Loaded = FB->Resolved = true;
    } else if (W->Version != 1) {
      error("binary %u: unsupported fat binary wrapper version %u", FB->Index,
            W->Version);
      FB->Loaded = FB->Resolved = true;
    } else if (Mode == Access::Eager) {
      load(*FB);
    }
  }
  // The handle is opaque to the caller: it only passes it back to us.
  void **Handle = reinterpret_cast<void **>(FB.get());
  ByHandle[Handle] = FB.get();
  Binaries.push_back(std::move(FB));
  return Handle;
}

FatBinary *Runtime::lookup(void **Handle, const char *What) {
  auto It = ByHandle.find(Handle);
  if (It != ByHandle.end())
    return It->second;
  error("%s: unknown fat binary handle %p", What, static_cast<void *>(Handle));
  return nullptr;
}

void Runtime::registerKernel(void **Handle, const void *HostFunction,
                             const char *DeviceName) {
  std::lock_guard<std::mutex> Lock(Mutex);
  FatBinary *FB = lookup(Handle, "__hipRegisterFunction");
  if (!FB || !DeviceName)
    return;
  KernelsByHost[HostFunction] = {FB, FB->Kernels.size()};
  FB->Kernels.push_back(DeviceName);
}

void Runtime::registerVariable(void **Handle, const char *DeviceName) {
  std::lock_guard<std::mutex> Lock(Mutex);
  FatBinary *FB = lookup(Handle, "__hipRegisterVar");
  if (FB && DeviceName)
    FB->Variables.push_back(DeviceName);
}

void *Runtime::registerManagedVariable(void **Handle, void *InitValue,
                                       const char *Name, size_t Size,
                                       unsigned Align) {
  std::lock_guard<std::mutex> Lock(Mutex);
  FatBinary *FB = lookup(Handle, "__hipRegisterManagedVar");
  if (FB && Name)
    FB->Variables.push_back(Name);
  // CLR allocates managed memory initialized from InitValue and stores its
  // address in the host-side pointer; host memory plays that role here.
  void *Memory = nullptr;
  size_t Alignment = Align < sizeof(void *) ? sizeof(void *) : Align;
  Memory = ::operator new(Size ? Size : 1, std::align_val_t(Alignment),
                          std::nothrow); // kept until exit, never freed
  if (!Memory)
    return nullptr;
  if (InitValue && Size)
    memcpy(Memory, InitValue, Size);
  ManagedAllocations.push_back(Memory);
  return Memory;
}

bool Runtime::decodeHipf(FatBinary &FB, OffloadBundle &B) {
  size_t Extent = FB.Binary ? readableExtent(FB.Binary) : 0;
  if (Extent == 0) {
    error("binary %u (HIPF): bundle pointer %p is not readable memory",
          FB.Index, FB.Binary);
    return false;
  }
  // Only the header; the selected code objects are copied afterwards, as
  // CLR's comgr lookup and loader do.
  std::string E = hipstandin::readOffloadBundle(
      static_cast<const uint8_t *>(FB.Binary), Extent, B, /*HeaderOnly=*/true);
  if (!E.empty()) {
    error("binary %u (HIPF): invalid offload bundle: %s", FB.Index, E.c_str());
    return false;
  }
  if (!B.Compressed)
    log("binary %u bundle uncompressed entries %zu", FB.Index,
        B.Entries.size());
  else
    log("binary %u bundle CCOB v%u %s entries %zu", FB.Index, B.CcobVersion,
        B.Compression.c_str(), B.Entries.size());
  return true;
}

void Runtime::load(FatBinary &FB,
                   const std::function<void(size_t)> &AfterAgent) {
  if (FB.Loaded)
    return;
  FB.Loaded = true;
  FB.Code.assign(Agents.size(), AgentCode());
  if (!AgentsValid)
    return;
  if (FB.Magic == HipkMagic) {
    for (size_t I = 0; I < Agents.size(); ++I) {
      loadHipk(FB, I);
      if (AfterAgent)
        AfterAgent(I);
    }
    return;
  }
  OffloadBundle B;
  if (!decodeHipf(FB, B))
    return;
  std::vector<std::string> EntryIds, AgentIsas;
  for (const OffloadBundle::Entry &E : B.Entries)
    EntryIds.push_back(E.Id);
  for (const Agent &A : Agents)
    AgentIsas.push_back(A.IsaName);
  std::vector<clr::Choice> Choices =
      clr::selectCodeObjects(EntryIds, AgentIsas, B.Compressed);
  for (size_t I = 0; I < Agents.size(); ++I) {
    if (Choices[I].Entry < 0) {
      // What the bundle offers to an AMDGPU HIP runtime.
      std::string List;
      for (const std::string &Id : EntryIds)
        if (Id.compare(0, 4, "hip-") == 0 || Id.compare(0, 6, "hipv4-") == 0)
          List += (List.empty() ? "" : ", ") + codeObjectLabel(Id);
      error("binary %u (HIPF): no compatible code object for agent %s "
            "(bundle offers: %s)",
            FB.Index, Agents[I].Name.c_str(),
            List.empty() ? "nothing" : List.c_str());
    } else {
      const OffloadBundle::Entry &E = B.Entries[Choices[I].Entry];
      AgentCode &C = FB.Code[I];
      C.Found = true;
      C.Bytes.assign(B.payload(E), B.payload(E) + E.Size);
      C.Label = codeObjectLabel(E.Id);
    }
    if (AfterAgent)
      AfterAgent(I);
  }
}

void Runtime::resolve(FatBinary &FB) {
  if (FB.Resolved)
    return;
  FB.Resolved = true;
  FB.PerAgent.assign(Agents.size(), Selection());
  auto Check = [&](size_t I) {
    if (FB.Code[I].Found)
      check(FB, I, FB.Code[I].Bytes.data(), FB.Code[I].Bytes.size(),
            FB.Code[I].Label);
  };
  if (!FB.Loaded) {
    load(FB, Check);
    return;
  }
  for (size_t I = 0; I < FB.Code.size(); ++I)
    Check(I);
}

void Runtime::loadHipk(FatBinary &FB, size_t AgentIndex) {
  const Agent &A = Agents[AgentIndex];
  if (!Cache && kpack_cache_create(&Cache) != KPACK_SUCCESS) {
    error("binary %u (HIPK): kpack_cache_create failed", FB.Index);
    Cache = nullptr;
    return;
  }
  char Path[4096];
  size_t Offset = 0;
  kpack_error_t E =
      kpack_discover_binary_path(FB.Binary, Path, sizeof(Path), &Offset);
  if (E != KPACK_SUCCESS) {
    error("binary %u (HIPK): cannot find the file holding the kpack metadata "
          "at %p: %s",
          FB.Index, FB.Binary, kpackErrorName(E));
    return;
  }
  std::vector<std::string> Arches = clr::kpackArchList(A.IsaName);
  std::vector<const char *> ArchList;
  for (const std::string &C : Arches)
    ArchList.push_back(C.c_str());
  void *Data = nullptr;
  size_t Size = 0;
  E = kpack_load_code_object(Cache, FB.Binary, Path,
                             static_cast<uint32_t>(FB.Reserved1),
                             ArchList.data(), ArchList.size(), &Data, &Size);
  if (E != KPACK_SUCCESS) {
    error("binary %u (HIPK, %s, code object #%u): no code object for agent "
          "%s: %s (%s)",
          FB.Index, Path, static_cast<uint32_t>(FB.Reserved1), A.Name.c_str(),
          kpackErrorName(E), describeHipkMetadata(FB.Binary).c_str());
    return;
  }
  log("binary %u kpack %s code object #%u", FB.Index, Path,
      static_cast<uint32_t>(FB.Reserved1));
  // The loader does not say which architecture it picked; the code object
  // says what it was built for.
  CodeObjectInfo Info;
  std::string Target;
  if (hipstandin::readCodeObject(static_cast<const uint8_t *>(Data), Size, Info)
          .empty())
    Target = Info.TargetId;
  AgentCode &C = FB.Code[AgentIndex];
  C.Found = true;
  C.Bytes.assign(static_cast<const uint8_t *>(Data),
                 static_cast<const uint8_t *>(Data) + Size);
  C.Label = Target.empty() ? std::string("?") : Target;
  kpack_free_code_object(Data);
}

void Runtime::check(FatBinary &FB, size_t AgentIndex, const uint8_t *Data,
                    size_t Size, const std::string &CodeObjectTarget) {
  const Agent &A = Agents[AgentIndex];
  Selection &Sel = FB.PerAgent[AgentIndex];
  Sel.Found = true;
  if (!DumpDir.empty()) {
    std::string Name = A.Name;
    for (char &C : Name)
      if (C == ':')
        C = '_';
    std::string Path =
        DumpDir + "/" + std::to_string(FB.Index) + "." + Name + ".co";
    if (std::string E = writeFileAtomically(Path, Data, Size); !E.empty())
      error("cannot write %s: %s", Path.c_str(), E.c_str());
  }
  if (std::string E = hipstandin::readCodeObject(Data, Size, Sel.Info);
      !E.empty()) {
    error("binary %u agent %s: code object %s (%zu bytes) is not a valid "
          "AMDGPU ELF: %s",
          FB.Index, A.Name.c_str(), CodeObjectTarget.c_str(), Size, E.c_str());
    return;
  }
  size_t KernelsFound = 0, VariablesFound = 0;
  for (const std::string &K : FB.Kernels) {
    if (Sel.Info.Symbols.count(K + ".kd")) {
      ++KernelsFound;
      continue;
    }
    error("binary %u agent %s: kernel '%s' has no symbol '%s.kd' in code "
          "object %s",
          FB.Index, A.Name.c_str(), K.c_str(), K.c_str(),
          CodeObjectTarget.c_str());
  }
  for (const std::string &V : FB.Variables) {
    if (Sel.Info.Symbols.count(V)) {
      ++VariablesFound;
      continue;
    }
    error("binary %u agent %s: variable '%s' has no symbol in code object %s",
          FB.Index, A.Name.c_str(), V.c_str(), CodeObjectTarget.c_str());
  }
  Sel.AllResolved = KernelsFound == FB.Kernels.size() &&
                    VariablesFound == FB.Variables.size();
  log("binary %u magic %s agent %s -> code object %s size %zu kernels %zu/%zu "
      "vars %zu/%zu",
      FB.Index, magicName(FB.Magic).c_str(), A.Name.c_str(),
      CodeObjectTarget.c_str(), Size, KernelsFound, FB.Kernels.size(),
      VariablesFound, FB.Variables.size());
}

void Runtime::unregisterFatBinary(void **Handle) {
  std::lock_guard<std::mutex> Lock(Mutex);
  FatBinary *FB = lookup(Handle, "__hipUnregisterFatBinary");
  if (!FB)
    return;
  if (FB->Unregistered) {
    error("binary %u unregistered twice", FB->Index);
    return;
  }
  if (readsAtEnd(*FB))
    resolve(*FB);
  FB->Unregistered = true;
  log("binary %u unregistered%s", FB->Index,
      FB->Loaded ? "" : " (no kernel launched: bundle never read)");
}

int Runtime::launch(const void *HostFunction, Dim3 Grid, Dim3 Block,
                    size_t SharedMem) {
  std::lock_guard<std::mutex> Lock(Mutex);
  auto It = KernelsByHost.find(HostFunction);
  if (It == KernelsByHost.end()) {
    error("hipLaunchKernel: %p is not a registered kernel", HostFunction);
    return hipErrorInvalidDeviceFunction;
  }
  FatBinary &FB = *It->second.first;
  const std::string &Name = FB.Kernels[It->second.second];
  if (!FB.Loaded && Mode != Access::UntilExit)
    log("binary %u first launch (%s): reading its code objects", FB.Index,
        Name.c_str());
  resolve(FB);
  // The current device is agent 0 (the stand-in has no hipSetDevice).
  bool Ok = !FB.PerAgent.empty() && FB.PerAgent[0].Found &&
            FB.PerAgent[0].Info.Symbols.count(Name + ".kd");
  log("launch %s grid %u,%u,%u block %u,%u,%u shared %zu binary %u%s",
      Name.c_str(), Grid.X, Grid.Y, Grid.Z, Block.X, Block.Y, Block.Z,
      SharedMem, FB.Index, Ok ? "" : " failed");
  if (!Ok)
    return FB.PerAgent.empty() || !FB.PerAgent[0].Found
               ? hipErrorNoBinaryForGpu
               : hipErrorInvalidDeviceFunction;
  return hipSuccess;
}

void Runtime::finish() {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Finished)
    return;
  Finished = true;
  // Binaries never unregistered (no atexit ran, or never dlclose'd).
  for (auto &FB : Binaries)
    if (readsAtEnd(*FB))
      resolve(*FB);
  size_t Kernels = 0, Variables = 0;
  for (auto &FB : Binaries) {
    bool Everywhere = !FB->PerAgent.empty();
    for (const Selection &S : FB->PerAgent)
      Everywhere = Everywhere && S.Found && S.AllResolved;
    if (Everywhere) {
      Kernels += FB->Kernels.size();
      Variables += FB->Variables.size();
    }
  }
  fprintf(stderr,
          "hip-standin: %zu binaries, %zu kernels, %zu variables resolved on "
          "%zu agents%s\n",
          Binaries.size(), Kernels, Variables, Agents.size(),
          Errors ? ", with errors" : "");
  if (Cache)
    kpack_cache_destroy(Cache);
  Cache = nullptr;
  if (Errors) {
    fflush(nullptr);
    _exit(ExitStatusOnFailure);
  }
}

/// Runs after the program's atexit handlers (which unregister its binaries)
/// because the library is loaded before the program's constructors register
/// them and is linked with -z nodelete, so this also runs only at exit.
__attribute__((destructor)) void finishAtExit() {
  if (Runtime *R = Runtime::instance())
    R->finish();
}

/// No exception may escape into clang-generated C callers; one that would
/// (only std::bad_alloc is possible) ends the process as a failed check.
template <typename Fn> auto guarded(Fn F) {
  try {
    return F();
  } catch (...) {
    fputs("hip-standin: error: internal error (exception)\n", stderr);
    fflush(nullptr);
    _exit(ExitStatusOnFailure);
  }
}

} // namespace

HIP_STANDIN_API void **__hipRegisterFatBinary(const void *Data) {
  return guarded([&] {
    return Runtime::get().registerFatBinary(
        static_cast<const FatBinaryWrapper *>(Data));
  });
}

HIP_STANDIN_API void
__hipRegisterFunction(void **Modules, const void *HostFunction,
                      char *DeviceFunction, const char *DeviceName,
                      unsigned ThreadLimit, void *Tid, void *Bid,
                      Dim3 *BlockDim, Dim3 *GridDim, int *WSize) {
  (void)DeviceFunction, (void)ThreadLimit, (void)Tid, (void)Bid, (void)BlockDim,
      (void)GridDim, (void)WSize;
  guarded([&] {
    Runtime::get().registerKernel(Modules, HostFunction, DeviceName);
  });
}

HIP_STANDIN_API void __hipRegisterVar(void **Modules, void *Var, char *HostVar,
                                      char *DeviceVar, int Ext, size_t Size,
                                      int Constant, int Global) {
  (void)Var, (void)HostVar, (void)Ext, (void)Size, (void)Constant, (void)Global;
  guarded([&] { Runtime::get().registerVariable(Modules, DeviceVar); });
}

HIP_STANDIN_API void __hipRegisterManagedVar(void **Modules, void **Pointer,
                                             void *InitValue, const char *Name,
                                             size_t Size, unsigned Align) {
  guarded([&] {
    void *Memory = Runtime::get().registerManagedVariable(Modules, InitValue,
                                                          Name, Size, Align);
    if (Pointer)
      *Pointer = Memory;
  });
}

HIP_STANDIN_API void __hipRegisterSurface(void **Modules, void *Var,
                                          char *HostVar, char *DeviceVar,
                                          int Type, int Ext) {
  (void)Var, (void)HostVar, (void)Type, (void)Ext;
  guarded([&] { Runtime::get().registerVariable(Modules, DeviceVar); });
}

HIP_STANDIN_API void __hipRegisterTexture(void **Modules, void *Var,
                                          char *HostVar, char *DeviceVar,
                                          int Type, int Norm, int Ext) {
  (void)Var, (void)HostVar, (void)Type, (void)Norm, (void)Ext;
  guarded([&] { Runtime::get().registerVariable(Modules, DeviceVar); });
}

HIP_STANDIN_API void __hipUnregisterFatBinary(void **Modules) {
  guarded([&] { Runtime::get().unregisterFatBinary(Modules); });
}

HIP_STANDIN_API unsigned __hipPushCallConfiguration(Dim3 Grid, Dim3 Block,
                                                    size_t SharedMem,
                                                    void *Stream) {
  return guarded([&] {
    CallConfigurations.push_back({Grid, Block, SharedMem, Stream});
    return 0u;
  });
}

HIP_STANDIN_API int __hipPopCallConfiguration(Dim3 *Grid, Dim3 *Block,
                                              size_t *SharedMem,
                                              void **Stream) {
  return guarded([&] {
    if (CallConfigurations.empty())
      return hipErrorMissingConfiguration;
    CallConfiguration C = CallConfigurations.back();
    CallConfigurations.pop_back();
    *Grid = C.Grid;
    *Block = C.Block;
    *SharedMem = C.SharedMem;
    *Stream = C.Stream;
    return hipSuccess;
  });
}

HIP_STANDIN_API int hipLaunchKernel(const void *HostFunction, Dim3 Grid,
                                    Dim3 Block, void **Args, size_t SharedMem,
                                    void *Stream) {
  (void)Args, (void)Stream;
  return guarded([&] {
    return Runtime::get().launch(HostFunction, Grid, Block, SharedMem);
  });
}

//===- LoaderCache.cpp - HIPK code-object loader
//---------------------------===//

#include "kpack/LoaderCache.h"
#include "kpack/TargetIdList.h"

#include "kpack/ArchiveReader.h"

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <new>

namespace kpack {

namespace {

constexpr std::string_view TargetTriplePrefix = "amdgcn-amd-amdhsa--";
constexpr std::string_view ArchPlaceholder = "@GFXARCH@";

/// Upstream's rule: set when non-empty and not starting with '0'.
bool envFlag(const char *Name) {
  const char *V = std::getenv(Name);
  return V && V[0] != '\0' && V[0] != '0';
}

std::vector<std::string> envList(const char *Name, const char *Separators) {
  std::vector<std::string> Items;
  const char *V = std::getenv(Name);
  if (!V)
    return Items;
  std::string_view Rest(V);
  while (!Rest.empty()) {
    size_t End = Rest.find_first_of(Separators);
    std::string_view Item = Rest.substr(0, End);
    if (!Item.empty())
      Items.emplace_back(Item);
    if (End == std::string_view::npos)
      break;
    Rest.remove_prefix(End + 1);
  }
  return Items;
}

std::string expandArch(std::string Path, std::string_view Arch) {
  for (size_t Pos = Path.find(ArchPlaceholder); Pos != std::string::npos;
       Pos = Path.find(ArchPlaceholder, Pos + Arch.size()))
    Path.replace(Pos, ArchPlaceholder.size(), Arch);
  return Path;
}

std::string directoryOf(std::string_view Path) {
  size_t Slash = Path.rfind('/');
  if (Slash == std::string_view::npos)
    return ".";
  if (Slash == 0)
    return "/";
  return std::string(Path.substr(0, Slash));
}

std::string joinList(const std::vector<std::string> &Items) {
  std::string Out;
  for (const std::string &I : Items)
    Out += (Out.empty() ? "" : " ") + I;
  return Out.empty() ? "(none)" : Out;
}

} // namespace

std::string_view stripTargetTriple(std::string_view Arch) {
  if (Arch.substr(0, TargetTriplePrefix.size()) == TargetTriplePrefix)
    Arch.remove_prefix(TargetTriplePrefix.size());
  return Arch;
}

LoaderConfig LoaderConfig::fromEnvironment() {
  LoaderConfig C;
  C.PathOverride = envList("ROCM_KPACK_PATH", ":");
  C.PathPrefix = envList("ROCM_KPACK_PATH_PREFIX", ":");
  if (const char *V = std::getenv("ROCM_KPACK_ARCH_OVERRIDE"); V && *V)
    if (!splitTargetIdList(V, C.ArchOverride))
      C.ArchOverride.clear(); // malformed: ignored (reported when debugging)
  C.Disabled = envFlag("ROCM_KPACK_DISABLE");
  C.Debug = envFlag("ROCM_KPACK_DEBUG");
  return C;
}

/// One search path's archive, or why it could not be opened.
struct LoaderCache::Slot {
  std::shared_ptr<const ArchiveReader> Archive;
  ApiError Failure;
};

LoaderCache::LoaderCache(LoaderConfig Config) : Config(std::move(Config)) {}
LoaderCache::~LoaderCache() = default;

LoaderStats LoaderCache::stats() const {
  LoaderStats S;
  S.PathLookups = PathLookups.load();
  S.ArchiveOpens = ArchiveOpens.load();
  S.Loads = Loads.load();
  return S;
}

void LoaderCache::debug(const char *Format, ...) const {
  if (!Config.Debug)
    return;
  char Line[4096];
  va_list Args;
  va_start(Args, Format);
  std::vsnprintf(Line, sizeof(Line), Format, Args);
  va_end(Args);
  std::fprintf(stderr, "kpack: %s\n", Line);
}

std::shared_ptr<LoaderCache::Slot>
LoaderCache::archiveFor(const std::string &Path) {
  // Opening under the lock keeps every path probed at most once; opening reads
  // only a header and a TOC, so the critical section stays short.
  std::lock_guard<std::mutex> Lock(Mutex);
  auto Known = ByRequestedPath.find(Path);
  if (Known != ByRequestedPath.end())
    return Known->second;

  ++PathLookups;
  std::shared_ptr<Slot> S;
  char Resolved[PATH_MAX];
  if (!::realpath(Path.c_str(), Resolved)) {
    S = std::make_shared<Slot>();
    S->Failure =
        ApiError(KPACK_ERROR_FILE_NOT_FOUND,
                 std::string("cannot resolve: ") + std::strerror(errno));
  } else {
    std::string Canonical(Resolved);
    auto Same = ByCanonicalPath.find(Canonical);
    if (Same != ByCanonicalPath.end()) {
      S = Same->second;
    } else {
      S = std::make_shared<Slot>();
      ++ArchiveOpens;
      std::unique_ptr<ArchiveReader> Reader;
      S->Failure = ArchiveReader::open(Canonical, Reader);
      if (Reader)
        debug("opened %s: offers %s", Canonical.c_str(),
              joinList(Reader->gfxArches()).c_str());
      S->Archive = std::move(Reader);
      ByCanonicalPath.emplace(Canonical, S);
    }
  }
  ByRequestedPath.emplace(Path, S);
  return S;
}

ApiError LoaderCache::loadCodeObject(const HipkReference &Ref,
                                     std::string_view BinaryPath,
                                     uint32_t CoIndex,
                                     const std::vector<std::string> &Arches,
                                     void *&Data, size_t &Size) {
  const std::string Key = Ref.KernelName + "#" + std::to_string(CoIndex);
  std::vector<std::string> Requested;
  for (const std::string &A :
       Config.ArchOverride.empty() ? Arches : Config.ArchOverride)
    Requested.emplace_back(stripTargetTriple(A));

  // Search-path templates in priority order; embedded paths are relative to
  // the directory of the binary that carries them.
  std::vector<std::string> Templates;
  if (!Config.PathOverride.empty()) {
    Templates = Config.PathOverride;
  } else {
    Templates = Config.PathPrefix;
    const std::string BinaryDir = directoryOf(BinaryPath);
    for (const std::string &P : Ref.SearchPaths)
      Templates.push_back(!P.empty() && P[0] == '/' ? P : BinaryDir + "/" + P);
  }
  debug("load '%s' for binary '%s'%s", Key.c_str(),
        std::string(BinaryPath).c_str(),
        Config.ArchOverride.empty() ? "" : " (ROCM_KPACK_ARCH_OVERRIDE)");
  debug("requested targets: %s", joinList(Requested).c_str());

  if (Requested.empty()) {
    debug("failed: no target requested");
    return ApiError(KPACK_ERROR_ARCH_NOT_FOUND, "no target requested");
  }
  bool AnyArchiveOpened = false;
  for (const std::string &Arch : Requested) {
    for (const std::string &Template : Templates) {
      const std::string Path = expandArch(Template, Arch);
      std::shared_ptr<Slot> S = archiveFor(Path);
      if (!S->Archive) {
        debug("  %s: not usable: %s (%s)", Path.c_str(),
              S->Failure.message().c_str(), errorCodeName(S->Failure.code()));
        continue;
      }
      AnyArchiveOpened = true;
      const ArchiveReader &Archive = *S->Archive;
      const ArchiveReader::Entry *E = Archive.find(Key, Arch);
      if (!E) {
        debug("  %s: no '%s' for %s; archive offers: %s", Path.c_str(),
              Key.c_str(), Arch.c_str(), joinList(Archive.gfxArches()).c_str());
        continue;
      }
      void *Buffer = nullptr;
      ApiError Err = Archive.read(
          *E, [&Buffer](size_t N) { return Buffer = std::malloc(N ? N : 1); });
      if (Err) {
        std::free(Buffer);
        debug("  %s: reading '%s' for %s failed: %s", Path.c_str(), Key.c_str(),
              Arch.c_str(), Err.message().c_str());
        return Err;
      }
      debug("  %s: loaded '%s' for %s (%llu bytes)", Path.c_str(), Key.c_str(),
            Arch.c_str(), static_cast<unsigned long long>(E->OriginalSize));
      ++Loads;
      Data = Buffer;
      Size = static_cast<size_t>(E->OriginalSize);
      return ApiError::success();
    }
  }
  if (!AnyArchiveOpened) {
    debug("failed: no archive could be opened");
    return ApiError(KPACK_ERROR_ARCHIVE_NOT_FOUND,
                    "no archive could be opened for '" + Key + "'");
  }
  debug("failed: no archive has '%s' for any requested target", Key.c_str());
  return ApiError(KPACK_ERROR_ARCH_NOT_FOUND,
                  "no archive has '" + Key + "' for a requested target");
}

} // namespace kpack

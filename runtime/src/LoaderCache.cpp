//===- LoaderCache.cpp - HIPK code-object loader --------------------------===//

#include "kpack/LoaderCache.h"

#include "kpack/ArchiveReader.h"
#include "kpack/TargetId.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <new>

namespace kpack {

namespace {

std::string joinList(const std::vector<std::string> &Items) {
  std::string Out;
  for (const std::string &I : Items)
    Out += (Out.empty() ? "" : " ") + I;
  return Out.empty() ? "(none)" : Out;
}

} // namespace

/// One search path's archive, or why it could not be opened.
struct LoaderCache::Slot {
  std::shared_ptr<const ArchiveReader> Archive;
  Status Failure;
};

LoaderCache::LoaderCache(KpackEnvironment Env) : Env(std::move(Env)) {}
LoaderCache::~LoaderCache() = default;

LoaderStats LoaderCache::stats() const {
  LoaderStats S;
  S.PathLookups = PathLookups.load();
  S.ArchiveOpens = ArchiveOpens.load();
  S.Loads = Loads.load();
  return S;
}

void LoaderCache::debug(const char *Format, ...) const {
  if (!Env.Debug)
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
        Status(KPACK_ERROR_FILE_NOT_FOUND,
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

Status LoaderCache::search(const KpackMetadata &Ref,
                           std::string_view BinaryPath, uint32_t CoIndex,
                           const std::vector<std::string> &Arches,
                           const FoundFn &Use) {
  const std::string Key = Ref.KernelName + "#" + std::to_string(CoIndex);
  const std::vector<std::string> &Requested =
      Env.ArchOverride.empty() ? Arches : Env.ArchOverride;
  const std::vector<std::string> Templates =
      searchPathTemplates(Env, Ref.SearchPaths, BinaryPath);
  debug("load '%s' for binary '%s'%s", Key.c_str(),
        std::string(BinaryPath).c_str(),
        Env.ArchOverride.empty() ? "" : " (ROCM_KPACK_ARCH_OVERRIDE)");
  debug("requested targets: %s", joinList(Requested).c_str());
  if (Requested.empty()) {
    debug("failed: no target requested");
    return Status(KPACK_ERROR_INVALID_ARGUMENT, "no target requested");
  }

  // docs/FORMAT.md §1.4: requested targets in order, each one's feature
  // subsets most specific first, each search path in order.
  bool AnyArchiveOpened = false, AnyArchListed = false;
  Status ReadFailure;
  for (const std::string &Arch : Requested) {
    const std::vector<std::string> Candidates = featureSubsets(Arch);
    debug("target %s: candidates %s", Arch.c_str(),
          joinList(Candidates).c_str());
    for (const std::string &Candidate : Candidates) {
      for (const std::string &Template : Templates) {
        const std::string Path = expandArchPlaceholder(Template, Candidate);
        std::shared_ptr<Slot> S = archiveFor(Path);
        if (!S->Archive) {
          debug("  %s: not usable: %s (%s)", Path.c_str(),
                S->Failure.message().c_str(),
                errorCodeName(S->Failure.code()));
          continue;
        }
        AnyArchiveOpened = true;
        const ArchiveReader &Archive = *S->Archive;
        const std::vector<std::string> &Offered = Archive.gfxArches();
        if (std::find(Offered.begin(), Offered.end(), Candidate) ==
            Offered.end()) {
          debug("  %s: does not list %s; archive offers: %s", Path.c_str(),
                Candidate.c_str(), joinList(Offered).c_str());
          continue;
        }
        AnyArchListed = true;
        const ArchiveReader::Entry *E = Archive.find(Key, Candidate);
        if (!E) {
          debug("  %s: lists %s but has no '%s'; searching on", Path.c_str(),
                Candidate.c_str(), Key.c_str());
          continue;
        }
        Status Err = Use(Path, S, E, Candidate);
        if (Err) {
          ReadFailure = std::move(Err);
          continue;
        }
        return Status::ok();
      }
    }
  }
  if (ReadFailure) {
    debug("failed: '%s' could not be read: %s", Key.c_str(),
          ReadFailure.message().c_str());
    return ReadFailure;
  }
  if (AnyArchListed) {
    debug("failed: archives list a requested target but none has '%s'",
          Key.c_str());
    return Status(KPACK_ERROR_KERNEL_NOT_FOUND,
                  "no archive listing a requested target has '" + Key + "'");
  }
  if (AnyArchiveOpened) {
    debug("failed: no archive lists a requested target");
    return Status(KPACK_ERROR_ARCH_NOT_FOUND,
                  "no archive lists a requested target for '" + Key + "'");
  }
  debug("failed: no archive could be opened");
  return Status(KPACK_ERROR_ARCHIVE_NOT_FOUND,
                "no archive could be opened for '" + Key + "'");
}

Status LoaderCache::loadCodeObject(const KpackMetadata &Ref,
                                   std::string_view BinaryPath,
                                   uint32_t CoIndex,
                                   const std::vector<std::string> &Arches,
                                   void *&Data, size_t &Size) {
  const std::string Key = Ref.KernelName + "#" + std::to_string(CoIndex);
  return search(Ref, BinaryPath, CoIndex, Arches,
                [&](const std::string &Path, const std::shared_ptr<Slot> &S,
                    const void *Found, const std::string &Candidate) {
                  const auto &E = *static_cast<const ArchiveReader::Entry *>(Found);
                  void *Buffer = nullptr;
                  Status Err = S->Archive->read(E, [&Buffer](size_t N) {
                    return Buffer = std::malloc(N ? N : 1);
                  });
                  if (Err) {
                    std::free(Buffer);
                    debug("  %s: reading '%s' for %s failed: %s; searching on",
                          Path.c_str(), Key.c_str(), Candidate.c_str(),
                          Err.message().c_str());
                    return Err;
                  }
                  debug("  %s: loaded '%s' for %s (%llu bytes)", Path.c_str(),
                        Key.c_str(), Candidate.c_str(),
                        static_cast<unsigned long long>(E.OriginalSize));
                  ++Loads;
                  Data = Buffer;
                  Size = static_cast<size_t>(E.OriginalSize);
                  return Status::ok();
                });
}

Status LoaderCache::locateCodeObject(const KpackMetadata &Ref,
                                     std::string_view BinaryPath,
                                     uint32_t CoIndex,
                                     const std::vector<std::string> &Arches,
                                     LocatedCodeObject &Out) {
  const std::string Key = Ref.KernelName + "#" + std::to_string(CoIndex);
  return search(Ref, BinaryPath, CoIndex, Arches,
                [&](const std::string &Path, const std::shared_ptr<Slot> &S,
                    const void *Found, const std::string &Candidate) {
                  const auto &E = *static_cast<const ArchiveReader::Entry *>(Found);
                  debug("  %s: located '%s' for %s (%llu bytes, not read)",
                        Path.c_str(), Key.c_str(), Candidate.c_str(),
                        static_cast<unsigned long long>(E.OriginalSize));
                  Out.Archive = S->Archive;
                  Out.Entry = Found;
                  Out.ArchivePath = Path;
                  Out.Target = Candidate;
                  Out.Size = E.OriginalSize;
                  return Status::ok();
                });
}

Status LoaderCache::readLocated(
    const LocatedCodeObject &Located,
    const std::function<void *(size_t)> &Allocate) const {
  if (!Located.Archive || !Located.Entry)
    return Status(KPACK_ERROR_INVALID_ARGUMENT, "no code object located");
  const auto &E = *static_cast<const ArchiveReader::Entry *>(Located.Entry);
  Status Err = Located.Archive->read(E, Allocate);
  if (Err)
    debug("%s: reading '%s' for %s failed: %s", Located.ArchivePath.c_str(),
          E.Key.c_str(), E.Arch.c_str(), Err.message().c_str());
  else
    debug("%s: read '%s' for %s (%llu bytes)", Located.ArchivePath.c_str(),
          E.Key.c_str(), E.Arch.c_str(),
          static_cast<unsigned long long>(E.OriginalSize));
  return Err;
}

} // namespace kpack

//===- LoaderCache.cpp - HIPK code-object loader --------------------------===//

#include "kpack/LoaderCache.h"

#include "kpack/ArchiveReader.h"
#include "kpack/Platform.h"
#include "kpack/Resolution.h"
#include "kpack/TargetId.h"

#include <algorithm>
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

/// What a path named when it was probed: a file's identity, or nothing. A
/// failure is reused only while the path still names the same thing.
struct LoaderCache::FileStamp : platform::FileIdentity {
  static FileStamp of(const std::string &Path) {
    FileStamp S;
    static_cast<platform::FileIdentity &>(S) = platform::FileIdentity::of(Path);
    return S;
  }
};

/// One search path's archive, or why it could not be opened. Archive,
/// Failure and Stamp are written once, before Ready is set under Mutex, and
/// only read after.
struct LoaderCache::Slot {
  std::shared_ptr<const ArchiveReader> Archive;
  Status Failure;
  FileStamp Stamp;       ///< of the path, taken before probing it
  std::string Canonical; ///< its ByCanonicalPath key, if any
  bool Ready = false;    ///< under Mutex
};

namespace {

/// Every live LoaderCache, for the fork handlers. Never destroyed (a cache
/// may outlive static destruction).
struct ForkRegistry {
  std::mutex Mutex;
  std::vector<LoaderCache *> Caches;
};

ForkRegistry &registry();

void forkPrepare() {
  ForkRegistry &R = registry();
  R.Mutex.lock();
  for (LoaderCache *C : R.Caches)
    C->forkPrepare();
}
void forkParent() {
  ForkRegistry &R = registry();
  for (LoaderCache *C : R.Caches)
    C->forkParent();
  R.Mutex.unlock();
}
void forkChild() {
  ForkRegistry &R = registry();
  for (LoaderCache *C : R.Caches)
    C->forkChild();
  R.Mutex.unlock();
}

ForkRegistry &registry() {
  static ForkRegistry *R = [] {
    auto *New = new ForkRegistry;
    platform::registerForkHandlers(forkPrepare, forkParent, forkChild);
    return New;
  }();
  return *R;
}

#ifndef _WIN32
/// The registry (and its fork handlers) is made when the library is loaded,
/// not by the first cache: a fork on another thread while the first cache
/// was making it left the child a static-initialization guard still marked
/// running (libstdc++'s guard, and ThreadSanitizer's, are not reset in a
/// child), and the child's own first cache waited for it for ever
/// (LoaderFork.ChildMakesACacheWhileAnotherThreadMakesTheFirst).
__attribute__((constructor)) void makeRegistryAtLoad() { (void)registry(); }
#endif

} // namespace

LoaderCache::LoaderCache(KpackEnvironment Env) : Env(std::move(Env)) {
  ForkRegistry &R = registry();
  std::lock_guard<std::mutex> Lock(R.Mutex);
  R.Caches.push_back(this);
}

LoaderCache::~LoaderCache() {
  ForkRegistry &R = registry();
  std::lock_guard<std::mutex> Lock(R.Mutex);
  R.Caches.erase(std::find(R.Caches.begin(), R.Caches.end(), this));
}

void LoaderCache::forkPrepare() { Mutex.lock(); }
void LoaderCache::forkParent() { Mutex.unlock(); }

void LoaderCache::forkChild() {
  // The child has only the forking thread. Archives another thread was
  // opening or reading stay in the state it left them in (their locks may
  // be held for good): forget every archive and open them again when the
  // child needs them. An archive still referenced (by a vanished thread's
  // load, or a located code object) stays alive through its reference.
  ByRequestedPath.clear();
  ByCanonicalPath.clear();
  new (&Opened) std::condition_variable(); // counted the parent's waiters
  Mutex.unlock();
}

LoaderStats LoaderCache::stats() const {
  LoaderStats S;
  S.PathLookups = PathLookups.load();
  S.ArchiveOpens = ArchiveOpens.load();
  S.Loads = Loads.load();
  S.FailureChecks = FailureChecks.load();
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
  // The lock guards the maps only: it is never held across a probe, an open
  // or a read, so a fork finds it free at once (forkPrepare) and a slow file
  // (a FIFO, a network mount) delays only the loads that need it.
  std::unique_lock<std::mutex> Lock(Mutex);
  for (;;) {
    auto Known = ByRequestedPath.find(Path);
    if (Known != ByRequestedPath.end()) {
      std::shared_ptr<Slot> S = Known->second;
      if (!S->Ready) { // being opened by another load
        Opened.wait(Lock);
        continue;
      }
      if (S->Archive)
        return S;
      // A failure holds while the path names what it named then.
      Lock.unlock();
      ++FailureChecks;
      const bool Unchanged = FileStamp::of(Path) == S->Stamp;
      if (!Unchanged)
        debug("%s changed since it failed; probing it again", Path.c_str());
      Lock.lock();
      if (Unchanged)
        return S;
      auto Again = ByRequestedPath.find(Path);
      if (Again != ByRequestedPath.end() && Again->second == S)
        ByRequestedPath.erase(Again);
      if (!S->Canonical.empty()) {
        auto Same = ByCanonicalPath.find(S->Canonical);
        if (Same != ByCanonicalPath.end() && Same->second == S)
          ByCanonicalPath.erase(Same);
      }
      continue;
    }
    Lock.unlock();

    ++PathLookups;
    const FileStamp Stamp = FileStamp::of(Path); // before what it describes
    std::string Canonical;
    if (Status NotFound = platform::canonicalPath(Path, Canonical)) {
      auto S = std::make_shared<Slot>();
      S->Failure = std::move(NotFound);
      S->Stamp = Stamp;
      S->Ready = true;
      Lock.lock();
      return ByRequestedPath.emplace(Path, S).first->second;
    }
    Lock.lock();
    auto Same = ByCanonicalPath.find(Canonical);
    if (Same != ByCanonicalPath.end()) {
      // Another spelling's slot (or another load's, just made): checked as
      // if found under this one.
      ByRequestedPath.emplace(Path, Same->second);
      continue;
    }
    auto S = std::make_shared<Slot>();
    S->Canonical = Canonical;
    S->Stamp = Stamp;
    ByCanonicalPath.emplace(Canonical, S);
    ByRequestedPath[Path] = S;
    Lock.unlock();

    ++ArchiveOpens;
    if (BeforeOpenForTesting)
      BeforeOpenForTesting(Canonical);
    std::unique_ptr<ArchiveReader> Reader;
    Status Failure = ArchiveReader::open(Canonical, Reader);
    if (Reader)
      debug("opened %s: offers %s", Canonical.c_str(),
            joinList(Reader->gfxArches()).c_str());
    Lock.lock();
    S->Failure = std::move(Failure);
    S->Archive = std::move(Reader);
    S->Ready = true;
    Opened.notify_all();
    return S;
  }
}

Status LoaderCache::search(const KpackMetadata &Ref,
                           std::string_view BinaryPath, uint32_t CoIndex,
                           const std::vector<std::string> &Arches,
                           ResolutionAccount *Account, const FoundFn &Use) {
  const std::string Key = Ref.KernelName + "#" + std::to_string(CoIndex);
  const std::vector<std::string> &Requested =
      Env.ArchOverride.empty() ? Arches : Env.ArchOverride;
  const std::vector<SearchTemplate> Templates =
      searchTemplates(Env, Ref.SearchPaths, BinaryPath);
  if (Account) {
    Account->Key = Key;
    Account->BinaryPath = std::string(BinaryPath);
    Account->BinaryLinkId = Ref.LinkId;
    Account->ArchOverride = !Env.ArchOverride.empty();
    Account->Requested.insert(Account->Requested.end(), Requested.begin(),
                              Requested.end());
    Account->Templates = Templates;
  }
  auto Record = [Account](ProbeRecord R) {
    if (Account)
      Account->Probes.push_back(std::move(R));
  };
  auto Finish = [Account](Status S) {
    if (Account)
      Account->Result = S;
    return S;
  };
  debug("load '%s' for binary '%s'%s", Key.c_str(),
        std::string(BinaryPath).c_str(),
        Env.ArchOverride.empty() ? "" : " (ROCM_KPACK_ARCH_OVERRIDE)");
  debug("requested targets: %s", joinList(Requested).c_str());
  if (Requested.empty()) {
    debug("failed: no target requested");
    return Finish(Status(KPACK_ERROR_INVALID_ARGUMENT, "no target requested"));
  }

  // docs/FORMAT.md §1.4: requested targets in order, each one's feature
  // subsets most specific first, each search path in order.
  bool AnyArchiveOpened = false, AnyArchListed = false, AnyStale = false;
  Status ReadFailure;
  for (const std::string &Arch : Requested) {
    const std::vector<std::string> Candidates = featureSubsets(Arch);
    debug("target %s: candidates %s", Arch.c_str(),
          joinList(Candidates).c_str());
    for (const std::string &Candidate : Candidates) {
      for (size_t T = 0; T < Templates.size(); ++T) {
        const std::string Path =
            expandArchPlaceholder(Templates[T].Path, Candidate);
        ProbeRecord Probe;
        if (Account) {
          Probe.Request = Arch;
          Probe.Candidate = Candidate;
          Probe.Path = Path;
          Probe.Template = T;
        }
        std::shared_ptr<Slot> S = archiveFor(Path);
        if (!S->Archive) {
          debug("  %s: not usable: %s (%s)", Path.c_str(),
                S->Failure.message().c_str(),
                errorCodeName(S->Failure.code()));
          Probe.What = ProbeRecord::Outcome::Unusable;
          if (Account)
            Probe.Failure = S->Failure;
          Record(std::move(Probe));
          continue;
        }
        AnyArchiveOpened = true;
        const ArchiveReader &Archive = *S->Archive;
        const std::vector<std::string> &Offered = Archive.gfxArches();
        if (Account)
          Probe.Offered = Offered;
        if (std::find(Offered.begin(), Offered.end(), Candidate) ==
            Offered.end()) {
          debug("  %s: does not list %s; archive offers: %s", Path.c_str(),
                Candidate.c_str(), joinList(Offered).c_str());
          Probe.What = ProbeRecord::Outcome::NotListed;
          Record(std::move(Probe));
          continue;
        }
        AnyArchListed = true;
        const ArchiveReader::Entry *E = Archive.find(Key, Candidate);
        if (!E) {
          debug("  %s: lists %s but has no '%s'; searching on", Path.c_str(),
                Candidate.c_str(), Key.c_str());
          Probe.What = ProbeRecord::Outcome::NoKey;
          Record(std::move(Probe));
          continue;
        }
        // docs/format-extensions.md, "Link identity": an entry written by
        // another link of the binary is refused like a missing one.
        const std::string_view EntryLinkId = E->metadataValue(LinkIdKey);
        if (isStaleEntry(Ref.LinkId, EntryLinkId)) {
          debug("  %s: '%s' for %s is from another link (link_id %s, the "
                "binary's %s); searching on",
                Path.c_str(), Key.c_str(), Candidate.c_str(),
                std::string(EntryLinkId).c_str(), Ref.LinkId.c_str());
          AnyStale = true;
          Probe.What = ProbeRecord::Outcome::Stale;
          if (Account)
            Probe.EntryLinkId = std::string(EntryLinkId);
          Record(std::move(Probe));
          continue;
        }
        Status Err = Use(Path, S, E, Candidate);
        if (Err) {
          Probe.What = ProbeRecord::Outcome::ReadFailed;
          if (Account)
            Probe.Failure = Err;
          Record(std::move(Probe));
          ReadFailure = std::move(Err);
          continue;
        }
        Probe.What = ProbeRecord::Outcome::Found;
        Probe.Size = E->OriginalSize;
        if (Account)
          Account->Found = int(Account->Probes.size());
        Record(std::move(Probe));
        return Finish(Status::ok());
      }
    }
  }
  if (ReadFailure) {
    debug("failed: '%s' could not be read: %s", Key.c_str(),
          ReadFailure.message().c_str());
    return Finish(ReadFailure);
  }
  if (AnyStale) {
    debug("failed: the archives listing a requested target have '%s' only "
          "from another link of the binary",
          Key.c_str());
    return Finish(Status(KPACK_ERROR_KERNEL_NOT_FOUND,
                         "the archives have '" + Key +
                             "' only from another link of the binary"));
  }
  if (AnyArchListed) {
    debug("failed: archives list a requested target but none has '%s'",
          Key.c_str());
    return Finish(Status(KPACK_ERROR_KERNEL_NOT_FOUND,
                         "no archive listing a requested target has '" + Key +
                             "'"));
  }
  if (AnyArchiveOpened) {
    debug("failed: no archive lists a requested target");
    return Finish(Status(KPACK_ERROR_ARCH_NOT_FOUND,
                         "no archive lists a requested target for '" + Key +
                             "'"));
  }
  debug("failed: no archive could be opened");
  return Finish(Status(KPACK_ERROR_ARCHIVE_NOT_FOUND,
                       "no archive could be opened for '" + Key + "'"));
}

void LoaderCache::explain(ResolutionAccount &A) {
  if (!A.found()) {
    // The archives beside each @GFXARCH@ search path, named for targets
    // that were not asked for: the clue to a GPU whose target (or xnack or
    // sramecc mode) no installed archive serves.
    std::vector<std::string> Known;
    for (const ProbeRecord &P : A.Probes)
      Known.push_back(P.Path);
    for (const SiblingArchive &S : A.Siblings)
      Known.push_back(S.Path);
    std::vector<std::pair<std::string, std::string>> Listed;
    for (const SearchTemplate &T : A.Templates) {
      const std::string Name = fileNameOf(T.Path);
      const size_t At = Name.find(ArchPlaceholder);
      if (At == std::string::npos)
        continue;
      std::string Dir = directoryOf(T.Path);
      if (std::find(Listed.begin(), Listed.end(), std::make_pair(Dir, Name)) !=
          Listed.end())
        continue;
      Listed.emplace_back(Dir, Name);
      std::vector<std::string> Names;
      if (platform::listDirectory(Dir, Names))
        continue;
      std::sort(Names.begin(), Names.end());
      const std::string Prefix = Name.substr(0, At);
      const std::string Suffix = Name.substr(At + ArchPlaceholder.size());
      for (const std::string &N : Names) {
        if (N.size() <= Prefix.size() + Suffix.size() ||
            N.compare(0, Prefix.size(), Prefix) != 0 ||
            N.compare(N.size() - Suffix.size(), Suffix.size(), Suffix) != 0)
          continue;
        std::string Path =
            platform::isDirectorySeparator(Dir.back()) ? Dir + N : Dir + "/" + N;
        if (std::find(Known.begin(), Known.end(), Path) != Known.end())
          continue;
        Known.push_back(Path);
        SiblingArchive Sib;
        Sib.Path = Path;
        Sib.NameTarget =
            N.substr(Prefix.size(), N.size() - Prefix.size() - Suffix.size());
        std::shared_ptr<Slot> S = archiveFor(Path);
        if (S->Archive)
          Sib.Offered = S->Archive->gfxArches();
        else
          Sib.Failure = S->Failure;
        A.Siblings.push_back(std::move(Sib));
      }
    }
  }
  diagnose(A);
}

Status LoaderCache::loadCodeObject(const KpackMetadata &Ref,
                                   std::string_view BinaryPath,
                                   uint32_t CoIndex,
                                   const std::vector<std::string> &Arches,
                                   void *&Data, size_t &Size,
                                   ResolutionAccount *Account) {
  const std::string Key = Ref.KernelName + "#" + std::to_string(CoIndex);
  // Under ROCM_KPACK_DEBUG a failed load's trace ends with its diagnosis.
  ResolutionAccount Local;
  if (!Account && Env.Debug)
    Account = &Local;
  Status Result = search(Ref, BinaryPath, CoIndex, Arches, Account,
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
  if (Result && Account == &Local)
    traceDiagnosis(Local);
  return Result;
}

void LoaderCache::traceDiagnosis(ResolutionAccount &Account) {
  explain(Account);
  debug("diagnosis: %s", Account.line().c_str());
}

Status LoaderCache::locateCodeObject(const KpackMetadata &Ref,
                                     std::string_view BinaryPath,
                                     uint32_t CoIndex,
                                     const std::vector<std::string> &Arches,
                                     LocatedCodeObject &Out,
                                     ResolutionAccount *Account) {
  const std::string Key = Ref.KernelName + "#" + std::to_string(CoIndex);
  ResolutionAccount Local;
  if (!Account && Env.Debug)
    Account = &Local;
  Status Result = search(Ref, BinaryPath, CoIndex, Arches, Account,
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
  if (Result && Account == &Local)
    traceDiagnosis(Local);
  return Result;
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

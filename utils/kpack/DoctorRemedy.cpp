//===- DoctorRemedy.cpp - kpack doctor: what pip would install ------------===//
//
// A binary installed by pip belongs to a distribution whose RECORD lists it,
// in a site-packages directory (the nearest directory above the binary that
// holds *.dist-info directories). The host wheels `kpack split-wheel` (and
// upstream's splitter) write name their device wheels in METADATA:
//   Provides-Extra: device-gfx942
//   Requires-Dist: pkg-device-gfx942 == 1.0; extra == "device-gfx942"
//   Requires-Dist: pkg-device-gfx9-4 == 1.0; extra == "device-gfx942"
// and the device wheel of a target ID is the one of its bundle key
// (kpack/BundleKeys.h: gfx942 -> pkg-device-gfx942, gfx11-generic ->
// pkg-device-gfx11), so the distribution that ships a missing archive, and
// the extra that installs it, follow from what is installed.
//
//===----------------------------------------------------------------------===//

#include "Doctor.h"

#include "kpack/BundleKeys.h"
#include "kpack/Wheel.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <set>

using namespace llvm;

namespace kpack {
namespace doctor {

namespace {

struct Distribution {
  std::string Name, Version;
  std::vector<std::string> Extras;
  std::vector<Requirement> Requires;
};

struct Site {
  std::string Path;
  std::vector<Distribution> Dists;
  StringMap<size_t> Owner;             ///< RECORD path -> index into Dists
  std::set<std::string> Installed;     ///< normalised names
};

const char *levelName(BundleLevel L) {
  switch (L) {
  case BundleLevel::Target:
    return "device wheel";
  case BundleLevel::SubFamily:
    return "sub-family wheel";
  case BundleLevel::Family:
    return "family wheel";
  }
  return "wheel";
}

/// The bundle a device distribution "<prefix>-<key, '_' -> '-'>" is for:
/// the longest suffix after a '-' that names a bundle.
std::optional<PackagingBundle> bundleOfDistribution(StringRef Name) {
  const std::string N = normalizeDistributionName(Name);
  for (size_t At = N.find('-'); At != std::string::npos;
       At = N.find('-', At + 1)) {
    std::string Key = N.substr(At + 1);
    std::replace(Key.begin(), Key.end(), '-', '_');
    if (std::optional<PackagingBundle> B = lookupBundle(Key))
      return B;
  }
  return std::nullopt;
}

std::string readText(const Twine &Path) {
  auto Buf = MemoryBuffer::getFile(Path);
  return Buf ? (*Buf)->getBuffer().str() : std::string();
}

/// The site-packages directory Dir is, loaded; none if it holds no
/// *.dist-info directory.
std::unique_ptr<Site> loadSite(StringRef Dir) {
  std::vector<std::string> DistInfos;
  std::error_code EC;
  for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (StringRef(It->path()).ends_with(".dist-info") &&
        sys::fs::is_directory(It->path()))
      DistInfos.push_back(It->path());
  if (DistInfos.empty())
    return nullptr;
  std::sort(DistInfos.begin(), DistInfos.end());
  auto S = std::make_unique<Site>();
  S->Path = Dir.str();
  for (const std::string &DI : DistInfos) {
    Distribution D;
    std::string Meta = readText(DI + "/METADATA");
    if (Expected<WheelHeaderFile> M =
            WheelHeaderFile::parse(Meta, "'" + DI + "/METADATA'")) {
      D.Name = M->get("Name").value_or("");
      D.Version = M->get("Version").value_or("");
      D.Extras = M->getAll("Provides-Extra");
      for (const std::string &R : M->getAll("Requires-Dist"))
        if (std::optional<Requirement> Req = parseRequirement(R))
          D.Requires.push_back(std::move(*Req));
    } else {
      consumeError(M.takeError());
    }
    if (D.Name.empty()) // no METADATA: the directory's name
      D.Name = sys::path::filename(StringRef(DI).drop_back(10)).rsplit('-').first.str();
    S->Installed.insert(normalizeDistributionName(D.Name));
    std::string Record = readText(DI + "/RECORD");
    if (Expected<std::vector<RecordEntry>> Rows =
            parseRecord(Record, "'" + DI + "/RECORD'")) {
      for (const RecordEntry &R : *Rows)
        S->Owner.try_emplace(R.Path, S->Dists.size());
    } else {
      consumeError(Rows.takeError());
    }
    S->Dists.push_back(std::move(D));
  }
  return S;
}

} // namespace

struct WheelIndex::Impl {
  std::mutex Mutex;
  /// Directory -> the site it is or is below (null: none), per directory
  /// looked at.
  std::map<std::string, Site *> SiteOf;
  std::vector<std::unique_ptr<Site>> Sites;

  Site *siteFor(StringRef Binary) {
    std::vector<std::string> Visited;
    Site *Found = nullptr;
    for (StringRef Dir = sys::path::parent_path(Binary); !Dir.empty();
         Dir = sys::path::parent_path(Dir)) {
      auto It = SiteOf.find(Dir.str());
      if (It != SiteOf.end()) {
        Found = It->second;
        break;
      }
      Visited.push_back(Dir.str());
      if (std::unique_ptr<Site> S = loadSite(Dir)) {
        Found = S.get();
        Sites.push_back(std::move(S));
        break;
      }
      if (Dir == sys::path::root_path(Dir))
        break;
    }
    for (const std::string &V : Visited)
      SiteOf[V] = Found;
    return Found;
  }

  const Distribution *ownerOf(StringRef Binary, Site *&S) {
    S = siteFor(Binary);
    if (!S || !Binary.starts_with(S->Path))
      return nullptr;
    StringRef Rel = Binary.substr(S->Path.size()).ltrim('/');
    auto It = S->Owner.find(Rel);
    return It == S->Owner.end() ? nullptr : &S->Dists[It->second];
  }
};

WheelIndex::WheelIndex() : P(std::make_unique<Impl>()) {}
WheelIndex::~WheelIndex() = default;

std::string WheelIndex::owner(const std::string &Binary) {
  std::lock_guard<std::mutex> Lock(P->Mutex);
  Site *S = nullptr;
  const Distribution *D = P->ownerOf(Binary, S);
  return D ? D->Name : std::string();
}

std::vector<std::string>
WheelIndex::remedies(const std::string &Binary, const TargetId &Gpu,
                     const std::vector<std::string> &Missing) {
  std::lock_guard<std::mutex> Lock(P->Mutex);
  Site *S = nullptr;
  const Distribution *H = P->ownerOf(Binary, S);
  if (!H)
    return {};
  const std::string GpuExtra =
      "device-" + targetIdNamePart(Gpu.Processor, '-');
  for (const std::string &Candidate : Missing) {
    std::optional<std::string> Key = bundleKeyFor(Candidate);
    if (!Key)
      continue;
    // The device distribution of Key: "<prefix>-<key>" among H's
    // requirements.
    const std::string Suffix = "-" + normalizeDistributionName(*Key);
    const Requirement *Ships = nullptr;
    for (const Requirement &R : H->Requires) {
      const std::string N = normalizeDistributionName(R.Name);
      if (N.size() > Suffix.size() &&
          N.compare(N.size() - Suffix.size(), Suffix.size(), Suffix) == 0) {
        Ships = &R;
        break;
      }
    }
    if (!Ships)
      continue;
    std::optional<PackagingBundle> Bundle = lookupBundle(*Key);
    const std::string What =
        std::string(Bundle ? levelName(Bundle->Level) : "device wheel") + " " +
        *Key + ", which ships the archive for " + Candidate;
    const std::string Pinned =
        Ships->Name + (Ships->Version.empty() ? "" : "==" + Ships->Version);
    if (S->Installed.count(normalizeDistributionName(Ships->Name)))
      return {"'" + Ships->Name + "' (the " + What +
              ") is installed but its archive is not there: reinstall it: "
              "pip install --force-reinstall '" + Pinned + "'"};
    std::vector<std::string> Extras;
    for (const Requirement &R : H->Requires)
      if (!R.Extra.empty() && normalizeDistributionName(R.Name) ==
                                  normalizeDistributionName(Ships->Name))
        Extras.push_back(R.Extra);
    if (std::find(Extras.begin(), Extras.end(), GpuExtra) != Extras.end())
      return {"pip install '" + H->Name + "[" + GpuExtra + "]' (installs '" +
              Ships->Name + "', the " + What + ")"};
    std::string In;
    for (const std::string &X : Extras)
      In += (In.empty() ? "" : ", ") + H->Name + "[" + X + "]";
    return {"pip install '" + Pinned + "' (the " + What + "; '" + H->Name +
            "' has no extra " + GpuExtra +
            (In.empty() ? std::string() : "; it comes with " + In) + ")"};
  }
  std::string Offered;
  for (const std::string &X : H->Extras)
    if (StringRef(X).starts_with("device-") && X != "device-all")
      Offered += (Offered.empty() ? "" : ", ") + X;
  return {"'" + H->Name + "' ships no device code for " + Gpu.str() +
          (Offered.empty() ? std::string(" (it has no device extras)")
                           : " (its device extras: " + Offered + ")") +
          ": install a build of it for " + Gpu.Processor +
          ", or build it from source with --offload-arch=" + Gpu.str()};
}

std::vector<ExtraProblem>
WheelIndex::incompleteExtras(const TargetId &Gpu,
                             const std::vector<std::string> &Binaries) {
  std::lock_guard<std::mutex> Lock(P->Mutex);
  const std::string GpuExtra =
      "device-" + targetIdNamePart(Gpu.Processor, '-');
  std::vector<ExtraProblem> Out;
  std::set<const Distribution *> Seen;
  for (const std::string &B : Binaries) {
    Site *S = nullptr;
    const Distribution *H = P->ownerOf(B, S);
    if (!H || !Seen.insert(H).second)
      continue;
    if (std::find(H->Extras.begin(), H->Extras.end(), GpuExtra) ==
        H->Extras.end())
      continue;
    std::vector<std::string> Have, Lack;
    for (const Requirement &R : H->Requires)
      if (R.Extra == GpuExtra)
        (S->Installed.count(normalizeDistributionName(R.Name)) ? Have : Lack)
            .push_back(R.Name);
    // Nothing of the extra installed is a host-only install: the code
    // objects' diagnoses say what to install. Part of it is a broken one.
    if (Have.empty() || Lack.empty())
      continue;
    ExtraProblem X;
    X.Site = S->Path;
    X.Distribution = H->Name;
    X.Extra = GpuExtra;
    X.Installed = Have;
    for (const std::string &L : Lack) {
      std::optional<PackagingBundle> Bundle = bundleOfDistribution(L);
      X.Missing.push_back(L + (Bundle ? std::string(" (") +
                                            levelName(Bundle->Level) + " " +
                                            Bundle->Key + ")"
                                      : std::string()));
    }
    X.Remedy = "pip install '" + H->Name + "[" + GpuExtra + "]'";
    Out.push_back(std::move(X));
  }
  return Out;
}

} // namespace doctor
} // namespace kpack

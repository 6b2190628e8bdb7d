//===- ArchiveSearch.cpp - Describes a failed code-object search ----------===//

#include "ArchiveSearch.h"

#include "kpack/Metadata.h"
#include "kpack/Platform.h"
#include "kpack/SearchPaths.h"
#include "rocm_kpack/kpack.h"

#include <algorithm>

namespace kpack {
namespace shim {

namespace {

bool collectArch(const char *Arch, void *UserData) {
  auto *Out = static_cast<std::string *>(UserData);
  *Out += (Out->empty() ? "" : ", ") + std::string(Arch);
  return true;
}

} // namespace

std::string describeArchiveSearch(const KpackMetadata &Ref,
                                  const KpackEnvironment &Env,
                                  const std::string &BinaryPath,
                                  const std::vector<TargetId> &Agents) {
  // The loader's resolution (kpack/SearchPaths.h).
  std::vector<std::string> Templates =
      searchPathTemplates(Env, Ref.SearchPaths, BinaryPath);

  std::vector<std::string> Paths;
  for (const TargetId &Agent : Agents)
    for (const std::string &Candidate : candidateTargetIds(Agent))
      for (const std::string &T : Templates) {
        std::string P = expandArchPlaceholder(T, Candidate);
        if (std::find(Paths.begin(), Paths.end(), P) == Paths.end())
          Paths.push_back(P);
      }

  std::string Found, NotFound;
  for (const std::string &P : Paths) {
    if (!platform::FileIdentity::of(P).Exists) {
      NotFound += (NotFound.empty() ? "'" : ", '") + P + "'";
      continue;
    }
    std::string Arches;
    kpack_error_t E =
        kpack_enumerate_architectures(P.c_str(), collectArch, &Arches);
    Found += (Found.empty() ? "'" : "; '") + P + "' " +
             (E == KPACK_SUCCESS
                  ? "(offers " + (Arches.empty() ? "nothing" : Arches) + ")"
                  : "(unreadable, kpack error " + std::to_string(int(E)) + ")");
  }
  std::string Out = Found;
  if (!NotFound.empty())
    Out += (Out.empty() ? "" : "; ") + std::string("not found: ") + NotFound;
  return Out.empty() ? "(none)" : Out;
}

} // namespace shim
} // namespace kpack

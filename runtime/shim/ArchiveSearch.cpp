//===- ArchiveSearch.cpp - Describes a failed code-object search ----------===//

#include "ArchiveSearch.h"

#include "kpack/Metadata.h"
#include "rocm_kpack/kpack.h"

#include <algorithm>
#include <cstdlib>
#include <sys/stat.h>

namespace kpack {
namespace shim {

namespace {

std::vector<std::string> envPaths(const char *Name) {
  std::vector<std::string> Out;
  const char *V = std::getenv(Name);
  if (!V || !*V)
    return Out;
  std::string S(V);
  size_t Start = 0;
  while (Start <= S.size()) {
    size_t End = S.find(':', Start);
    if (End == std::string::npos)
      End = S.size();
    if (End > Start)
      Out.push_back(S.substr(Start, End - Start));
    Start = End + 1;
  }
  return Out;
}

std::string expandArch(const std::string &Template, const std::string &Arch) {
  static const std::string Pattern = "@GFXARCH@";
  std::string Out = Template;
  for (size_t Pos = Out.find(Pattern); Pos != std::string::npos;
       Pos = Out.find(Pattern, Pos + Arch.size()))
    Out.replace(Pos, Pattern.size(), Arch);
  return Out;
}

bool collectArch(const char *Arch, void *UserData) {
  auto *Out = static_cast<std::string *>(UserData);
  *Out += (Out->empty() ? "" : ", ") + std::string(Arch);
  return true;
}

} // namespace

std::string describeArchiveSearch(const void *Metadata,
                                  const std::string &BinaryPath,
                                  const std::vector<TargetId> &Agents) {
  std::vector<std::string> Templates = envPaths("ROCM_KPACK_PATH");
  if (Templates.empty()) {
    Templates = envPaths("ROCM_KPACK_PATH_PREFIX");
    KpackMetadata M;
    if (decodeKpackMetadata(static_cast<const uint8_t *>(Metadata),
                            MaxKpackMetadataSize, M))
      return "(the kpack metadata is invalid)";
    size_t Slash = BinaryPath.rfind('/');
    std::string Dir =
        Slash == std::string::npos ? "." : BinaryPath.substr(0, Slash);
    for (const std::string &P : M.SearchPaths)
      Templates.push_back(!P.empty() && P[0] == '/' ? P : Dir + "/" + P);
  }

  std::vector<std::string> Paths;
  for (const TargetId &Agent : Agents)
    for (const std::string &Candidate : candidateTargetIds(Agent))
      for (const std::string &T : Templates) {
        std::string P = expandArch(T, Candidate);
        if (std::find(Paths.begin(), Paths.end(), P) == Paths.end())
          Paths.push_back(P);
      }

  std::string Found, NotFound;
  for (const std::string &P : Paths) {
    struct stat St;
    if (::stat(P.c_str(), &St) != 0) {
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

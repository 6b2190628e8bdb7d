//===- SearchPaths.cpp - Where archives are looked for --------------------===//

#include "kpack/SearchPaths.h"
#include "kpack/Platform.h"
#include "kpack/TargetId.h"

namespace kpack {

bool envFlag(const char *Name) {
  std::optional<std::string> V = platform::getEnv(Name);
  return V && !V->empty() && (*V)[0] != '0';
}

std::vector<std::string> envPathList(const char *Name) {
  std::vector<std::string> Items;
  std::optional<std::string> V = platform::getEnv(Name);
  if (!V)
    return Items;
  std::string_view Rest(*V);
  while (!Rest.empty()) {
    size_t End = Rest.find(platform::PathListSeparator);
    std::string_view Item = Rest.substr(0, End);
    if (!Item.empty())
      Items.emplace_back(Item);
    if (End == std::string_view::npos)
      break;
    Rest.remove_prefix(End + 1);
  }
  return Items;
}

KpackEnvironment KpackEnvironment::fromProcess() {
  KpackEnvironment E;
  E.PathOverride = envPathList("ROCM_KPACK_PATH");
  E.PathPrefix = envPathList("ROCM_KPACK_PATH_PREFIX");
  if (std::optional<std::string> V = platform::getEnv("ROCM_KPACK_ARCH_OVERRIDE");
      V && !V->empty())
    if (!splitTargetIdList(*V, E.ArchOverride)) {
      E.ArchOverride.clear();
      E.ArchOverrideMalformed = true;
    }
  E.Disabled = envFlag("ROCM_KPACK_DISABLE");
  E.Debug = envFlag("ROCM_KPACK_DEBUG");
  return E;
}

std::string expandArchPlaceholder(std::string_view Template,
                                  std::string_view Arch) {
  std::string Out(Template);
  size_t Pos = Out.find(ArchPlaceholder);
  if (Pos != std::string::npos)
    Out.replace(Pos, ArchPlaceholder.size(), Arch);
  return Out;
}

std::string directoryOf(std::string_view Path) {
  size_t Slash = std::string_view::npos;
  for (size_t I = Path.size(); I-- > 0;)
    if (platform::isDirectorySeparator(Path[I])) {
      Slash = I;
      break;
    }
  if (Slash == std::string_view::npos)
    return ".";
  if (Slash == 0)
    return std::string(Path.substr(0, 1));
  return std::string(Path.substr(0, Slash));
}

std::vector<std::string>
searchPathTemplates(const KpackEnvironment &Env,
                    const std::vector<std::string> &EmbeddedPaths,
                    std::string_view BinaryPath) {
  if (!Env.PathOverride.empty())
    return Env.PathOverride;
  std::vector<std::string> Templates = Env.PathPrefix;
  const std::string BinaryDir = directoryOf(BinaryPath);
  for (const std::string &P : EmbeddedPaths)
    Templates.push_back(platform::isAbsolutePath(P) ? P : BinaryDir + "/" + P);
  return Templates;
}

} // namespace kpack

//===- SearchPaths.cpp - Where archives are looked for --------------------===//

#include "kpack/SearchPaths.h"
#include "kpack/Platform.h"
#include "kpack/TargetId.h"

#include <algorithm>

namespace kpack {

bool envFlag(const char *Name) {
  std::optional<std::string> V = platform::getEnv(Name);
  return V && !V->empty() && (*V)[0] != '0';
}

namespace {

/// Does Piece (what follows a ':') start with a target feature, making it
/// the rest of an archive name such as "app_gfx90a:xnack+.kpack"?
bool startsWithFeature(std::string_view Piece) {
  for (std::string_view Feature : {"xnack+", "xnack-", "sramecc+", "sramecc-"})
    if (Piece.substr(0, Feature.size()) == Feature)
      return true;
  return false;
}

} // namespace

std::vector<std::string> splitPathList(std::string_view Value,
                                       char Separator) {
  std::vector<std::string> Items;
  bool Joinable = false; // may the next piece continue the last item?
  for (;;) {
    size_t End = Value.find(Separator);
    std::string_view Piece = Value.substr(0, End);
    if (Separator == ':' && Joinable && startsWithFeature(Piece))
      Items.back().append(":").append(Piece);
    else if (!Piece.empty())
      Items.emplace_back(Piece);
    Joinable = !Piece.empty();
    if (End == std::string_view::npos)
      break;
    Value.remove_prefix(End + 1);
  }
  return Items;
}

std::vector<std::string> envPathList(const char *Name) {
  std::optional<std::string> V = platform::getEnv(Name);
  if (!V)
    return {};
  return splitPathList(*V, platform::PathListSeparator);
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

std::string fileNameOf(std::string_view Path) {
  for (size_t I = Path.size(); I-- > 0;)
    if (platform::isDirectorySeparator(Path[I]))
      return std::string(Path.substr(I + 1));
  return std::string(Path);
}

const char *searchOriginName(SearchTemplate::Origin O) {
  switch (O) {
  case SearchTemplate::Origin::PathOverride:
    return "ROCM_KPACK_PATH";
  case SearchTemplate::Origin::PathPrefix:
    return "ROCM_KPACK_PATH_PREFIX";
  case SearchTemplate::Origin::Embedded:
    return "embedded";
  }
  return "?";
}

namespace {

/// An environment entry's templates: itself, or for a directory one per
/// embedded search path's file name.
void addEnvironmentEntry(const std::string &Entry, SearchTemplate::Origin From,
                         const std::vector<std::string> &EmbeddedPaths,
                         std::vector<SearchTemplate> &Out) {
  const bool Directory =
      Entry.find(ArchPlaceholder) == std::string::npos &&
      (platform::isDirectorySeparator(Entry.back()) ||
       platform::isDirectory(Entry));
  if (!Directory) {
    Out.push_back({Entry, From, Entry});
    return;
  }
  std::string Dir = Entry;
  while (Dir.size() > 1 && platform::isDirectorySeparator(Dir.back()))
    Dir.pop_back();
  std::vector<std::string> Seen;
  for (const std::string &P : EmbeddedPaths) {
    std::string Name = fileNameOf(P);
    if (Name.empty() ||
        std::find(Seen.begin(), Seen.end(), Name) != Seen.end())
      continue;
    Seen.push_back(Name);
    Out.push_back({platform::isDirectorySeparator(Dir.back()) ? Dir + Name
                                                              : Dir + "/" + Name,
                   From, Entry});
  }
}

} // namespace

std::vector<SearchTemplate>
searchTemplates(const KpackEnvironment &Env,
                const std::vector<std::string> &EmbeddedPaths,
                std::string_view BinaryPath) {
  std::vector<SearchTemplate> Templates;
  if (!Env.PathOverride.empty()) {
    for (const std::string &E : Env.PathOverride)
      addEnvironmentEntry(E, SearchTemplate::Origin::PathOverride,
                          EmbeddedPaths, Templates);
    return Templates;
  }
  for (const std::string &E : Env.PathPrefix)
    addEnvironmentEntry(E, SearchTemplate::Origin::PathPrefix, EmbeddedPaths,
                        Templates);
  const std::string BinaryDir = directoryOf(BinaryPath);
  for (const std::string &P : EmbeddedPaths)
    Templates.push_back(
        {platform::isAbsolutePath(P) ? P : BinaryDir + "/" + P,
         SearchTemplate::Origin::Embedded, P});
  return Templates;
}

std::vector<std::string>
searchPathTemplates(const KpackEnvironment &Env,
                    const std::vector<std::string> &EmbeddedPaths,
                    std::string_view BinaryPath) {
  std::vector<std::string> Paths;
  for (SearchTemplate &T : searchTemplates(Env, EmbeddedPaths, BinaryPath))
    Paths.push_back(std::move(T.Path));
  return Paths;
}

} // namespace kpack

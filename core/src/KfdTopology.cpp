//===- KfdTopology.cpp - Target IDs of this machine's GPUs ----------------===//

#include "kpack/KfdTopology.h"

#include "kpack/Platform.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kpack {

namespace {

// include/uapi/linux/kfd_sysfs.h: the GPU's SRAM ECC is enabled.
constexpr uint64_t HSA_CAP_SRAM_EDCSUPPORTED = 0x04000000;

bool readFile(const fs::path &Path, std::string &Out) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return false;
  std::ostringstream S;
  S << In.rdbuf();
  Out = S.str();
  return true;
}

bool parseUnsigned(const std::string &Text, uint64_t &Out) {
  if (Text.empty() || Text.size() > 19)
    return false;
  Out = 0;
  for (char C : Text) {
    if (C < '0' || C > '9')
      return false;
    Out = Out * 10 + unsigned(C - '0');
  }
  return true;
}

std::string trim(const std::string &S) {
  size_t B = S.find_first_not_of(" \t\r\n");
  if (B == std::string::npos)
    return "";
  size_t E = S.find_last_not_of(" \t\r\n");
  return S.substr(B, E - B + 1);
}

} // namespace

std::string processorForGfxTargetVersion(uint64_t Version) {
  uint64_t Major = Version / 10000;
  uint64_t Minor = Version / 100 % 100;
  uint64_t Stepping = Version % 100;
  if (Major < 6 || Major > 99 || Minor > 15 || Stepping > 15)
    return "";
  static const char Hex[] = "0123456789abcdef";
  std::string Out = "gfx" + std::to_string(Major);
  Out += Hex[Minor];
  Out += Hex[Stepping];
  return Out;
}

FeatureState defaultXnackMode(const std::string &SysfsRoot) {
  if (std::optional<std::string> Env = platform::getEnv("HSA_XNACK");
      Env && !Env->empty())
    return (*Env)[0] == '1' ? FeatureState::On : FeatureState::Off;
  std::string NoRetry;
  if (readFile(fs::u8path(SysfsRoot) / "module/amdgpu/parameters/noretry",
               NoRetry) &&
      trim(NoRetry) == "0")
    return FeatureState::On;
  return FeatureState::Off;
}

Status readKfdTopology(const std::string &SysfsRoot,
                       std::vector<TargetId> &Out) {
  fs::path Nodes = fs::u8path(SysfsRoot) / "class/kfd/kfd/topology/nodes";
  std::error_code EC;
  if (!fs::is_directory(Nodes, EC))
    return Status::ok(); // no KFD: no GPUs
  std::vector<std::pair<uint64_t, fs::path>> NodeDirs;
  for (fs::directory_iterator It(Nodes, EC), End; !EC && It != End;
       It.increment(EC)) {
    uint64_t Index;
    if (parseUnsigned(It->path().filename().string(), Index))
      NodeDirs.emplace_back(Index, It->path());
  }
  if (EC)
    return Status::error("cannot list " + Nodes.string() + ": " + EC.message());
  std::sort(NodeDirs.begin(), NodeDirs.end());

  FeatureState Xnack = defaultXnackMode(SysfsRoot);
  for (const auto &[Index, Dir] : NodeDirs) {
    std::string Properties;
    if (!readFile(Dir / "properties", Properties))
      continue; // a node without properties is not a usable agent
    uint64_t GfxVersion = 0, Capability = 0;
    std::istringstream Lines(Properties);
    for (std::string Line; std::getline(Lines, Line);) {
      std::istringstream Fields(Line);
      std::string Key, Value;
      Fields >> Key >> Value;
      if (Key == "gfx_target_version")
        parseUnsigned(Value, GfxVersion);
      else if (Key == "capability")
        parseUnsigned(Value, Capability);
    }
    if (GfxVersion == 0)
      continue; // CPU node
    TargetId Id;
    Id.Processor = processorForGfxTargetVersion(GfxVersion);
    if (Id.Processor.empty())
      return Status::error("KFD node " + std::to_string(Index) +
                           ": unexpected gfx_target_version " +
                           std::to_string(GfxVersion));
    if (std::optional<ProcessorFeatures> F = supportedFeatures(Id.Processor)) {
      if (F->Sramecc)
        Id.Sramecc = (Capability & HSA_CAP_SRAM_EDCSUPPORTED)
                         ? FeatureState::On
                         : FeatureState::Off;
      if (F->Xnack)
        Id.Xnack = Xnack;
    }
    if (std::none_of(Out.begin(), Out.end(), [&](const TargetId &E) {
          return E.str() == Id.str();
        }))
      Out.push_back(Id);
  }
  return Status::ok();
}

} // namespace kpack

//===- AgentTargets.cpp - Target IDs of the GPUs present ------------------===//

#include "AgentTargets.h"

#include "kpack/Platform.h"

#include <cstdlib>

namespace kpack {
namespace shim {

namespace {

void appendUnique(std::vector<TargetId> &Out, const TargetId &Id) {
  for (const TargetId &Existing : Out)
    if (Existing.str() == Id.str())
      return;
  Out.push_back(Id);
}

} // namespace

Status parseArchOverride(const std::string &Text, std::vector<TargetId> &Out) {
  std::vector<std::string> Ids;
  if (!splitTargetIdList(Text, Ids))
    return Status::error("a feature comes before any processor in '" + Text + "'");
  if (Ids.empty())
    return Status::error("no target ID in '" + Text + "'");
  std::vector<TargetId> Parsed;
  for (const std::string &IdText : Ids) {
    std::optional<TargetId> Id = parseTargetId(IdText);
    if (!Id)
      return Status::error("'" + IdText + "' is not a target ID");
    appendUnique(Parsed, *Id);
  }
  Out.insert(Out.end(), Parsed.begin(), Parsed.end());
  return Status::ok();
}

Status detectAgentTargets(std::vector<TargetId> &Out) {
  if (std::optional<std::string> Override =
          platform::getEnv("ROCM_KPACK_ARCH_OVERRIDE");
      Override && !Override->empty() && (*Override)[0] != '0') {
    if (Status S = parseArchOverride(*Override, Out))
      return Status::error("ROCM_KPACK_ARCH_OVERRIDE: " + S.message());
    return Status::ok();
  }
#ifdef _WIN32
  // No KFD topology on Windows, and asking the runtime (hipGetDeviceProperties)
  // from inside __hipRegisterFatBinary would initialise it there, under the
  // loader lock when a DLL registers (docs/shim.md, "Windows").
  return Status::error("ROCM_KPACK_ARCH_OVERRIDE is not set: on Windows the "
                       "shim takes the GPU targets from it (e.g. "
                       "gfx1100,gfx942:sramecc+:xnack-)");
#else
  const char *Root = std::getenv("ROCM_KPACK_SHIM_SYSFS_ROOT");
  return readKfdTopology(Root && *Root ? Root : "/sys", Out);
#endif
}

} // namespace shim
} // namespace kpack

//===- RecombineWheels.cpp - kpack recombine-wheels -----------------------===//
//
// kpack recombine-wheels --host H.whl --device D1.whl [D2.whl ...] -o OUT.whl
//
// One wheel from a host wheel and device wheels that `kpack split-wheel`
// wrote (docs/wheels.md). Device wheels may follow --device (repeatable) or
// stand as further arguments. The work is kpack::recombineWheels.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/WheelSplit.h"

#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace llvm;
using namespace kpack;

static cl::SubCommand RecombineWheelsCmd(
    "recombine-wheels",
    "Overlay device wheels onto their host wheel, giving one wheel");
static cl::opt<std::string> RWHost("host", cl::Required,
                                   cl::desc("Host wheel"),
                                   cl::value_desc("wheel"),
                                   cl::sub(RecombineWheelsCmd));
static cl::list<std::string> RWDevice("device", cl::desc("Device wheel"),
                                      cl::value_desc("wheel"),
                                      cl::sub(RecombineWheelsCmd));
static cl::list<std::string> RWMoreDevices(cl::Positional,
                                           cl::desc("[device wheel...]"),
                                           cl::sub(RecombineWheelsCmd));
static cl::opt<std::string> RWOutput("o", cl::Required,
                                     cl::desc("Output wheel"),
                                     cl::value_desc("wheel"),
                                     cl::sub(RecombineWheelsCmd));
static cl::opt<bool> RWQuiet("quiet", cl::desc("No summary on stdout"),
                             cl::sub(RecombineWheelsCmd));

int runRecombineWheels() {
  // Command-line order: "--device D1.whl D2.whl" binds D1 to --device and
  // leaves D2 positional.
  std::map<unsigned, std::string> ByPosition;
  for (unsigned I = 0; I < RWDevice.size(); ++I)
    ByPosition[RWDevice.getPosition(I)] = RWDevice[I];
  for (unsigned I = 0; I < RWMoreDevices.size(); ++I)
    ByPosition[RWMoreDevices.getPosition(I)] = RWMoreDevices[I];
  std::vector<std::string> Devices;
  for (auto &[Pos, Path] : ByPosition)
    Devices.push_back(Path);
  if (Devices.empty())
    return reportUsageError("kpack recombine-wheels",
                            "no device wheel given (--device)");
  Expected<WrittenWheel> W = recombineWheels(RWHost, Devices, RWOutput);
  if (!W)
    return reportError("kpack recombine-wheels", W.takeError());
  if (!RWQuiet)
    outs() << "recombined " << W->Path << ": host wheel and "
           << Devices.size() << " device wheels, " << W->Files << " files, "
           << W->Size << " bytes\n";
  return 0;
}

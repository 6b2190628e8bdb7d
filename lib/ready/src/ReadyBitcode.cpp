//===- ReadyBitcode.cpp - Payload records of LTO bitcode -------------------===//

#include "kpack/ReadyObject.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace kpack {
namespace ready {

Expected<std::vector<uint8_t>> readBitcodePayloadSection(MemoryBufferRef In) {
  Expected<std::vector<BitcodeModule>> Modules = getBitcodeModuleList(In);
  if (!Modules)
    return Modules.takeError();
  std::vector<uint8_t> Section;
  for (BitcodeModule &BM : *Modules) {
    LLVMContext Ctx;
    // Function bodies stay unread; global initializers are parsed eagerly.
    Expected<std::unique_ptr<Module>> M = BM.getLazyModule(
        Ctx, /*ShouldLazyLoadMetadata=*/true, /*IsImporting=*/false);
    if (!M)
      return M.takeError();
    for (const GlobalVariable &GV : (*M)->globals()) {
      if (GV.getSection() != PayloadSectionName || !GV.hasInitializer())
        continue;
      const auto *Data = dyn_cast<ConstantDataSequential>(GV.getInitializer());
      if (!Data)
        return createStringError(inconvertibleErrorCode(),
                                 "global '" + GV.getName() + "' in " +
                                     PayloadSectionName +
                                     " does not hold plain bytes");
      StringRef Raw = Data->getRawDataValues();
      Section.insert(Section.end(), Raw.bytes_begin(), Raw.bytes_end());
    }
  }
  return Section;
}

} // namespace ready
} // namespace kpack

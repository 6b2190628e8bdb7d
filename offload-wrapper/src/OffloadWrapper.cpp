//===- OffloadWrapper.cpp - Kpack-ready HIP registration -------------------===//

#include "kpack/OffloadWrapper.h"
#include "kpack/BundleCodec.h"
#include "kpack/ReadyEmitter.h"

#include "llvm/Frontend/Offloading/OffloadWrapper.h"
#include "llvm/Frontend/Offloading/Utility.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

using namespace llvm;

namespace kpack {

Expected<std::unique_ptr<Module>>
wrapHIPBundle(LLVMContext &Ctx, ArrayRef<char> Bundle, const Triple &TT) {
  // wrapHIPBinary embeds any bytes; the runtime would only fail at load time.
  if (!isBundle(reinterpret_cast<const uint8_t *>(Bundle.data()),
                Bundle.size()))
    return createStringError(inconvertibleErrorCode(),
                             "input is not a clang offload bundle "
                             "(uncompressed or CCOB)");
  auto M = std::make_unique<Module>("offload.wrapper.module", Ctx);
  M->setTargetTriple(TT);
  if (Error E = offloading::wrapHIPBinary(*M, Bundle,
                                          offloading::getOffloadEntryArray(*M)))
    return E;
  Expected<unsigned> Converted = ready::makeModuleKpackReady(*M);
  if (!Converted)
    return Converted.takeError();
  if (*Converted != 1)
    return createStringError(inconvertibleErrorCode(),
                             "wrapHIPBinary produced " + Twine(*Converted) +
                                 " embedded bundles, expected 1");
  std::string Problems;
  raw_string_ostream OS(Problems);
  if (verifyModule(*M, &OS))
    return createStringError(inconvertibleErrorCode(),
                             "invalid registration module: " + Problems);
  return M;
}

Error emitObjectFile(Module &M, raw_pwrite_stream &OS) {
  InitializeAllTargetInfos();
  InitializeAllTargets();
  InitializeAllTargetMCs();
  InitializeAllAsmPrinters();
  const Triple &TT = M.getTargetTriple();
  std::string Message;
  const Target *T = TargetRegistry::lookupTarget(TT, Message);
  if (!T)
    return createStringError(inconvertibleErrorCode(), Message);
  std::unique_ptr<TargetMachine> TM(T->createTargetMachine(
      TT, /*CPU=*/"", /*Features=*/"", TargetOptions(), Reloc::PIC_));
  if (!TM)
    return createStringError(inconvertibleErrorCode(),
                             "no target machine for " + TT.str());
  M.setDataLayout(TM->createDataLayout());
  legacy::PassManager PM;
  if (TM->addPassesToEmitFile(PM, OS, nullptr, CodeGenFileType::ObjectFile))
    return createStringError(inconvertibleErrorCode(),
                             TT.str() + " cannot emit object files");
  PM.run(M);
  return Error::success();
}

} // namespace kpack

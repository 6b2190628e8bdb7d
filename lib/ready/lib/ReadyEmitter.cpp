//===- ReadyEmitter.cpp - Kpack-ready IR emission --------------------------===//

#include "kpack/ReadyEmitter.h"
#include "kpack/KpackReady.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace llvm;

namespace kpack {
namespace ready {

/// The bytes of a `.hip_fatbin` initializer: clang and wrapHIPBinary both emit
/// an i8 array (a string constant, or zeroinitializer for an empty image).
static Expected<std::vector<uint8_t>> getBundleBytes(const GlobalVariable &GV) {
  const Constant *Init = GV.getInitializer();
  if (const auto *Data = dyn_cast<ConstantDataSequential>(Init)) {
    StringRef Raw = Data->getRawDataValues();
    return std::vector<uint8_t>(Raw.bytes_begin(), Raw.bytes_end());
  }
  if (const auto *Zero = dyn_cast<ConstantAggregateZero>(Init)) {
    const DataLayout &DL = GV.getParent()->getDataLayout();
    return std::vector<uint8_t>(DL.getTypeAllocSize(Zero->getType()), 0);
  }
  return createStringError(inconvertibleErrorCode(),
                           "global '" + GV.getName() + "' in section " +
                               FatbinSectionName +
                               " is not initialized with plain bytes");
}

static Constant *makeBytes(LLVMContext &Ctx, const std::vector<uint8_t> &B) {
  return ConstantDataArray::get(Ctx, ArrayRef<uint8_t>(B));
}

/// Replaces one `.hip_fatbin` global by its payload and key record globals.
static Error convertFatbinGlobal(Module &M, GlobalVariable &Fatbin) {
  LLVMContext &Ctx = M.getContext();
  Expected<std::vector<uint8_t>> Bundle = getBundleBytes(Fatbin);
  if (!Bundle)
    return Bundle.takeError();
  uint64_t Key = computeContentKey(*Bundle);

  Constant *PayloadInit = makeBytes(Ctx, encodePayloadRecord(*Bundle));
  auto *Payload = new GlobalVariable(M, PayloadInit->getType(),
                                     /*isConstant=*/true,
                                     GlobalValue::PrivateLinkage, PayloadInit,
                                     "__kpack_payload");
  Payload->setSection(PayloadSectionName);
  Payload->setAlignment(Align(RecordAlign));
  // SHF_EXCLUDE: the final link drops the section.
  Payload->setMetadata(LLVMContext::MD_exclude, MDNode::get(Ctx, {}));
  // Nothing references the payload; keep it through GlobalDCE and LTO.
  appendToCompilerUsed(M, {Payload});

  Constant *KeyInit = makeBytes(Ctx, encodeKeyRecord(Key, Bundle->size()));
  auto *KeyRec = new GlobalVariable(M, KeyInit->getType(), /*isConstant=*/true,
                                    Fatbin.getLinkage(), KeyInit, "",
                                    /*InsertBefore=*/&Fatbin,
                                    Fatbin.getThreadLocalMode(),
                                    Fatbin.getAddressSpace());
  KeyRec->copyAttributesFrom(&Fatbin);
  KeyRec->setSection(M.getTargetTriple().isOSBinFormatCOFF()
                         ? CoffKeySectionName
                         : KeySectionName);
  KeyRec->setAlignment(Align(RecordAlign));
  KeyRec->takeName(&Fatbin);
  // The wrapper's `binary` field, llvm.used entries and any symbol reference
  // now point at the key record.
  Fatbin.replaceAllUsesWith(KeyRec);
  Fatbin.eraseFromParent();
  return Error::success();
}

Expected<unsigned> makeModuleKpackReady(Module &M) {
  SmallVector<GlobalVariable *, 2> Fatbins;
  for (GlobalVariable &GV : M.globals())
    if (GV.hasInitializer() && GV.getSection() == FatbinSectionName)
      Fatbins.push_back(&GV);
  for (GlobalVariable *GV : Fatbins)
    if (Error E = convertFatbinGlobal(M, *GV))
      return E;
  return Fatbins.size();
}

} // namespace ready
} // namespace kpack

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

/// The declaration of the guard symbol every key record refers to
/// (KpackReady.h): undefined, hidden, so that only ld.kpack links the object.
static GlobalVariable *getOrInsertGuard(Module &M) {
  if (GlobalVariable *GV = M.getGlobalVariable(GuardSymbolName))
    return GV;
  auto *GV = new GlobalVariable(M, Type::getInt8Ty(M.getContext()),
                                /*isConstant=*/true,
                                GlobalValue::ExternalLinkage, nullptr,
                                GuardSymbolName);
  GV->setVisibility(GlobalValue::HiddenVisibility);
  GV->setDSOLocal(true);
  return GV;
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

  // The key record: its bytes, with the guard reference at
  // GuardFieldOffset (a packed struct, so the layout stays KeySlotSize bytes).
  std::vector<uint8_t> Slot = encodeKeyRecord(Key, Bundle->size());
  std::vector<uint8_t> Head(Slot.begin(), Slot.begin() + GuardFieldOffset);
  std::vector<uint8_t> Tail(Slot.begin() + GuardFieldOffset + 4, Slot.end());
  Type *I32 = Type::getInt32Ty(Ctx);
  Type *I64 = Type::getInt64Ty(Ctx);
  StructType *KeyType = StructType::get(
      Ctx,
      {ArrayType::get(Type::getInt8Ty(Ctx), Head.size()), I32,
       ArrayType::get(Type::getInt8Ty(Ctx), Tail.size())},
      /*isPacked=*/true);
  auto *KeyRec = new GlobalVariable(M, KeyType, /*isConstant=*/true,
                                    Fatbin.getLinkage(), nullptr, "",
                                    /*InsertBefore=*/&Fatbin,
                                    Fatbin.getThreadLocalMode(),
                                    Fatbin.getAddressSpace());
  // guard - (record + GuardFieldOffset): a PC-relative relocation. Between
  // two dso_local globals (an inbounds offset of the record), LLVM counts it
  // as a local relocation, so the section stays read-only in PIC code as it
  // was before (a relocation it judged dynamic would make it writable).
  GlobalVariable *Guard = getOrInsertGuard(M);
  Constant *Field = ConstantExpr::getInBoundsGetElementPtr(
      Type::getInt8Ty(Ctx), KeyRec, ConstantInt::get(I64, GuardFieldOffset));
  Constant *Rel = ConstantExpr::getTrunc(
      ConstantExpr::getSub(ConstantExpr::getPtrToInt(Guard, I64),
                           ConstantExpr::getPtrToInt(Field, I64)),
      I32);
  KeyRec->setInitializer(ConstantStruct::get(
      KeyType, {makeBytes(Ctx, Head), Rel, makeBytes(Ctx, Tail)}));
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

//===- ReadyEmitterTest.cpp - kpack-ready IR emission ----------------------===//

#include "kpack/KpackReady.h"
#include "kpack/ReadyEmitter.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace llvm;
using namespace kpack::ready;

namespace {

std::unique_ptr<Module> parse(LLVMContext &Ctx, StringRef IR) {
  SMDiagnostic Diag;
  std::unique_ptr<Module> M = parseAssemblyString(IR, Diag, Ctx);
  if (!M)
    ADD_FAILURE() << Diag.getMessage().str();
  return M;
}

std::string print(const Module &M) {
  std::string S;
  raw_string_ostream OS(S);
  M.print(OS, nullptr);
  return S;
}

ArrayRef<uint8_t> initializerBytes(const Constant *C) {
  StringRef Raw = cast<ConstantDataSequential>(C)->getRawDataValues();
  return arrayRefFromStringRef(Raw);
}

ArrayRef<uint8_t> initializerBytes(const GlobalVariable &GV) {
  return initializerBytes(GV.getInitializer());
}

TEST(ReadyEmitter, LeavesModulesWithoutBundleAlone) {
  LLVMContext Ctx;
  auto M = parse(Ctx, R"(
@__hip_fatbin_rdc = external constant i8, section ".hip_fatbin"
@data = constant [4 x i8] c"abcd", section ".rodata.x"
define ptr @f() { ret ptr @__hip_fatbin_rdc }
)");
  ASSERT_TRUE(M);
  std::string Before = print(*M);
  auto N = makeModuleKpackReady(*M);
  ASSERT_TRUE(static_cast<bool>(N)) << toString(N.takeError());
  EXPECT_EQ(*N, 0u);
  EXPECT_EQ(print(*M), Before);
}

TEST(ReadyEmitter, KeyRecordTakesOverNameLinkageAndUses) {
  LLVMContext Ctx;
  auto M = parse(Ctx, R"(
@__hip_fatbin_abc = protected constant [6 x i8] c"BUNDLE", section ".hip_fatbin", align 4096
@wrapper = internal constant { i32, i32, ptr, ptr } { i32 1212764230, i32 1, ptr @__hip_fatbin_abc, ptr null }, section ".hipFatBinSegment", align 8
@llvm.used = appending global [1 x ptr] [ptr @__hip_fatbin_abc], section "llvm.metadata"
define ptr @get() { ret ptr @wrapper }
)");
  ASSERT_TRUE(M);
  auto N = makeModuleKpackReady(*M);
  ASSERT_TRUE(static_cast<bool>(N)) << toString(N.takeError());
  EXPECT_EQ(*N, 1u);
  EXPECT_FALSE(verifyModule(*M, &errs()));

  std::vector<uint8_t> Bundle = {'B', 'U', 'N', 'D', 'L', 'E'};
  GlobalVariable *Key = M->getGlobalVariable("__hip_fatbin_abc");
  ASSERT_NE(Key, nullptr);
  EXPECT_EQ(Key->getLinkage(), GlobalValue::ExternalLinkage);
  EXPECT_EQ(Key->getVisibility(), GlobalValue::ProtectedVisibility);
  EXPECT_EQ(Key->getSection(), KeySectionName);
  EXPECT_EQ(Key->getAlign(), MaybeAlign(RecordAlign));
  EXPECT_TRUE(Key->isConstant());
  // The record's bytes, with the guard reference at GuardFieldOffset: a
  // packed struct of the bytes before it, the reference, the bytes after it.
  std::vector<uint8_t> Slot =
      encodeKeyRecord(computeContentKey(Bundle), Bundle.size());
  auto *Init = cast<ConstantStruct>(Key->getInitializer());
  ASSERT_EQ(Init->getNumOperands(), 3u);
  EXPECT_TRUE(Init->getType()->isPacked());
  EXPECT_EQ(M->getDataLayout().getTypeAllocSize(Init->getType()),
            KeySlotSize);
  auto Bytes = [](const Constant *C) {
    if (isa<ConstantAggregateZero>(C))
      return std::vector<uint8_t>(
          cast<ArrayType>(C->getType())->getNumElements(), 0);
    return initializerBytes(C).vec();
  };
  EXPECT_EQ(Bytes(Init->getOperand(0)),
            std::vector<uint8_t>(Slot.begin(),
                                 Slot.begin() + GuardFieldOffset));
  EXPECT_EQ(Bytes(Init->getOperand(2)),
            std::vector<uint8_t>(Slot.begin() + GuardFieldOffset + 4,
                                 Slot.end()));

  // The guard: an undefined hidden declaration, referred to by the field.
  GlobalVariable *Guard = M->getGlobalVariable(GuardSymbolName);
  ASSERT_NE(Guard, nullptr);
  EXPECT_TRUE(Guard->isDeclaration());
  EXPECT_EQ(Guard->getVisibility(), GlobalValue::HiddenVisibility);
  bool RefersToGuard = false;
  for (const User *U : Guard->users())
    RefersToGuard |= isa<ConstantExpr>(U);
  EXPECT_TRUE(RefersToGuard);
  EXPECT_NE(print(*M).find("ptrtoint (ptr @" + GuardSymbolName.str()),
            std::string::npos);

  GlobalVariable *Wrapper = M->getGlobalVariable("wrapper", true);
  ASSERT_NE(Wrapper, nullptr);
  EXPECT_EQ(Wrapper->getInitializer()->getOperand(2), Key);

  GlobalVariable *Payload = M->getGlobalVariable("__kpack_payload", true);
  ASSERT_NE(Payload, nullptr);
  EXPECT_EQ(Payload->getSection(), PayloadSectionName);
  EXPECT_TRUE(Payload->hasMetadata(LLVMContext::MD_exclude));
  EXPECT_EQ(initializerBytes(*Payload).vec(), encodePayloadRecord(Bundle));

  GlobalVariable *CompilerUsed = M->getGlobalVariable("llvm.compiler.used");
  ASSERT_NE(CompilerUsed, nullptr);
  bool Listed = false;
  for (const Use &U : CompilerUsed->getInitializer()->operands())
    Listed |= U.get()->stripPointerCasts() == Payload;
  EXPECT_TRUE(Listed);

  for (const GlobalVariable &GV : M->globals())
    EXPECT_NE(GV.getSection(), FatbinSectionName) << GV.getName().str();
}

// COFF triples: the key record goes to .kpackrf (docs/kpack-ready.md, "COFF
// objects"); the payload keeps its section and !exclude.
TEST(ReadyEmitter, CoffTriplesUseKpackrf) {
  for (StringRef Triple : {"x86_64-w64-windows-gnu", "x86_64-pc-windows-msvc"}) {
    LLVMContext Ctx;
    auto M = parse(Ctx, (Twine("target triple = \"") + Triple + R"("
@__hip_fatbin = internal constant [6 x i8] c"BUNDLE", section ".hip_fatbin", align 4096
@wrapper = internal constant { i32, i32, ptr, ptr } { i32 1212764230, i32 1, ptr @__hip_fatbin, ptr null }, section ".hipFatBinSegment", align 8
@llvm.used = appending global [1 x ptr] [ptr @wrapper], section "llvm.metadata"
)").str());
    ASSERT_TRUE(M);
    auto N = makeModuleKpackReady(*M);
    ASSERT_TRUE(static_cast<bool>(N)) << toString(N.takeError());
    EXPECT_EQ(*N, 1u);
    GlobalVariable *Key = M->getGlobalVariable("__hip_fatbin", true);
    ASSERT_NE(Key, nullptr);
    EXPECT_EQ(Key->getSection(), CoffKeySectionName) << Triple.str();
    GlobalVariable *Payload = M->getGlobalVariable("__kpack_payload", true);
    ASSERT_NE(Payload, nullptr);
    EXPECT_EQ(Payload->getSection(), PayloadSectionName);
    EXPECT_TRUE(Payload->hasMetadata(LLVMContext::MD_exclude));
  }
}

TEST(ReadyEmitter, RejectsNonByteInitializer) {
  LLVMContext Ctx;
  auto M = parse(Ctx, R"(
@fb = constant { i32, ptr } { i32 1, ptr null }, section ".hip_fatbin"
)");
  ASSERT_TRUE(M);
  auto N = makeModuleKpackReady(*M);
  ASSERT_FALSE(static_cast<bool>(N));
  EXPECT_NE(toString(N.takeError()).find("not initialized with plain bytes"),
            std::string::npos);
}

} // namespace

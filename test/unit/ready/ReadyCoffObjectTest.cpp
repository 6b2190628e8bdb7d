//===- ReadyCoffObjectTest.cpp - Fat COFF object -> kpack-ready -----------===//
//
// A hand-made fat COFF object with two bundles in `.hip_fatbin`, two
// wrappers whose ADDR64 relocations point at them through the section
// symbol (implicit addends 0 and 4096), an external symbol naming the second
// bundle and a REL32 reference to it from `.text`. The rewrite is read back
// with LLVM's COFFObjectFile (the independent reader).
//
//===----------------------------------------------------------------------===//

#include "kpack/KpackReady.h"
#include "kpack/COFF/ReadyCoffObject.h"
#include "kpack/ReadyObject.h"

#include "llvm/BinaryFormat/COFF.h"
#include "llvm/Object/COFF.h"
#include "llvm/Support/Endian.h"
#include "gtest/gtest.h"

#include <cstring>

using namespace llvm;
using namespace llvm::object;
using namespace kpack::ready;
namespace endian = llvm::support::endian;

namespace {

/// An uncompressed offload bundle with one device entry of Payload bytes.
std::vector<uint8_t> bundle(StringRef Payload) {
  const std::string Id = "hipv4-amdgcn-amd-amdhsa--gfx1100";
  std::vector<uint8_t> B(24 + 8 + 24 + Id.size(), 0);
  std::memcpy(B.data(), "__CLANG_OFFLOAD_BUNDLE__", 24);
  endian::write64le(B.data() + 24, 1);
  endian::write64le(B.data() + 32, B.size());      // payload offset
  endian::write64le(B.data() + 40, Payload.size()); // payload size
  endian::write64le(B.data() + 48, Id.size());
  std::memcpy(B.data() + 56, Id.data(), Id.size());
  B.insert(B.end(), Payload.begin(), Payload.end());
  return B;
}

struct Builder {
  std::vector<uint8_t> Out;
  void put16(size_t At, uint16_t V) { endian::write16le(Out.data() + At, V); }
  void put32(size_t At, uint32_t V) { endian::write32le(Out.data() + At, V); }
  void put64(size_t At, uint64_t V) { endian::write64le(Out.data() + At, V); }
};

/// The fat object. Sections: 1 .hip_fatbin, 2 .hipFatBinSegment, 3 .text.
/// Symbols: 0 .hip_fatbin (section symbol, 1 aux), 2 __hip_fatbin_second.
std::vector<uint8_t> fatObject(const std::vector<uint8_t> &B0,
                               const std::vector<uint8_t> &B1) {
  std::vector<uint8_t> Fat(4096 + B1.size(), 0);
  std::copy(B0.begin(), B0.end(), Fat.begin());
  std::copy(B1.begin(), B1.end(), Fat.begin() + 4096);
  const std::string Strings = std::string(4, '\0') + ".hip_fatbin" + '\0' +
                              ".hipFatBinSegment" + '\0' +
                              "__hip_fatbin_second" + '\0';
  const uint32_t FatName = 4, SegName = 4 + 12, SymName = 4 + 12 + 18;
  const size_t Hdr = 20 + 3 * 40;
  const size_t FatOff = Hdr, SegOff = FatOff + Fat.size(), SegRel = SegOff + 48,
               TextOff = SegRel + 2 * 10, TextRel = TextOff + 8,
               SymOff = TextRel + 10, StrOff = SymOff + 3 * 18;
  Builder W;
  W.Out.assign(StrOff + Strings.size(), 0);
  W.put16(0, COFF::IMAGE_FILE_MACHINE_AMD64);
  W.put16(2, 3);
  W.put32(8, SymOff);
  W.put32(12, 3);
  auto Section = [&](int I, const std::string &Name, size_t Size, size_t Raw,
                     size_t Rel, uint16_t NRel, uint32_t Flags) {
    size_t S = 20 + I * 40;
    std::memcpy(W.Out.data() + S, Name.data(), Name.size());
    W.put32(S + 16, Size);
    W.put32(S + 20, Raw);
    W.put32(S + 24, Rel);
    W.put16(S + 32, NRel);
    W.put32(S + 36, Flags);
  };
  const uint32_t Data =
      COFF::IMAGE_SCN_CNT_INITIALIZED_DATA | COFF::IMAGE_SCN_MEM_READ;
  Section(0, "/" + std::to_string(FatName), Fat.size(), FatOff, 0, 0,
          Data | COFF::IMAGE_SCN_ALIGN_4096BYTES);
  Section(1, "/" + std::to_string(SegName), 48, SegOff, SegRel, 2,
          Data | COFF::IMAGE_SCN_ALIGN_8BYTES);
  Section(2, ".text", 8, TextOff, TextRel, 1,
          COFF::IMAGE_SCN_CNT_CODE | COFF::IMAGE_SCN_MEM_EXECUTE |
              COFF::IMAGE_SCN_MEM_READ);
  std::copy(Fat.begin(), Fat.end(), W.Out.begin() + FatOff);
  // Wrappers: HIPF, version 1, binary (implicit addend), reserved.
  for (int K = 0; K < 2; ++K) {
    W.put32(SegOff + 24 * K, 0x48495046);
    W.put32(SegOff + 24 * K + 4, 1);
    W.put64(SegOff + 24 * K + 8, K == 0 ? 0 : 4096);
    // Relocation: at the wrapper's binary field, against symbol 0.
    W.put32(SegRel + 10 * K, 24 * K + 8);
    W.put32(SegRel + 10 * K + 4, 0);
    W.put16(SegRel + 10 * K + 8, COFF::IMAGE_REL_AMD64_ADDR64);
  }
  // .text: "lea __hip_fatbin_second(%rip)"-like REL32, addend 0 in place.
  W.put32(TextRel, 3);
  W.put32(TextRel + 4, 2);
  W.put16(TextRel + 8, COFF::IMAGE_REL_AMD64_REL32);
  // Symbol 0: .hip_fatbin section symbol + aux (Length).
  std::memcpy(W.Out.data() + SymOff, ".hip_fat", 8); // cut, as a name
  W.put16(SymOff + 12, 1);
  W.Out[SymOff + 16] = COFF::IMAGE_SYM_CLASS_STATIC;
  W.Out[SymOff + 17] = 1;
  W.put32(SymOff + 18, Fat.size());
  // Symbol 2: __hip_fatbin_second, external, value 4096 in section 1.
  W.put32(SymOff + 36 + 4, SymName);
  W.put32(SymOff + 36 + 8, 4096);
  W.put16(SymOff + 36 + 12, 1);
  W.Out[SymOff + 36 + 16] = COFF::IMAGE_SYM_CLASS_EXTERNAL;
  W.put32(StrOff, Strings.size());
  std::memcpy(W.Out.data() + StrOff + 4, Strings.data() + 4,
              Strings.size() - 4);
  return W.Out;
}

ArrayRef<uint8_t> contents(const COFFObjectFile &O, const coff_section *S) {
  ArrayRef<uint8_t> R;
  cantFail(O.getSectionContents(S, R));
  return R;
}

StringRef asRef(const std::vector<uint8_t> &B) {
  return StringRef(reinterpret_cast<const char *>(B.data()), B.size());
}

TEST(ReadyCoffObject, RewritesBundlesSymbolsAndAddends) {
  std::vector<uint8_t> B0 = bundle("FIRST"), B1 = bundle("SECOND!");
  std::vector<uint8_t> In = fatObject(B0, B1);
  ASSERT_TRUE(static_cast<bool>(
      COFFObjectFile::create(MemoryBufferRef(asRef(In), "fat.o"))));
  SmallVector<char, 0> Out;
  ASSERT_FALSE(static_cast<bool>(
      rewriteFatCoffObject(MemoryBufferRef(asRef(In), "fat.o"), Out)));
  auto Obj = COFFObjectFile::create(
      MemoryBufferRef(StringRef(Out.data(), Out.size()), "ready.o"));
  ASSERT_TRUE(static_cast<bool>(Obj)) << toString(Obj.takeError());

  // Sections: same numbers, .hip_fatbin is now .kpackrf, payload appended.
  ASSERT_EQ((*Obj)->getNumberOfSections(), 4u);
  auto Name = [&](int I) {
    return cantFail((*Obj)->getSectionName(cantFail((*Obj)->getSection(I))));
  };
  EXPECT_EQ(Name(1), CoffKeySectionName);
  EXPECT_EQ(Name(2), WrapperSectionName);
  EXPECT_EQ(Name(3), ".text");
  EXPECT_EQ(Name(4), PayloadSectionName);
  const coff_section *Key = cantFail((*Obj)->getSection(1));
  EXPECT_EQ(Key->Characteristics, COFF::IMAGE_SCN_CNT_INITIALIZED_DATA |
                                      COFF::IMAGE_SCN_MEM_READ |
                                      COFF::IMAGE_SCN_ALIGN_8BYTES);
  const coff_section *Payload = cantFail((*Obj)->getSection(4));
  EXPECT_TRUE(Payload->Characteristics & COFF::IMAGE_SCN_LNK_REMOVE);

  // Key records: one slot per bundle, in order.
  ArrayRef<uint8_t> Keys = contents(**Obj, Key);
  auto Slots = parseKeySection(Keys);
  ASSERT_TRUE(static_cast<bool>(Slots)) << toString(Slots.takeError());
  ASSERT_EQ(Slots->size(), 2u);
  EXPECT_EQ((*Slots)[0].Record.Key, computeContentKey(B0));
  EXPECT_EQ((*Slots)[1].Record.Key, computeContentKey(B1));
  EXPECT_EQ((*Slots)[1].Record.BundleSize, B1.size());

  // Payload records: the bundles byte for byte.
  auto Records = readPayloadRecords(**Obj);
  ASSERT_TRUE(static_cast<bool>(Records)) << toString(Records.takeError());
  ASSERT_EQ(Records->size(), 2u);
  EXPECT_EQ((*Records)[0].Bundle.vec(), B0);
  EXPECT_EQ((*Records)[1].Bundle.vec(), B1);

  // Wrapper 1's implicit addend moved from 4096 to slot 1; wrapper 0 stays.
  ArrayRef<uint8_t> Seg =
      contents(**Obj, cantFail((*Obj)->getSection(2)));
  EXPECT_EQ(endian::read64le(Seg.data() + 8), 0u);
  EXPECT_EQ(endian::read64le(Seg.data() + 24 + 8), KeySlotSize);
  // The REL32 against __hip_fatbin_second keeps addend 0; the symbol moved.
  ArrayRef<uint8_t> Text =
      contents(**Obj, cantFail((*Obj)->getSection(3)));
  EXPECT_EQ(endian::read32le(Text.data() + 3), 0u);
  auto Second = (*Obj)->getSymbol(2);
  ASSERT_TRUE(static_cast<bool>(Second));
  EXPECT_EQ(cantFail((*Obj)->getSymbolName(*Second)), "__hip_fatbin_second");
  EXPECT_EQ(Second->getValue(), KeySlotSize);
  // The section symbol's auxiliary length is the key section's size.
  auto SecSym = (*Obj)->getSymbol(0);
  ASSERT_TRUE(static_cast<bool>(SecSym));
  const coff_aux_section_definition *Aux = SecSym->getSectionDefinition();
  ASSERT_NE(Aux, nullptr);
  EXPECT_EQ(Aux->Length, 2 * KeySlotSize);

  // The guard: an external undefined symbol appended to the symbol table
  // (no index moves), and a REL32 against it at GuardFieldOffset of every
  // slot, addend 4 in place.
  const uint32_t NumSymbols = (*Obj)->getNumberOfSymbols();
  auto Guard = (*Obj)->getSymbol(NumSymbols - 1);
  ASSERT_TRUE(static_cast<bool>(Guard));
  EXPECT_EQ(cantFail((*Obj)->getSymbolName(*Guard)), GuardSymbolName);
  EXPECT_TRUE(Guard->isUndefined());
  EXPECT_TRUE(Guard->isExternal());
  ArrayRef<coff_relocation> KeyRelocs = (*Obj)->getRelocations(Key);
  ASSERT_EQ(KeyRelocs.size(), 2u);
  for (size_t I = 0; I < KeyRelocs.size(); ++I) {
    EXPECT_EQ(KeyRelocs[I].VirtualAddress, I * KeySlotSize + GuardFieldOffset);
    EXPECT_EQ(KeyRelocs[I].SymbolTableIndex, NumSymbols - 1);
    EXPECT_EQ(KeyRelocs[I].Type, COFF::IMAGE_REL_AMD64_REL32);
    EXPECT_EQ(endian::read32le(Keys.data() + I * KeySlotSize +
                               GuardFieldOffset),
              4u);
  }

  // Deterministic.
  SmallVector<char, 0> Again;
  ASSERT_FALSE(static_cast<bool>(
      rewriteFatCoffObject(MemoryBufferRef(asRef(In), "fat.o"), Again)));
  EXPECT_EQ(Out, Again);
}

TEST(ReadyCoffObject, ReferenceOutsideABundleIsAnError) {
  std::vector<uint8_t> In = fatObject(bundle("FIRST"), bundle("SECOND"));
  // Move __hip_fatbin_second into the zero fill between the bundles.
  const size_t SymOff = endian::read32le(In.data() + 8);
  endian::write32le(In.data() + SymOff + 36 + 8, 2048);
  SmallVector<char, 0> Out;
  Error E = rewriteFatCoffObject(MemoryBufferRef(asRef(In), "fat.o"), Out);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(toString(std::move(E)).find("not inside a bundle"),
            std::string::npos);
}

TEST(ReadyCoffObject, RejectsObjectsItCannotRewrite) {
  std::vector<uint8_t> In = fatObject(bundle("FIRST"), bundle("SECOND"));
  SmallVector<char, 0> Out;
  // Truncated in the middle of .hip_fatbin.
  std::vector<uint8_t> Short(In.begin(), In.begin() + 400);
  Error E = rewriteFatCoffObject(MemoryBufferRef(asRef(Short), "s.o"), Out);
  EXPECT_TRUE(static_cast<bool>(E));
  consumeError(std::move(E));
  // Bigobj header.
  std::vector<uint8_t> Big(64, 0);
  endian::write16le(Big.data() + 2, 0xffff);
  E = rewriteFatCoffObject(MemoryBufferRef(asRef(Big), "b.o"), Out);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(toString(std::move(E)).find("bigobj"), std::string::npos);
  // A relocation kind whose addend cannot be moved (ADDR32NB is movable;
  // SECTION is not).
  const size_t TextRel = 20 + 3 * 40 + 4096 + bundle("SECOND").size() + 48 +
                         20 + 8;
  endian::write16le(In.data() + TextRel + 8, COFF::IMAGE_REL_AMD64_SECTION);
  E = rewriteFatCoffObject(MemoryBufferRef(asRef(In), "f.o"), Out);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(toString(std::move(E)).find("refers to .hip_fatbin"),
            std::string::npos);
}

} // namespace

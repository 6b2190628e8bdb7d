//===- RecordsTest.cpp - kpack-ready record codec --------------------------===//

#include "kpack/KpackReady.h"

#include "llvm/Support/Endian.h"
#include "gtest/gtest.h"

using namespace kpack::ready;
using llvm::ArrayRef;

namespace {

std::vector<uint8_t> bytesOf(llvm::StringRef S) {
  return std::vector<uint8_t>(S.bytes_begin(), S.bytes_end());
}

TEST(ContentKey, IsFnv1a64) {
  // Published FNV-1a 64 test vectors.
  EXPECT_EQ(computeContentKey({}), 0xcbf29ce484222325ULL);
  EXPECT_EQ(computeContentKey(bytesOf("a")), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(computeContentKey(bytesOf("foobar")), 0x85944171f73967e8ULL);
}

TEST(PayloadRecord, RoundTrips) {
  std::vector<uint8_t> Bundle = bytesOf("__CLANG_OFFLOAD_BUNDLE__x");
  std::vector<uint8_t> Record = encodePayloadRecord(Bundle);
  EXPECT_EQ(Record.size(), PayloadHeaderSize + 32);
  EXPECT_EQ(llvm::support::endian::read32le(Record.data()), PayloadMagic);
  auto Parsed = parsePayloadSection(Record);
  ASSERT_TRUE(static_cast<bool>(Parsed)) << toString(Parsed.takeError());
  ASSERT_EQ(Parsed->size(), 1u);
  EXPECT_EQ((*Parsed)[0].Key, computeContentKey(Bundle));
  EXPECT_EQ((*Parsed)[0].Offset, 0u);
  EXPECT_EQ((*Parsed)[0].Bundle.vec(), Bundle);
}

TEST(PayloadRecord, ConcatenatedWithZeroFill) {
  std::vector<uint8_t> A = bytesOf("first bundle");
  std::vector<uint8_t> B = bytesOf("second, longer bundle");
  std::vector<uint8_t> Section = encodePayloadRecord(A);
  Section.resize(Section.size() + 16, 0); // alignment fill
  uint64_t SecondOffset = Section.size();
  std::vector<uint8_t> RB = encodePayloadRecord(B);
  Section.insert(Section.end(), RB.begin(), RB.end());
  auto Parsed = parsePayloadSection(Section);
  ASSERT_TRUE(static_cast<bool>(Parsed)) << toString(Parsed.takeError());
  ASSERT_EQ(Parsed->size(), 2u);
  EXPECT_EQ((*Parsed)[0].Bundle.vec(), A);
  EXPECT_EQ((*Parsed)[1].Bundle.vec(), B);
  EXPECT_EQ((*Parsed)[1].Offset, SecondOffset);
}

std::string parseError(ArrayRef<uint8_t> Section) {
  auto Parsed = parsePayloadSection(Section);
  if (Parsed)
    return "";
  return toString(Parsed.takeError());
}

TEST(PayloadRecord, RejectsTruncation) {
  std::vector<uint8_t> Record = encodePayloadRecord(bytesOf("0123456789abcdef"));
  EXPECT_NE(parseError(ArrayRef<uint8_t>(Record).drop_back(9)).find("exceeds"),
            std::string::npos);
  EXPECT_NE(parseError(ArrayRef<uint8_t>(Record).take_front(20)).find("truncated"),
            std::string::npos);
}

TEST(PayloadRecord, RejectsBadMagicVersionAndKey) {
  std::vector<uint8_t> Good = encodePayloadRecord(bytesOf("payload bytes"));
  std::vector<uint8_t> Magic = Good;
  Magic[0] ^= 1;
  EXPECT_NE(parseError(Magic).find("magic"), std::string::npos);
  std::vector<uint8_t> Version = Good;
  Version[4] = 2;
  EXPECT_NE(parseError(Version).find("version 2"), std::string::npos);
  std::vector<uint8_t> Bytes = Good;
  Bytes[PayloadHeaderSize] ^= 0x40;
  EXPECT_NE(parseError(Bytes).find("content key"), std::string::npos);
}

TEST(KeyRecord, RoundTripsInOneSlot) {
  std::vector<uint8_t> Slot = encodeKeyRecord(0x0123456789abcdefULL, 4096);
  ASSERT_EQ(Slot.size(), KeySlotSize);
  for (size_t I = 24; I < Slot.size(); ++I)
    EXPECT_EQ(Slot[I], 0) << "reserved byte " << I;
  auto R = parseKeyRecord(Slot);
  ASSERT_TRUE(static_cast<bool>(R)) << toString(R.takeError());
  EXPECT_EQ(R->Key, 0x0123456789abcdefULL);
  EXPECT_EQ(R->BundleSize, 4096u);
}

TEST(KeyRecord, RejectsShortOrForeignSlots) {
  std::vector<uint8_t> Slot = encodeKeyRecord(1, 2);
  auto Short = parseKeyRecord(ArrayRef<uint8_t>(Slot).drop_back());
  EXPECT_FALSE(static_cast<bool>(Short));
  consumeError(Short.takeError());
  Slot[0] = 0x82; // msgpack fixmap: what finalize writes over the slot
  auto Foreign = parseKeyRecord(Slot);
  EXPECT_FALSE(static_cast<bool>(Foreign));
  consumeError(Foreign.takeError());
}

TEST(KeySection, SplitsIntoSlots) {
  std::vector<uint8_t> Section = encodeKeyRecord(11, 100);
  std::vector<uint8_t> Second = encodeKeyRecord(22, 200);
  Section.insert(Section.end(), Second.begin(), Second.end());
  auto Slots = parseKeySection(Section);
  ASSERT_TRUE(static_cast<bool>(Slots)) << toString(Slots.takeError());
  ASSERT_EQ(Slots->size(), 2u);
  EXPECT_EQ((*Slots)[1].Offset, KeySlotSize);
  EXPECT_EQ((*Slots)[1].Record.Key, 22u);
  EXPECT_EQ((*Slots)[1].Record.BundleSize, 200u);

  auto Ragged = parseKeySection(ArrayRef<uint8_t>(Section).drop_back(8));
  ASSERT_FALSE(static_cast<bool>(Ragged));
  EXPECT_NE(toString(Ragged.takeError()).find("not a multiple of 256"),
            std::string::npos);
  Section[KeySlotSize] = 'X';
  auto Bad = parseKeySection(Section);
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_NE(toString(Bad.takeError()).find("offset 0x100"), std::string::npos);
}

} // namespace

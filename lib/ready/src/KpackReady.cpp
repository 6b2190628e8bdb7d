//===- KpackReady.cpp - Kpack-ready record encoding ------------------------===//

#include "kpack/KpackReady.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;

namespace kpack {
namespace ready {

uint64_t updateContentKey(uint64_t Hash, ArrayRef<uint8_t> Bytes) {
  for (uint8_t Byte : Bytes) {
    Hash ^= Byte;
    Hash *= 0x100000001b3ULL;
  }
  return Hash;
}

uint64_t computeContentKey(ArrayRef<uint8_t> Bundle) {
  return updateContentKey(ContentKeyBasis, Bundle);
}

static void appendLE32(std::vector<uint8_t> &Out, uint32_t V) {
  uint8_t Buf[4];
  support::endian::write32le(Buf, V);
  Out.insert(Out.end(), Buf, Buf + 4);
}

static void appendLE64(std::vector<uint8_t> &Out, uint64_t V) {
  uint8_t Buf[8];
  support::endian::write64le(Buf, V);
  Out.insert(Out.end(), Buf, Buf + 8);
}

std::vector<uint8_t> encodePayloadRecord(ArrayRef<uint8_t> Bundle) {
  std::vector<uint8_t> Out;
  Out.reserve(PayloadHeaderSize + alignTo(Bundle.size(), RecordAlign));
  appendLE32(Out, PayloadMagic);
  appendLE32(Out, PayloadVersion);
  appendLE64(Out, computeContentKey(Bundle));
  appendLE64(Out, Bundle.size());
  appendLE64(Out, 0);
  Out.insert(Out.end(), Bundle.begin(), Bundle.end());
  Out.resize(alignTo(Out.size(), RecordAlign), 0);
  return Out;
}

std::vector<uint8_t> encodeKeyRecord(uint64_t Key, uint64_t Size) {
  std::vector<uint8_t> Out;
  Out.reserve(KeySlotSize);
  appendLE32(Out, KeyMagic);
  appendLE32(Out, KeyVersion);
  appendLE64(Out, Key);
  appendLE64(Out, Size);
  Out.resize(KeySlotSize, 0);
  return Out;
}

static Error malformed(const Twine &Msg, uint64_t Offset) {
  return createStringError(inconvertibleErrorCode(),
                           PayloadSectionName + ": " + Msg + " at offset 0x" +
                               Twine::utohexstr(Offset));
}

Expected<std::vector<PayloadRecord>>
parsePayloadSection(ArrayRef<uint8_t> Contents, KeyCheck Check) {
  using namespace support::endian;
  std::vector<PayloadRecord> Records;
  uint64_t Off = 0;
  while (Off < Contents.size()) {
    uint64_t Left = Contents.size() - Off;
    const uint8_t *P = Contents.data() + Off;
    // Alignment fill between concatenated sections.
    if (Left >= RecordAlign && read64le(P) == 0) {
      Off += RecordAlign;
      continue;
    }
    if (Left < PayloadHeaderSize)
      return malformed("truncated record header", Off);
    if (read32le(P) != PayloadMagic)
      return malformed("bad payload record magic", Off);
    if (read32le(P + 4) != PayloadVersion)
      return malformed("unsupported payload record version " +
                           Twine(read32le(P + 4)),
                       Off);
    uint64_t Key = read64le(P + 8);
    uint64_t Size = read64le(P + 16);
    if (Size > Left - PayloadHeaderSize)
      return malformed("payload size " + Twine(Size) + " exceeds the section",
                       Off);
    PayloadRecord R;
    R.Key = Key;
    R.Offset = Off;
    R.Bundle = Contents.slice(Off + PayloadHeaderSize, Size);
    if (Check == KeyCheck::Verify && computeContentKey(R.Bundle) != Key)
      return malformed("content key does not match the payload bytes", Off);
    Records.push_back(R);
    Off += alignTo(PayloadHeaderSize + Size, RecordAlign);
  }
  return Records;
}

Expected<KeyRecord> parseKeyRecord(ArrayRef<uint8_t> Slot) {
  using namespace support::endian;
  if (Slot.size() < KeySlotSize)
    return createStringError(inconvertibleErrorCode(),
                             KeySectionName + ": truncated key record");
  if (read32le(Slot.data()) != KeyMagic)
    return createStringError(inconvertibleErrorCode(),
                             KeySectionName + ": bad key record magic");
  if (read32le(Slot.data() + 4) != KeyVersion)
    return createStringError(inconvertibleErrorCode(),
                             KeySectionName +
                                 ": unsupported key record version " +
                                 Twine(read32le(Slot.data() + 4)));
  KeyRecord R;
  R.Key = read64le(Slot.data() + 8);
  R.BundleSize = read64le(Slot.data() + 16);
  return R;
}

Expected<std::vector<KeySlot>> parseKeySection(ArrayRef<uint8_t> Contents) {
  if (Contents.size() % KeySlotSize != 0)
    return createStringError(inconvertibleErrorCode(),
                             KeySectionName + ": size " +
                                 Twine(Contents.size()) +
                                 " is not a multiple of " + Twine(KeySlotSize));
  std::vector<KeySlot> Slots;
  for (uint64_t Off = 0; Off < Contents.size(); Off += KeySlotSize) {
    Expected<KeyRecord> R = parseKeyRecord(Contents.slice(Off, KeySlotSize));
    if (!R)
      return createStringError(inconvertibleErrorCode(),
                               toString(R.takeError()) + " at offset 0x" +
                                   Twine::utohexstr(Off));
    Slots.push_back({Off, *R});
  }
  return Slots;
}

} // namespace ready
} // namespace kpack

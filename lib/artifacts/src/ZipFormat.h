//===- ZipFormat.h - Zip record layouts (PKWARE APPNOTE) --------*- C++ -*-===//
//
// The signatures, fixed sizes and field offsets of the zip records the
// reader and the writer share. All integers are little-endian.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ARTIFACTS_ZIPFORMAT_H
#define KPACK_ARTIFACTS_ZIPFORMAT_H

#include <cstddef>
#include <cstdint>

namespace kpack {
namespace zipfmt {

constexpr uint32_t LocalHeaderSig = 0x04034b50;
constexpr uint32_t CentralHeaderSig = 0x02014b50;
constexpr uint32_t EndSig = 0x06054b50;
constexpr uint32_t Zip64EndSig = 0x06064b50;
constexpr uint32_t Zip64LocatorSig = 0x07064b50;

constexpr size_t LocalHeaderSize = 30;
constexpr size_t CentralHeaderSize = 46;
constexpr size_t EndSize = 22;
/// The zip64 end record without its 12-byte signature + size prefix is 44.
constexpr size_t Zip64EndSize = 56;
constexpr size_t Zip64LocatorSize = 20;
constexpr size_t MaxCommentSize = 0xFFFF;

constexpr uint16_t Zip64ExtraId = 0x0001;

constexpr uint16_t FlagEncrypted = 0x0001;
constexpr uint16_t FlagDataDescriptor = 0x0008;
constexpr uint16_t FlagStrongEncryption = 0x0040;
constexpr uint16_t FlagUtf8 = 0x0800;
constexpr uint16_t FlagMaskedHeaders = 0x2000;

/// "Version made by"/"needed": 2.0 (deflate), 4.5 (zip64), the values
/// Python's zipfile writes; host system 3 = Unix in the high byte.
constexpr uint16_t VersionDeflate = 20;
constexpr uint16_t VersionZip64 = 45;
constexpr uint16_t HostUnix = 3;

/// 1980-01-01 00:00:00 in MS-DOS date/time fields.
constexpr uint16_t FixedDosTime = 0;
constexpr uint16_t FixedDosDate = (0 << 9) | (1 << 5) | 1;

constexpr uint32_t Max32 = 0xFFFFFFFFu;
constexpr uint16_t Max16 = 0xFFFFu;

} // namespace zipfmt
} // namespace kpack

#endif

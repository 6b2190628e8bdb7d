//===- PeImage.h - The headers of a PE32+ image, bounds-checked -*- C++ -*-===//
//
// Internal to kpack_host (CoffHostBinary.cpp, CoffRewrite.cpp): plain copies
// of a PE image's headers, read with every range checked, and the base
// relocations, read without trusting any block size. LLVM's COFFObjectFile
// reads the names and validates the rest; this is what the rewrite writes.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_ELF_PEIMAGE_H
#define KPACK_ELF_PEIMAGE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Object/COFF.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kpack {
namespace pe {

constexpr uint64_t FileHeaderSize = sizeof(llvm::object::coff_file_header);
constexpr uint64_t OptionalHeaderSize = sizeof(llvm::object::pe32plus_header);
constexpr uint64_t SectionHeaderSize = sizeof(llvm::object::coff_section);
constexpr uint64_t DataDirectorySize = sizeof(llvm::object::data_directory);
constexpr uint64_t DebugDirectorySize = sizeof(llvm::object::debug_directory);
/// Offset of CheckSum in the optional header.
constexpr uint64_t CheckSumOffset = 64;

struct Image {
  llvm::ArrayRef<uint8_t> File;
  uint64_t PeOffset = 0;       ///< e_lfanew: "PE\0\0"
  uint64_t FileHeaderOffset = 0;
  uint64_t OptOffset = 0;      ///< the optional header
  uint64_t SectionTableOffset = 0;
  llvm::object::coff_file_header FileHdr;
  llvm::object::pe32plus_header Opt;
  std::vector<llvm::object::data_directory> Dirs;
  std::vector<llvm::object::coff_section> Sections;
  /// Resolved names (long names through the string table); "" if a long
  /// name could not be resolved.
  std::vector<std::string> Names;

  uint64_t sectionTableEnd() const {
    return SectionTableOffset + Sections.size() * SectionHeaderSize;
  }
  /// The section's extent in memory (VirtualSize, or SizeOfRawData if 0).
  static uint64_t extent(const llvm::object::coff_section &S) {
    return S.VirtualSize ? uint64_t(S.VirtualSize) : uint64_t(S.SizeOfRawData);
  }
  /// Bytes of the section backed by the file: min(VirtualSize, raw size),
  /// or the raw size if VirtualSize is 0.
  static uint64_t fileBacked(const llvm::object::coff_section &S) {
    uint64_t Raw = S.SizeOfRawData;
    return S.VirtualSize ? std::min<uint64_t>(S.VirtualSize, Raw) : Raw;
  }
  /// Index of the section whose memory extent holds RVA, or -1.
  int sectionOfRva(uint64_t Rva) const;
  /// The file offset of [Rva, Rva + Size) if it is file-backed, and how
  /// many file-backed bytes follow Rva in its section.
  std::optional<uint64_t> rvaToOffset(uint64_t Rva, uint64_t Size,
                                      uint64_t *Avail = nullptr) const;
  const llvm::object::data_directory *dir(unsigned Index) const {
    return Index < Dirs.size() ? &Dirs[Index] : nullptr;
  }
};

/// Reads the headers of a PE32+ x86-64 image. Only bounds are checked
/// here (a header or the section table past the end of the file, a wrong
/// signature, machine or optional header); checkLayout checks the rest.
llvm::Expected<Image> readImage(llvm::ArrayRef<uint8_t> File);

/// True if Head (a file's first bytes) holds the headers of a PE32+ x86-64
/// image through the optional header's magic: hostImageFormat's PE case.
bool isImageHead(llvm::ArrayRef<uint8_t> Head);

/// Does the image have a .hip_fat or .hipFatB section with raw data:
/// hostImageHoldsDeviceCode's PE case (headers and section table only).
llvm::Expected<bool> holdsDeviceCode(llvm::ArrayRef<uint8_t> File);

/// Everything checkPeImage promises (kpack/COFF/CoffHostBinary.h).
llvm::Error checkLayout(const Image &I);

struct BaseReloc {
  uint64_t Rva = 0;
  uint8_t Type = 0;
  uint64_t EntryOffset = 0; ///< file offset of the 2-byte entry
};
/// The base relocations (ABSOLUTE padding entries left out), every block
/// checked to lie inside the directory, which must be file-backed.
llvm::Expected<std::vector<BaseReloc>> readBaseRelocs(const Image &I);

/// The debug directory entries and their file offsets.
struct DebugEntry {
  llvm::object::debug_directory Entry;
  uint64_t FileOffset = 0;
};
llvm::Expected<std::vector<DebugEntry>> readDebugDirectory(const Image &I);

std::string hex(uint64_t V);

} // namespace pe
} // namespace kpack

#endif

//===- TestArchive.h - Independent .kpack decoder for the writer tests ----===//
//
// Decodes an archive the way upstream's reader does (header, msgpack TOC,
// walking the frame-size chain), written separately from the project's
// runtime reader so the writer tests do not depend on it.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_TEST_TESTARCHIVE_H
#define KPACK_TEST_TESTARCHIVE_H

#include "TestFiles.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kpack::test {

struct DecodedEntry {
  std::string Key, Arch;
  uint64_t Ordinal = 0, OriginalSize = 0;
  bool HasFrameOffset = false;
  uint64_t FrameOffset = 0, FrameSize = 0;
  std::vector<uint8_t> Bytes; ///< decompressed payload
  bool FrameHasContentSize = false;
};

struct DecodedArchive {
  std::string GroupName, Family, Scheme;
  std::vector<std::string> Arches;
  std::vector<std::string> TopLevelKeys; ///< TOC map keys in file order
  std::vector<DecodedEntry> Entries;     ///< in TOC order
};

/// Reads a whole archive file; returns "" or an error message.
std::string decodeArchive(const std::string &Path, DecodedArchive &Out);
/// Compressible bytes, different for every seed.
std::vector<uint8_t> patternBytes(size_t Size, unsigned Seed);

} // namespace kpack::test

#endif

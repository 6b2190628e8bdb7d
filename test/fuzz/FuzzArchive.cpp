//===- FuzzArchive.cpp - Fuzz the archive reader --------------------------===//
//
// Input: the bytes of a .kpack file. Opens it from memory and reads every
// entry; any crash, sanitizer report or leak is a bug. Version-2 archives
// read with a tiny segment cache, so that eviction runs too.
//
//===----------------------------------------------------------------------===//

#include "kpack/ArchiveReader.h"

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::unique_ptr<kpack::ArchiveReader> Reader;
  if (kpack::ArchiveReader::openBytes(Data, Size, Reader))
    return 0;
  Reader->setSegmentCacheLimit(256);
  for (const kpack::ArchiveReader::Entry &E : Reader->entries()) {
    uint64_t Compressed = 0;
    (void)Reader->compressedSize(E, Compressed);
    std::vector<uint8_t> Out;
    (void)Reader->read(E, Out);
    (void)Reader->find(E.Key, E.Arch);
  }
  return 0;
}

//===- FuzzZip.cpp - Fuzz the wheel tools' zip reader ---------------------===//
//
// Input: the bytes of a zip. Opens it with kpack::ZipReader (which validates
// the whole structure), reads every entry (inflating, checking size and
// CRC-32), and runs the WHEEL/METADATA and RECORD parsers on every entry's
// contents. Any crash, sanitizer report or leak is a bug.
//
//===----------------------------------------------------------------------===//

#include "kpack/Wheel.h"
#include "kpack/Zip.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>

using namespace llvm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  Expected<kpack::ZipReader> Zip =
      kpack::ZipReader::openBuffer(MemoryBuffer::getMemBufferCopy(
          StringRef(reinterpret_cast<const char *>(Data), Size), "fuzz.zip"));
  if (!Zip) {
    consumeError(Zip.takeError());
    return 0;
  }
  for (const kpack::ZipEntry &E : Zip->entries()) {
    if (Zip->find(E.Name) != &E)
      __builtin_trap();
    Expected<std::string> Text = Zip->readAll(E, 1 << 20);
    if (!Text) {
      consumeError(Text.takeError());
      continue;
    }
    if (Text->size() != E.UncompressedSize)
      __builtin_trap();
    Expected<kpack::WheelHeaderFile> Headers =
        kpack::WheelHeaderFile::parse(*Text, "fuzz");
    if (Headers) {
      // Untouched files are written back byte for byte.
      if (Headers->str() != *Text)
        __builtin_trap();
    } else {
      consumeError(Headers.takeError());
    }
    Expected<std::vector<kpack::RecordEntry>> Rows =
        kpack::parseRecord(*Text, "fuzz");
    if (Rows) {
      // What the writer makes of the rows parses back to the same rows.
      Expected<std::vector<kpack::RecordEntry>> Again =
          kpack::parseRecord(kpack::writeRecord(*Rows), "fuzz");
      if (!Again || Again->size() != Rows->size())
        __builtin_trap();
      for (size_t I = 0; I < Rows->size(); ++I)
        if ((*Again)[I].Path != (*Rows)[I].Path ||
            (*Again)[I].Hash != (*Rows)[I].Hash ||
            (*Again)[I].Size != (*Rows)[I].Size)
          __builtin_trap();
    } else {
      consumeError(Rows.takeError());
    }
  }
  return 0;
}

//===- FuzzWheel.cpp - Fuzz the wheel tools' wheel reader -----------------===//
//
// Input: the bytes of a wheel, named pkg-1.0-py3-none-any.whl. Opens it as
// `kpack split-wheel` and `recombine-wheels` read their inputs
// (kpack::WheelFile: the zip validated, one .dist-info matching the name,
// WHEEL, METADATA and RECORD parsed, RECORD listing every file with a hash)
// and reads every entry as they do, checked against RECORD. Any crash,
// sanitizer report or leak is a bug, and so is a broken invariant: a file
// read without error matches its RECORD row, and the mode an output entry
// gets from an input entry is a regular file without setuid, setgid or
// sticky bits.
//
//===----------------------------------------------------------------------===//

#include "kpack/Wheel.h"
#include "kpack/Zip.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace llvm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  Expected<kpack::WheelFile> W =
      kpack::WheelFile::openBuffer(MemoryBuffer::getMemBufferCopy(
          StringRef(reinterpret_cast<const char *>(Data), Size),
          "pkg-1.0-py3-none-any.whl"));
  if (!W) {
    consumeError(W.takeError());
    return 0;
  }
  if (W->distInfoDir().empty() || W->projectName().empty() ||
      W->version() != "1.0")
    __builtin_trap();
  (void)W->tags();
  (void)W->rootIsPurelib();
  for (const kpack::ZipEntry &E : W->zip().entries()) {
    uint32_t Mode = kpack::zipFileMode(E.unixMode());
    if ((Mode & 0170000) != 0100000 || (Mode & 07000) != 0)
      __builtin_trap();
    if (E.isDirectory() || W->isRecordFile(E.Name))
      continue;
    uint64_t Read = 0;
    Expected<kpack::RecordEntry> Row =
        W->readVerified(E, [&](ArrayRef<uint8_t> Chunk) -> Error {
          Read += Chunk.size();
          return Error::success();
        });
    if (!Row) {
      consumeError(Row.takeError());
      continue;
    }
    if (Read != E.UncompressedSize || Row->Path != E.Name ||
        Row->Size != std::to_string(Read) ||
        !StringRef(Row->Hash).starts_with("sha256="))
      __builtin_trap();
  }
  return 0;
}

//===- FuzzLinkInput.cpp - Fuzz ld.kpack's input reader -------------------===//
//
// Input: the bytes of one link input (relocatable object, archive, bitcode).
// Runs what ld.kpack runs on each input before linking (lld-plugin
// InputRewriter.cpp over lib/ready: fat objects rewritten kpack-ready, payload
// records collected), then what its finalize step runs on each collected
// bundle: decoding and the archive-entry check. Any crash, sanitizer report
// or leak is a bug.
//
//===----------------------------------------------------------------------===//

#include "InputRewriter.h"

#include "kpack/BundleCodec.h"
#include "kpack/CodeObjectCheck.h"
#include "kpack/ReadyObject.h"

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>

using namespace llvm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  MemoryBufferRef Input(StringRef(reinterpret_cast<const char *>(Data), Size),
                        "input.o");
  kpack::link::PayloadStore Store;
  Expected<std::unique_ptr<MemoryBuffer>> Rewritten =
      kpack::link::readLinkInput(Input, Store);
  if (!Rewritten) {
    consumeError(Rewritten.takeError());
    return 0;
  }
  // What `kpack-ready --dump` and the linker see of the kpack-ready form.
  MemoryBufferRef Ready = *Rewritten ? (*Rewritten)->getMemBufferRef() : Input;
  if (Expected<std::unique_ptr<object::ObjectFile>> Obj =
          object::ObjectFile::createObjectFile(Ready)) {
    consumeError(kpack::ready::inspectReadyObject(**Obj).takeError());
  } else {
    consumeError(Obj.takeError());
  }
  Store.forEach([](uint64_t, ArrayRef<uint8_t> Bytes) {
    kpack::Bundle B;
    if (kpack::decodeBundle(Bytes.data(), Bytes.size(), B))
      return;
    for (const kpack::BundleEntry *E : B.deviceEntries())
      consumeError(kpack::checkArchiveEntry(
                       E->TargetId, ArrayRef<uint8_t>(B.payload(*E), E->Size),
                       kpack::OpaqueEntries::Reject)
                       .takeError());
  });
  return 0;
}

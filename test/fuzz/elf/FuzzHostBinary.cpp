//===- FuzzHostBinary.cpp - Fuzz host-binary analysis and conversion ------===//
//
// Input: the bytes of an x86-64 ELF host binary. Runs what `kpack inspect`
// and `kpack convert` run, in memory: the analysis, decoding every bundle,
// the archive-entry check of every code object, the ELF rewrite with its
// verifier, and the analysis of the result. Any crash, sanitizer report or
// leak is a bug; so is an input the converter accepts but its own verifier
// then rejects ("internal error"): bad input must be diagnosed as such.
//
//===----------------------------------------------------------------------===//

#include "kpack/CodeObjectCheck.h"
#include "kpack/HostBinary.h"
#include "kpack/HostRewrite.h"
#include "kpack/Metadata.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

using namespace llvm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  MemoryBufferRef Image(
      StringRef(reinterpret_cast<const char *>(Data), Size), "input");
  // The header-only classification split and the wheel tools use first.
  (void)kpack::hostImageFormat(
      Image.getBuffer().take_front(kpack::HostImageHeadSize));
  if (Expected<bool> Holds = kpack::hostImageHoldsDeviceCode(Image.getBuffer());
      !Holds)
    consumeError(Holds.takeError());
  Expected<kpack::HostBinary> Host = kpack::analyzeHostBinary(Image);
  if (!Host) {
    consumeError(Host.takeError());
    return 0;
  }
  for (const kpack::BundleInfo &B : Host->Bundles) {
    kpack::Bundle Decoded;
    if (Error E = kpack::decodeBundleAt(Image, B, Decoded)) {
      consumeError(std::move(E));
      continue;
    }
    for (const kpack::BundleEntry *E : Decoded.deviceEntries())
      consumeError(kpack::checkArchiveEntry(
                       E->TargetId,
                       ArrayRef<uint8_t>(Decoded.payload(*E), E->Size),
                       kpack::OpaqueEntries::Reject)
                       .takeError());
  }

  std::vector<uint8_t> Metadata;
  if (kpack::encodeKpackMetadata({"fuzz", {"fuzz_@GFXARCH@.kpack"}}, Metadata))
    abort();
  Expected<std::vector<uint8_t>> Out =
      kpack::rewriteHostBinary(Image, *Host, Metadata);
  if (!Out) {
    std::string Message = toString(Out.takeError());
    if (StringRef(Message).contains("internal error")) {
      errs() << "bad input reached the verifier: " << Message << "\n";
      abort();
    }
    return 0;
  }
  MemoryBufferRef Converted(
      StringRef(reinterpret_cast<const char *>(Out->data()), Out->size()),
      "converted");
  Expected<kpack::HostBinary> After = kpack::analyzeHostBinary(Converted);
  if (!After) {
    errs() << "the converted binary does not re-analyze: "
           << toString(After.takeError()) << "\n";
    abort();
  }
  return 0;
}

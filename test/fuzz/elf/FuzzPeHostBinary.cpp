//===- FuzzPeHostBinary.cpp - Fuzz the PE/COFF host-binary reader ---------===//
//
// Input: the bytes of a Windows PE image or COFF object (anything else is
// skipped: kpack_fuzz_host_binary covers ELF). Runs the header-only
// classification (hostImageFormat, hostImageHoldsDeviceCode), the PE layout check,
// the analysis, decoding of every bundle, the PE rewrite with its verifier
// and the analysis of the result. Any crash, sanitizer report or leak is a
// bug; so is an input the rewrite accepts but its own verifier rejects
// ("internal error"), or a result that does not re-analyze.
//
//===----------------------------------------------------------------------===//

#include "kpack/COFF/CoffHostBinary.h"
#include "kpack/HostBinary.h"
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
  StringRef Bytes(reinterpret_cast<const char *>(Data), Size);
  if (!kpack::isCoffFile(Bytes))
    return 0;
  // The header-only classification split and the wheel tools use first.
  (void)kpack::hostImageFormat(Bytes.take_front(kpack::HostImageHeadSize));
  if (Expected<bool> Holds = kpack::hostImageHoldsDeviceCode(Bytes); !Holds)
    consumeError(Holds.takeError());
  MemoryBufferRef Image(Bytes, "input");
  if (Bytes.starts_with("MZ"))
    consumeError(kpack::checkPeImage(Image));
  Expected<kpack::HostBinary> Host = kpack::analyzeCoffHostBinary(Image);
  if (!Host) {
    consumeError(Host.takeError());
    return 0;
  }
  for (const kpack::BundleInfo &B : Host->Bundles) {
    kpack::Bundle Decoded;
    consumeError(kpack::decodeBundleAt(Image, B, Decoded));
  }
  std::vector<uint8_t> Metadata;
  if (kpack::encodeKpackMetadata({"fuzz", {"fuzz_@GFXARCH@.kpack"}}, Metadata))
    abort();
  Expected<std::vector<uint8_t>> Out =
      kpack::rewriteCoffHostBinary(Image, *Host, Metadata);
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
  if (!After || !After->hasHIPK()) {
    errs() << "the converted image does not re-analyze as kpack\n";
    if (!After)
      consumeError(After.takeError());
    abort();
  }
  return 0;
}

//===- CompressionSettings.cpp - One check of --compression/--level -------===//

#include "kpack/Emission.h"
#include "kpack/LLVMError.h"

using namespace llvm;
using namespace kpack;

Expected<CompressionSettings>
CompressionSettings::parse(StringRef Scheme, std::optional<int> Level) {
  CompressionSettings S;
  if (Scheme == "none")
    S.Scheme = ArchiveCompression::None;
  else if (Scheme == "zstd" || Scheme == "zstd-per-kernel")
    S.Scheme = ArchiveCompression::ZstdPerKernel;
  else
    return makeError("unknown compression '" + Scheme +
                     "' (expected none or zstd)");
  if (Level) {
    if (S.Scheme == ArchiveCompression::None)
      return makeError("a compression level needs --compression zstd");
    if (*Level < 1 || *Level > 22)
      return makeError("zstd level " + Twine(*Level) + " is not in 1..22");
    S.Level = *Level;
  }
  return S;
}

//===- FuzzMetadata.cpp - Fuzz the HIPK metadata parser -------------------===//
//
// Input: the bytes a HIPK wrapper points at. The parser is given exactly the
// input's size, so ASan flags any read past the metadata record.
//
//===----------------------------------------------------------------------===//

#include "kpack/LoaderCache.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  kpack::HipkReference Ref;
  (void)kpack::parseHipkReference(Data, Size, Ref);
  return 0;
}

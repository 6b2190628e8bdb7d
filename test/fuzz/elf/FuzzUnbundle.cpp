//===- FuzzUnbundle.cpp - Fuzz kpack unbundle's input ---------------------===//
//
// Input: the bytes of an unbundle input: an ELF or PE host binary, or a file
// of offload bundles (uncompressed or CCOB). Runs unbundleImage, what
// `kpack unbundle` runs before it writes anything, without and with an
// architecture filter. Besides any crash, sanitizer report or leak, a
// finding is an output name that is not one plain file name, so that
// DIR/<name> could be anywhere but in DIR: a path separator ('/' or '\'),
// "." or "..", a control byte, or a name whose DIR/<name> does not stay in
// DIR once "." and ".." are resolved.
//
//===----------------------------------------------------------------------===//

#include "UnbundleInput.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"
#include "llvm/Support/Path.h"

#include <cstddef>
#include <cstdint>

using namespace llvm;

static void checkName(StringRef Name) {
  if (Name.empty() || Name == "." || Name == ".." ||
      Name.find_first_of("/\\") != StringRef::npos)
    __builtin_trap();
  for (char C : Name)
    if (static_cast<unsigned char>(C) < 0x20 || C == 0x7f)
      __builtin_trap();
  SmallString<256> Path("/out/dir/");
  Path += Name;
  sys::path::remove_dots(Path, /*remove_dot_dot=*/true,
                         sys::path::Style::posix);
  if (sys::path::parent_path(Path, sys::path::Style::posix) != "/out/dir")
    __builtin_trap();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  MemoryBufferRef Image(StringRef(reinterpret_cast<const char *>(Data), Size),
                        "input");
  for (StringRef Arch : {"", "gfx1100"}) {
    Expected<std::vector<kpack::UnbundledObject>> Objects =
        kpack::unbundleImage(Image, Arch);
    if (!Objects) {
      consumeError(Objects.takeError());
      continue;
    }
    for (const kpack::UnbundledObject &O : *Objects)
      checkName(O.Name);
  }
  return 0;
}

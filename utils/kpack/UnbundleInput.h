//===- UnbundleInput.h - unbundle: input bytes to named files -*- C++ -*-===//
//
// What `kpack unbundle` makes of one input, in memory: the device code
// objects of a host binary (ELF .hip_fatbin, PE .hip_fat) or of a file of
// offload bundles, each with the file name it is written under. Separate
// from the command line (Unbundle.cpp) so that the unbundle fuzzer
// (test/fuzz/elf) runs exactly this.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_UTILS_KPACK_UNBUNDLEINPUT_H
#define KPACK_UTILS_KPACK_UNBUNDLEINPUT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kpack {

struct UnbundledObject {
  /// One file name, never a path: "<entry ID>[_<i>].hsaco" (".elf" for an
  /// ID not starting with "hip").
  std::string Name;
  std::vector<uint8_t> Bytes;
};

/// The device entries of every bundle of Image (its identifier names it in
/// messages), in order; with Arch not empty only those whose processor is
/// Arch (none is an error). The names are made of entry IDs, so every entry
/// kept must have an ID "<kind>-amdgcn-amd-amdhsa--<target ID>", kind
/// letters and digits and the target passing parseTargetId (the check
/// convert, split and ld.kpack make before an archive is named after a
/// target): an ID like "../../tmp/x-amd-x--gfx1100" is an error, so no name
/// leaves the output directory.
llvm::Expected<std::vector<UnbundledObject>>
unbundleImage(llvm::MemoryBufferRef Image, llvm::StringRef Arch);

} // namespace kpack

#endif

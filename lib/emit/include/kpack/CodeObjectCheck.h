//===- kpack/CodeObjectCheck.h - Is an archive entry what its arch says? -===//
//
// The one check of a (arch, bytes) archive entry. Every path that writes an
// archive (kpack convert, kpack pack, ld.kpack) runs it on each entry before
// anything is written, and kpack verify runs it on each entry it reads, so a
// writer can never produce an archive that verify rejects.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_CODEOBJECTCHECK_H
#define KPACK_CODEOBJECTCHECK_H

#include "kpack/TargetId.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace kpack {

/// The target an AMDGPU code object was built for (processor from
/// EF_AMDGPU_MACH, xnack/sramecc from the feature bits), or std::nullopt if
/// Bytes is not an AMDGPU ELF file. Errors: an ELF file llvm::object cannot
/// read, an AMDGPU ELF with an unknown EF_AMDGPU_MACH.
llvm::Expected<std::optional<TargetId>>
codeObjectTarget(llvm::ArrayRef<uint8_t> Bytes);

/// What an archive entry may hold besides an AMDGPU code object.
enum class OpaqueEntries {
  /// Bytes that are no AMDGPU ELF are kept as an opaque blob (upstream's
  /// synthetic archives, `kpack pack KEY:ARCH=FILE` of arbitrary files).
  Allow,
  /// They are an error (device code of an offload bundle, verify --strict).
  Reject,
};

/// Checks that Arch is a target ID and that Bytes, if an ELF file, is an
/// AMDGPU code object built for exactly that target. Returns the code
/// object's target, or std::nullopt for an opaque entry (Policy Allow). The
/// messages quote no input bytes beyond a short excerpt of Arch.
llvm::Expected<std::optional<TargetId>>
checkArchiveEntry(llvm::StringRef Arch, llvm::ArrayRef<uint8_t> Bytes,
                  OpaqueEntries Policy);

} // namespace kpack

#endif

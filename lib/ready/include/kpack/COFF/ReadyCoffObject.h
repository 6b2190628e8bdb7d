//===- kpack/COFF/ReadyCoffObject.h - Kpack-ready COFF objects --*- C++ -*-===//
//
// The COFF side of the kpack-ready convention (docs/kpack-ready.md, "COFF
// objects"): a fat x86-64 COFF object (what clang compiles HIP to for
// `x86_64-w64-mingw32` and `x86_64-pc-windows-msvc`, or what
// clang-linker-wrapper generates for the new offload driver) rewritten into
// its kpack-ready form, so that a PE link never lays out device code.
// ld.kpack uses it for fat COFF inputs (objects and archive members).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_COFF_READYCOFFOBJECT_H
#define KPACK_COFF_READYCOFFOBJECT_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

namespace kpack {
namespace ready {

/// True if \p Bytes start like an x86-64 COFF object (not an image, not an
/// import member): the machine field and a section count, no optional header.
bool isCoffObjectBytes(llvm::StringRef Bytes);

/// Rewrites the fat x86-64 COFF object \p In (regular COFF, not bigobj) into
/// \p Out:
///   * `.hip_fatbin` is split into its bundles (one per 4096-aligned offset,
///     as clang lays them out);
///   * the section keeps its number and becomes `.kpackrf` (read-only
///     initialized data, align 8) holding one 256-byte key record per bundle,
///     each with an IMAGE_REL_AMD64_REL32 at GuardFieldOffset against the
///     external undefined GuardSymbolName (KpackReady.h), appended to the
///     symbol table;
///   * a new last section `.rocm_kpack_payload` (IMAGE_SCN_LNK_REMOVE, so
///     every link drops it) holds one payload record per bundle;
///   * symbols defined in the old section move from bundle i to slot i, and
///     the implicit addends of relocations against them (IMAGE_REL_AMD64_ADDR64
///     of the wrapper's `binary`, and the 32-bit kinds) are moved to match;
///     the section symbol's auxiliary length follows.
/// Every other section keeps its header fields, bytes and relocations;
/// symbols and the string table are copied (the guard symbol and two strings
/// added). The output
/// is deterministic; \p In is not modified. An object without `.hip_fatbin`,
/// a bigobj object, a relocation against a bundle of a kind whose addend
/// cannot be moved, or malformed tables are errors that do not name the
/// input (callers add it).
llvm::Error rewriteFatCoffObject(llvm::MemoryBufferRef In,
                                 llvm::SmallVectorImpl<char> &Out);

} // namespace ready
} // namespace kpack

#endif // KPACK_COFF_READYCOFFOBJECT_H

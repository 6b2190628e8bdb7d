//===- kpack/MetadataRoom.h - Extra room for the HIPK metadata --*- C++ -*-===//
//
// Finalize writes the metadata over the linked `.rocm_kpack_ref`, which holds
// at least one 256-byte key slot when any wrapper is live. Metadata longer
// than that (a long kernel name or many search paths) gets its room from one
// extra input object whose `.rocm_kpack_ref` section is zero-filled and
// retained (SHF_GNU_RETAIN), linked last so that it extends the output
// section at its end (docs/kpack-ready.md, "Room for the metadata").
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_METADATAROOM_H
#define KPACK_METADATAROOM_H

#include <cstdint>
#include <vector>

namespace kpack {
namespace link {

/// A minimal x86-64 ELF relocatable object with a zero-filled, retained,
/// allocated `.rocm_kpack_ref` section of Size bytes (rounded up to 8).
std::vector<uint8_t> makeMetadataRoomObject(uint64_t Size);

/// The same for a PE link: a minimal x86-64 COFF object with a zero-filled
/// `.kpackrf` section of Size bytes (rounded up to 8; read-only initialized
/// data, align 8) defining the symbol CoffMetadataRoomSymbol, which its
/// `.drectve` section names with `/include:` so that the section survives
/// `/opt:ref` (lld-link's default) as SHF_GNU_RETAIN makes it survive
/// `--gc-sections`.
std::vector<uint8_t> makeCoffMetadataRoomObject(uint64_t Size);
inline constexpr char CoffMetadataRoomSymbol[] = "__kpack_metadata_room";

} // namespace link
} // namespace kpack

#endif

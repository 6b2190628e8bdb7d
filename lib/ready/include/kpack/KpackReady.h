//===- kpack/KpackReady.h - The kpack-ready object convention --*- C++ -*-===//
//
// FORMAT.md section 4, made concrete: the section names, record layouts and
// constants that every producer of kpack-ready objects (clang plugin,
// kpack-offload-wrapper, the object rewriter used by ld.kpack) writes and the
// link-time finalize step reads. docs/kpack-ready.md is the prose version.
//
// A kpack-ready relocatable object holds, per offload bundle it would have
// carried in `.hip_fatbin`:
//   * one payload record in `.rocm_kpack_payload` (SHT_PROGBITS, SHF_EXCLUDE,
//     align 8): the bundle bytes, named by their content key. The final link
//     drops the section; ld.kpack reads it from its inputs.
//   * one key record (a fixed 256-byte slot) in `.rocm_kpack_ref`
//     (SHT_PROGBITS, SHF_ALLOC, read-only, align 8): what the wrapper's
//     `binary` relocation and every symbol that named the bundle now point at.
//     The finalize step overwrites the linked section with the HIPK metadata.
// The wrapper in `.hipFatBinSegment` stays HIPF; finalize owns its contents.
//
// All integers are little-endian.
//
//===----------------------------------------------------------------------===//

#ifndef KPACK_KPACKREADY_H
#define KPACK_KPACKREADY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kpack {
namespace ready {

/// Section names.
inline constexpr llvm::StringLiteral FatbinSectionName = ".hip_fatbin";
inline constexpr llvm::StringLiteral WrapperSectionName = ".hipFatBinSegment";
inline constexpr llvm::StringLiteral PayloadSectionName = ".rocm_kpack_payload";
inline constexpr llvm::StringLiteral KeySectionName = ".rocm_kpack_ref";

/// COFF objects (Windows targets, FORMAT.md §3.4): the key records go in a
/// section already named like the image's metadata section, so that the
/// linked image's `.kpackrf` *is* the concatenated key records (lld keeps
/// 8-character names as they are; a long name would be cut to `.rocm_kp`).
/// Read-only initialized data, align 8. The payload section keeps its long
/// name; on COFF it is IMAGE_SCN_LNK_REMOVE (what LLVM emits for a global
/// with `!exclude` metadata), the counterpart of SHF_EXCLUDE: every link
/// drops it. The wrappers' section is `.hipFatBinSegment` in objects and
/// `.hipFatB` in images.
inline constexpr llvm::StringLiteral CoffKeySectionName = ".kpackrf";

/// Every record's size is a multiple of 8, so a relocatable link that
/// concatenates these sections keeps the records back to back. The key
/// section is 8-byte aligned; the payload section is 8-byte aligned when the
/// IR emitter writes it and 1-byte aligned when llvm/ObjCopy adds it (it is
/// never loaded, readers must not assume alignment).
inline constexpr uint64_t RecordAlign = 8;

/// Payload record (in `.rocm_kpack_payload`):
///   0x00 u32 magic "KPLD"    0x04 u32 version = 1
///   0x08 u64 content key     0x10 u64 bundle size in bytes
///   0x18 u64 reserved = 0    0x20 bundle bytes, zero-padded to 8
inline constexpr uint32_t PayloadMagic = 0x444C504B; // "KPLD"
inline constexpr uint32_t PayloadVersion = 1;
inline constexpr uint64_t PayloadHeaderSize = 32;

/// Key record (in `.rocm_kpack_ref`), one fixed-size slot:
///   0x00 u32 magic "KREF"    0x04 u32 version = 1
///   0x08 u64 content key     0x10 u64 bundle size in bytes
///   0x18 i32 guard reference (below)
///   0x1c zero up to KeySlotSize (reserved)
/// 256 bytes lets finalize write a typical HIPK metadata map
/// ({"kernel_name", "kpack_search_paths"}) over the first slot of the linked
/// section without help; see docs/kpack-ready.md for larger metadata.
inline constexpr uint32_t KeyMagic = 0x4645524B; // "KREF"
inline constexpr uint32_t KeyVersion = 1;
inline constexpr uint64_t KeySlotSize = 256;

/// The guard (docs/kpack-ready.md, "Linking without ld.kpack"): the word at
/// GuardFieldOffset of a key record is a 32-bit PC-relative reference
/// (R_X86_64_PC32; COFF IMAGE_REL_AMD64_REL32) to GuardSymbolName, undefined
/// and STV_HIDDEN in the object. Only ld.kpack defines the symbol (hidden,
/// never exported; finalize overwrites the field with the metadata), so any
/// other linker fails at link time with an error that names it, shared
/// libraries included ("hidden symbol ... isn't defined"). A PC-relative
/// reference to a hidden symbol is resolved by the static link and never
/// leaves a dynamic or base relocation in the image. Readers of key records
/// ignore the field (its bytes are the relocation's addend or its result).
inline constexpr llvm::StringLiteral GuardSymbolName =
    "__kpack_ready_object_needs_ld_kpack__use_fuse_ld_kpack";
inline constexpr uint64_t GuardFieldOffset = 0x18;

/// Content key of a bundle: 64-bit FNV-1a over the exact bundle bytes (as
/// they were in `.hip_fatbin`, compressed or not). Identical device code gets
/// the same key, so ld.kpack can deduplicate it.
uint64_t computeContentKey(llvm::ArrayRef<uint8_t> Bundle);
/// The FNV-1a offset basis computeContentKey starts from.
inline constexpr uint64_t ContentKeyBasis = 0xcbf29ce484222325ULL;
/// The key continued over \p Bytes: computeContentKey(A ++ B) ==
/// updateContentKey(updateContentKey(ContentKeyBasis, A), B), so that a
/// bundle can be keyed a bounded chunk at a time.
uint64_t updateContentKey(uint64_t Key, llvm::ArrayRef<uint8_t> Bytes);

/// Payload record bytes for \p Bundle (header, bundle, padding).
std::vector<uint8_t> encodePayloadRecord(llvm::ArrayRef<uint8_t> Bundle);

/// Key record slot (KeySlotSize bytes) for a bundle with \p Key and \p Size.
std::vector<uint8_t> encodeKeyRecord(uint64_t Key, uint64_t Size);

/// One payload record as found in a `.rocm_kpack_payload` section.
struct PayloadRecord {
  uint64_t Key = 0;
  uint64_t Offset = 0;               ///< of the record within the section
  llvm::ArrayRef<uint8_t> Bundle;    ///< points into the section contents
};

/// Whether a reader recomputes each payload record's content key.
enum class KeyCheck {
  /// Recompute it (a pass over every byte) and fail on a mismatch: what a
  /// tool that inspects or vouches for an object does.
  Verify,
  /// Take the record's word for it. A linker may: the key only names the
  /// bytes, and a linker that stores records by key compares the bytes of
  /// any two records that share one (docs/kpack-ready.md), so a wrong key can
  /// cost deduplication, never the right code.
  Trust,
};

/// Splits the contents of a `.rocm_kpack_payload` section into its records.
/// Zero words between records (alignment fill) are skipped. Fails on a bad
/// magic/version, truncation, or (with KeyCheck::Verify) a key that does not
/// match the bytes.
llvm::Expected<std::vector<PayloadRecord>>
parsePayloadSection(llvm::ArrayRef<uint8_t> Contents,
                    KeyCheck Check = KeyCheck::Verify);

/// One key record.
struct KeyRecord {
  uint64_t Key = 0;
  uint64_t BundleSize = 0;
};

/// Decodes the key record at the start of \p Slot (which must hold at least
/// KeySlotSize bytes).
llvm::Expected<KeyRecord> parseKeyRecord(llvm::ArrayRef<uint8_t> Slot);

/// One key record and where it sits in its `.rocm_kpack_ref` section.
struct KeySlot {
  uint64_t Offset = 0;
  KeyRecord Record;
};

/// Decodes a whole `.rocm_kpack_ref` section (of an object, or of a linked
/// output before finalize): a sequence of KeySlotSize slots.
llvm::Expected<std::vector<KeySlot>>
parseKeySection(llvm::ArrayRef<uint8_t> Contents);

} // namespace ready
} // namespace kpack

#endif // KPACK_KPACKREADY_H

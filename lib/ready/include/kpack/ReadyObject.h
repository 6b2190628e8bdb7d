//===- kpack/ReadyObject.h - Kpack-ready relocatable objects ---*- C++ -*-===//
//
// The object-level side of the convention: recognise fat and kpack-ready
// relocatable ELF objects and rewrite a fat one (an object that still carries
// `.hip_fatbin`) into the kpack-ready form, in process, with llvm/ObjCopy.
// ld.kpack uses this for inputs that were not compiled with the plugin.
//
//===----------------------------------------------------------------------===//

#ifndef KPACK_READYOBJECT_H
#define KPACK_READYOBJECT_H

#include "kpack/KpackReady.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

namespace llvm {
class raw_ostream;
namespace object {
class ObjectFile;
}
} // namespace llvm

namespace kpack {
namespace ready {

/// True if \p Obj has a non-empty `.hip_fatbin` section.
bool hasFatbinSection(const llvm::object::ObjectFile &Obj);

/// An error if \p Obj (ELF or COFF) already has a symbol named
/// GuardSymbolName (KpackReady.h), which the fat-object rewriters add.
llvm::Error checkGuardSymbolFree(const llvm::object::ObjectFile &Obj);

/// Rewrites the relocatable x86-64 ELF object \p In into \p Out:
///   * `.hip_fatbin` is split into its bundles (one per 4096-aligned offset
///     a relocation or symbol refers to, or the whole section);
///   * each bundle becomes a payload record in a new `.rocm_kpack_payload`
///     section (SHF_EXCLUDE);
///   * `.hip_fatbin` is renamed `.rocm_kpack_ref`, made SHF_ALLOC read-only
///     and filled with one key record per bundle; relocation addends and
///     symbol values/sizes that referred to bundle i are moved to slot i;
///   * every key record gets its guard reference (KpackReady.h): an
///     R_X86_64_PC32 at GuardFieldOffset, in a new `.rela.rocm_kpack_ref`,
///     against GuardSymbolName, added as an undefined STV_HIDDEN global.
/// An object without `.hip_fatbin` is an error (callers check first). The
/// output is deterministic; \p In is not modified. Error messages do not name
/// the input; callers add that context (e.g. with createFileError).
llvm::Error rewriteFatObject(llvm::MemoryBufferRef In,
                             llvm::SmallVectorImpl<char> &Out);

/// Where a streamed rewrite put one bundle.
struct WrittenPayload {
  uint64_t Key = 0;
  /// Of the bundle bytes in the output, or in the input with
  /// PayloadPlacement::LeftInInput.
  uint64_t BundleOffset = 0;
  uint64_t BundleSize = 0;
};

/// Where a streamed rewrite puts the bundles.
enum class PayloadPlacement {
  /// In the output's `.rocm_kpack_payload`, named by their content keys: a
  /// kpack-ready object any linker (and a later ld.kpack) can use.
  InOutput,
  /// Nowhere: the output's `.rocm_kpack_payload` is empty and the written
  /// payloads give the bundles' offsets in the input. Only for an object that
  /// goes straight into a final link whose driver takes the device code from
  /// the input itself (ld.kpack): the output alone has key records without
  /// their device code. The keys are link-local (StreamOptions::KeySeed), so
  /// the device code is neither copied nor read; only the bundle headers are.
  LeftInInput,
};

struct StreamOptions {
  /// \p In is a read-only file mapping (e.g. MemoryBuffer::getFile's): the
  /// pages of its bundles are handed back to the kernel once read, so
  /// resident memory does not grow with `.hip_fatbin`.
  bool ReleaseInput = false;
  PayloadPlacement Placement = PayloadPlacement::InOutput;
  /// With LeftInInput, bundle I of the object is named by a key derived from
  /// (KeySeed, I) alone, distinct for every distinct pair: give each input of
  /// a link its own seed (e.g. its position). The key stays inside the link
  /// (finalize overwrites the key records; archive entries are named by
  /// code-object index), so it need not be the content key: equal bundles in
  /// two inputs then get two indices, and the archive writer still stores
  /// their equal code objects once.
  uint64_t KeySeed = 0;
};

/// rewriteFatObject streamed to \p OS: only the host part of the object is
/// laid out in memory; with PayloadPlacement::InOutput the output is byte for
/// byte the in-memory rewrite's, the bundles keyed and copied from \p In a
/// bounded chunk at a time and never held as a whole. \p Written, if given,
/// receives where each payload record's bundle lies in the output (or, with
/// LeftInInput, in \p In). The caller checks \p OS for write errors.
llvm::Error rewriteFatObject(llvm::MemoryBufferRef In, llvm::raw_ostream &OS,
                             const StreamOptions &Options,
                             std::vector<WrittenPayload> *Written = nullptr);

/// Hands the whole pages inside [Data, Data + Size) of a read-only file
/// mapping back to the kernel (they are read again from the page cache if
/// touched). Only for file mappings: anonymous memory would read back as
/// zeros.
void releaseMappedPages(const void *Data, size_t Size);

/// Collects every payload record of a (kpack-ready) object file.
llvm::Expected<std::vector<PayloadRecord>>
readPayloadRecords(const llvm::object::ObjectFile &Obj,
                   KeyCheck Check = KeyCheck::Verify);

/// The payload records of an LLVM bitcode file (host `-flto` output, full or
/// thin, possibly several modules): the initializers of its globals in
/// `.rocm_kpack_payload`, concatenated in module order. The result has the
/// layout of a payload section; parse it with parsePayloadSection. A linker
/// needs this because LTO code generation happens inside the link, where the
/// excluded section is never visible.
llvm::Expected<std::vector<uint8_t>>
readBitcodePayloadSection(llvm::MemoryBufferRef Bitcode);

/// What a kpack-ready relocatable object holds, as the linker sees it.
struct ReadyObjectInfo {
  std::vector<PayloadRecord> Payloads; ///< views into the object's bytes
  std::vector<KeySlot> Keys;
  struct WrapperRef {
    uint64_t WrapperOffset; ///< of the wrapper within `.hipFatBinSegment`
    uint64_t KeyOffset;     ///< `binary` target within `.rocm_kpack_ref`
  };
  std::vector<WrapperRef> Wrappers;
};

/// Reads the records of a relocatable object and resolves each wrapper's
/// `binary` relocation to its key slot. Fails on malformed records or a
/// wrapper whose `binary` does not point at a slot start.
llvm::Expected<ReadyObjectInfo>
inspectReadyObject(const llvm::object::ObjectFile &Obj);

} // namespace ready
} // namespace kpack

#endif // KPACK_READYOBJECT_H

//===- kpack/HostBinary.h - HIP device code in host ELF files ---*- C++ -*-===//
//
// Read-only analysis of an x86-64 ELF host binary (linked executable, shared
// library or relocatable object): where .hip_fatbin is, which offload bundles
// it holds, which fat binary wrappers .hipFatBinSegment holds, and where each
// wrapper's `binary` pointer lives and what it points at (FORMAT.md §2, §3).
// Windows PE/COFF images (EXE, DLL) and COFF objects are analyzed into the
// same result (FORMAT.md §3.4, kpack/COFF/CoffHostBinary.h):
// .hip_fat/.hipFatB/.kpackrf in images, the long names in objects; addresses
// are VAs at the preferred base.
//
// The analysis keeps no views into the image: bundles are summarized (entries
// and offsets, no payload copies) so that a 1.3 GB library costs little
// memory; decodeBundleAt() decodes one bundle on demand.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_HOSTBINARY_H
#define KPACK_HOSTBINARY_H

#include "kpack/BundleCodec.h"
#include "kpack/Metadata.h"
#include "kpack/Wrapper.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kpack {

/// How a wrapper's `binary` pointer is stored in the file.
enum class PointerStyle {
  RelaRelative, ///< addend of an R_X86_64_RELATIVE in .rela.dyn (PIE/DSO)
  /// R_X86_64_64 in .rela.dyn against a symbol this binary defines (its
  /// .dynsym value) plus an addend: DSOs linked with -fgpu-rdc by the old
  /// driver, whose RDC link object exports `__hip_fatbin_<cuid>` per TU.
  RelaSymbol,
  RelrInPlace,      ///< value in place, relocated through .relr.dyn
  AbsoluteInPlace,  ///< value in place, no dynamic relocation (non-PIE)
  ObjectRelocation, ///< relocatable object: a static relocation (read only)
  /// PE image: the VA in place, fixed up by an IMAGE_REL_BASED_DIR64 base
  /// relocation (an image without base relocations: AbsoluteInPlace).
  CoffDir64,
};
const char *pointerStyleName(PointerStyle Style);

/// One `__CudaFatBinaryWrapper` in .hipFatBinSegment.
struct WrapperInfo {
  uint64_t Address = 0;    ///< vaddr (section offset in a relocatable object)
  uint64_t FileOffset = 0; ///< file offset of the 24 wrapper bytes
  uint32_t Magic = 0;
  uint32_t Version = 0;
  uint64_t Reserved1 = 0;

  PointerStyle Style = PointerStyle::AbsoluteInPlace;
  /// The resolved `binary` pointer (vaddr; .hip_fatbin-relative offset plus
  /// the section address for relocatable objects). 0 if unresolved.
  uint64_t Target = 0;
  /// RelaRelative, RelaSymbol: file offset of the Elf64_Rela entry whose
  /// addend holds the pointer (RelaSymbol: plus SymbolValue). Other styles:
  /// unused (the pointer is at FileOffset + 8).
  uint64_t RelaFileOffset = 0;
  /// RelaSymbol: the st_value of the relocation's symbol.
  uint64_t SymbolValue = 0;

  /// HIPF: index into HostBinary::Bundles of the bundle Target points at
  /// (matched by address), or -1.
  int BundleIndex = -1;
  /// HIPK: the metadata at Target, if it could be read and parsed.
  std::optional<KpackMetadata> Ref;
  std::string RefError; ///< why Ref is empty for a HIPK wrapper

  bool isHIPF() const { return Magic == HipfMagic; }
  bool isHIPK() const { return Magic == HipkMagic; }
  /// The code-object index N of a HIPK wrapper (u32 in the low half).
  uint32_t kpackIndex() const { return static_cast<uint32_t>(Reserved1); }
};

/// One offload bundle found in .hip_fatbin (SectionOffset is from its start);
/// payload bytes are not kept. Entries (host entry included) are filled for
/// compressed bundles too; for uncompressed bundles a payload is at
/// FileOffset + Entry.Offset in the image.
struct BundleInfo : BundleExtent {
  uint64_t Address = 0; ///< vaddr (section offset in objects)
  uint64_t FileOffset = 0;
};

/// A section's placement.
struct SectionSpan {
  uint64_t Index = 0;
  uint64_t Address = 0;
  uint64_t FileOffset = 0;
  uint64_t Size = 0;
};

enum class HostFileKind { Executable, SharedObject, Relocatable };
enum class HostFormat { Elf, Coff };

struct HostBinary {
  HostFormat Format = HostFormat::Elf;
  HostFileKind Kind = HostFileKind::SharedObject;
  bool IsPIE = false;                ///< ET_DYN with PT_INTERP or DF_1_PIE
  /// COFF: the image's preferred base (every Address is ImageBase + RVA; 0
  /// in objects). A SectionSpan's Index is then the 1-based section number.
  uint64_t ImageBase = 0;
  std::optional<SectionSpan> Fatbin; ///< .hip_fatbin
  std::optional<SectionSpan> WrapperSection;  ///< .hipFatBinSegment
  std::optional<SectionSpan> KpackRefSection; ///< .rocm_kpack_ref
  std::vector<BundleInfo> Bundles;            ///< in section order
  std::vector<WrapperInfo> Wrappers;          ///< in section order

  bool hasDeviceCode() const { return !Bundles.empty(); }
  bool hasHIPK() const;
  /// The name of the device-code section in this format (for messages).
  const char *fatbinSectionName() const;
  /// Index into Bundles of the bundle starting at Address, or -1.
  int bundleAt(uint64_t Address) const;
};

struct AnalyzeOptions {
  /// Called after each bundle has been read, with its file range: a caller
  /// that mapped a large file can release those pages (madvise) so that
  /// resident memory stays bounded.
  std::function<void(uint64_t FileOffset, uint64_t Size)> BundleScanned;
  /// Decode compressed (CCOB) bundles for their entries. Off: such a
  /// bundle's Entries stay empty and nothing is decompressed (`kpack
  /// doctor` reads only headers, wrappers and TOCs unless --verify).
  bool DecodeCompressedBundles = true;
};

/// Analyzes an ELF64LE x86-64 image, or a PE32+ x86-64 image or COFF object
/// (recognized by their magic). Errors: not ELF (nor PE/COFF), wrong
/// class/machine, malformed headers, undecodable bundles, wrappers outside
/// the file. A file without device code is not an error (empty
/// Bundles/Wrappers).
llvm::Expected<HostBinary> analyzeHostBinary(llvm::MemoryBufferRef Image,
                                             const AnalyzeOptions &Opts = {});

/// Summarizes the bundles of a device-code section (Bytes, at Sec; named
/// SectionName in messages) for the ELF and the PE/COFF analyses: a
/// compressed bundle is decoded for its entries one at a time, so that
/// memory stays bounded by the largest bundle.
llvm::Error summarizeBundleSection(llvm::ArrayRef<uint8_t> Bytes,
                                   const SectionSpan &Sec,
                                   llvm::StringRef SectionName,
                                   std::vector<BundleInfo> &Out,
                                   const AnalyzeOptions &Opts);

/// What a file is to the tools that pick host binaries out of many files
/// (`kpack split`, `split-wheel`, `verify-artifacts`, `unbundle`): an x86-64
/// ELF executable or shared object, a PE32+ x86-64 image (EXE or DLL), or
/// neither (relocatable objects, AMDGPU code objects, import libraries and
/// other archives, other machines, text).
enum class HostImageFormat { None, Elf, Pe };

/// Enough leading bytes for hostImageFormat(): the PE headers of every image
/// a linker writes lie within them.
constexpr size_t HostImageHeadSize = 4096;

/// The format of the file whose first bytes are Head (HostImageHeadSize of
/// them, or the whole file if it is shorter), from its headers alone: the
/// ELF header (class, byte order, type, machine), or the DOS header and the
/// PE headers e_lfanew points at (signature, machine, an executable image,
/// PE32+). PE headers beyond Head count as neither.
HostImageFormat hostImageFormat(llvm::StringRef Head);

/// Does the file hold HIP device code to split or to adopt: is it a host
/// image (hostImageFormat) with a wrapper or bundle section that has bytes
/// in the file (ELF: .hip_fatbin or .hipFatBinSegment, not NOBITS; PE:
/// .hip_fat or .hipFatB with raw data)? Only the headers and the section
/// table are read. False for every other file, for host-only binaries and
/// for separate debug files (whose sections are NOBITS); an error for a host
/// image whose headers or section table are malformed.
llvm::Expected<bool> hostImageHoldsDeviceCode(llvm::StringRef Bytes);

/// Decodes bundle B of Host from Image (copies and, for CCOB, decompresses).
llvm::Error decodeBundleAt(llvm::MemoryBufferRef Image, const BundleInfo &B,
                           Bundle &Out);

} // namespace kpack

#endif

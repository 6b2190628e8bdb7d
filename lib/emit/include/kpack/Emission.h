//===- kpack/Emission.h - Code objects to archives + metadata ---*- C++ -*-===//
//
// The one emission library: "host binary -> code objects keyed NAME#N ->
// .kpack archives + HIPK metadata + wrapper patch". ld.kpack's finalize,
// `kpack convert`, `kpack pack`, `kpack split` and `kpack merge` all call it,
// so that every writer checks, keys, compresses, deduplicates and lays out
// archives the same way.
//
// Phases (each its own piece below):
//   1. open:   FatHostBinary (a linked fat binary) or EmittedHostBinary (a
//              compiler-emitted HIPK binary and the archives it names);
//   2. collect: their code objects as CodeObjectRefs (index N, target ID,
//              bytes on demand), added to an ArchiveSet under caller keys;
//   3. write:  ArchiveSet::write() streams, checks, compresses in parallel
//              and commits every archive atomically;
//   4. patch:  the host image rewritten with the metadata (fat binaries) or
//              its metadata replaced in place (emitted binaries).
//
// Ordinals follow the order of the add calls: callers add in a deterministic
// order and the bytes of every output are independent of thread counts.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_EMISSION_H
#define KPACK_EMISSION_H

#include "kpack/ArchiveWriter.h"
#include "kpack/AtomicFile.h"
#include "kpack/HostBinary.h"
#include "kpack/Metadata.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kpack {

/// The compression of every writer (`--compression`, `--level`,
/// `--kpack-compression`, `--kpack-compression-level`), validated in one
/// place.
struct CompressionSettings {
  ArchiveCompression Scheme = ArchiveCompression::ZstdPerKernel;
  int Level = DefaultZstdLevel;
  /// The compressed-frame cache of incremental runs (kpack/FrameCache.h;
  /// ld.kpack --kpack-cache-dir, --cache-dir of `kpack convert`/`split`);
  /// none by default.
  std::shared_ptr<FrameCache> Cache = nullptr;

  /// Scheme names as the command lines spell them (optionName(); also the
  /// TOC names "zstd-per-kernel" and "zstd-shared-segments"); Level unset
  /// means the scheme's default (defaultZstdLevel()). Errors name the bad
  /// value and the accepted ones.
  static llvm::Expected<CompressionSettings>
  parse(llvm::StringRef Scheme, std::optional<int> Level);
  /// How the command lines spell Scheme: "none", "zstd", "zstd-long",
  /// "zstd-shared".
  static llvm::StringRef optionName(ArchiveCompression Scheme);
  /// Every writer's `--compression` values with their help, for a
  /// cl::opt<ArchiveCompression>.
  static llvm::cl::ValuesClass optionValues();
  /// The same as one line, for a string option passed to parse().
  static const char *optionHelp();
  /// The help of every writer's --level option, the defaults printed from
  /// defaultZstdLevel().
  static const char *levelHelp();
};

/// The length of a link identity: 16 bytes as lowercase hex.
constexpr size_t LinkIdChars = 32;

/// Where an ArchiveSet's archives go and what their TOCs say.
struct ArchiveLayout {
  /// Exactly one of the three:
  /// - one archive holding every target;
  std::string ArchivePath;
  /// - one archive per target ID, Dir/<Name>_<target id>.kpack;
  std::string Dir, Name;
  /// - one archive per target ID at a path the caller computes (split:
  ///   <arch artifact>/<first prefix>/.kpack/<component>_<target id>.kpack).
  std::function<std::string(llvm::StringRef TargetId)> PathForTarget;

  std::string GroupName; ///< TOC group_name
  /// TOC gfx_arch_family; empty: the target ID for per-target archives,
  /// defaultArchFamily() for a single archive.
  std::string Family;
  CompressionSettings Compression;
  unsigned Threads = 0; ///< 0: all cores
  /// Identical code objects (same bytes) share one stored blob through TOC
  /// ordinal aliasing, which upstream readers follow.
  bool DeduplicateIdentical = DefaultDeduplicate;
  /// With ArchivePath: write the archive even when it has no entry (build
  /// rules always find their output).
  bool WriteEmpty = false;
  /// Entries that are not ELF files are stored as opaque blobs (kernel
  /// databases' index files, `kpack pack KEY:ARCH=FILE`); otherwise every
  /// entry must be an AMDGPU code object for its target ID. Code objects of
  /// offload bundles (CodeObjectRef::EntryId set) must always be.
  bool AllowOpaqueEntries = false;
  /// The writer of host binaries (ld.kpack, convert, split, split-wheel):
  /// every entry keyed "<kernel_name>#N" gets the link identity of that
  /// kernel name's binary in its metadata ("link_id"), and prepare() reports
  /// it for the binary's own metadata (docs/format-extensions.md).
  bool LinkIdentity = false;
};

/// One code object of a host binary, its bytes produced on demand.
struct CodeObjectRef {
  uint32_t Index = 0;   ///< N: bundle index = the wrapper's reserved1
  std::string TargetId; ///< e.g. "gfx90a:xnack+"
  std::string EntryId;  ///< bundle entry ID ("hipv4-amdgcn-amd-amdhsa--gfx90a")
  uint64_t Size = 0;
  EntrySource Source;
  /// Names the code object in errors ("lib/libx.so: bundle 3, entry '...'").
  std::string Origin;
};

/// One archive an ArchiveSet wrote.
struct WrittenArchive {
  std::string Path;
  std::string TargetId; ///< empty for a single multi-target archive
  ArchiveWriteStats Stats;
  uint64_t Deduplicated = 0; ///< entries stored as aliases of another
};

/// Archives under construction. Not thread-safe: callers that analyse
/// inputs in parallel add their code objects afterwards, in a fixed order.
class ArchiveSet {
public:
  explicit ArchiveSet(ArchiveLayout Layout);
  ~ArchiveSet();
  ArchiveSet(ArchiveSet &&);
  ArchiveSet &operator=(ArchiveSet &&);

  /// Adds C as toc[Key][C.TargetId]. The bytes pass checkArchiveEntry (the
  /// check of `kpack verify`) when they are read; a failure names C.Origin.
  /// An empty bundle entry (EntryId set, Size 0) holds no code for its
  /// target and is skipped (a loader then finds no entry, as the HIP runtime
  /// found no code object in the fat binary). A target ID that does not
  /// parse and a (Key, target) added before are errors.
  llvm::Error add(llvm::StringRef Key, const CodeObjectRef &C,
                  EntryMetadata Meta = {});
  /// Adds every code object of Objects as toc["<KeyName>#<Index>"][target].
  llvm::Error addAll(llvm::StringRef KeyName,
                     llvm::ArrayRef<CodeObjectRef> Objects,
                     const EntryMetadata &Meta = {});

  /// The target IDs added so far, sorted.
  std::vector<std::string> targets() const;
  bool empty() const;

  /// Reads every source (bounded memory), writes every archive atomically,
  /// creating directories. Sources are read once, in add order across all
  /// archives (so a compressed bundle whose entries go to several per-target
  /// archives is held only while they are read), and the archives are
  /// committed together once all are complete: a failure leaves no archive
  /// and no directory made for one, and changes no existing archive.
  llvm::Expected<std::vector<WrittenArchive>> write();

  /// write() without the commit: the archives finished in temporary files,
  /// the directories made for them, for a caller that commits them together
  /// with its own outputs (commitTogether, then Dirs->keep()). Destroying
  /// it uncommitted removes all of it.
  struct Prepared {
    std::vector<WrittenArchive> Archives;
    /// Destroyed after Files (the temporary files in them go first).
    std::unique_ptr<OutputDirectories> Dirs;
    std::vector<std::unique_ptr<AtomicFile>> Files; ///< as Archives
    /// With ArchiveLayout::LinkIdentity: kernel name -> its link_id.
    std::map<std::string, std::string> LinkIds;
    /// Commits the archives alone (what write() does after prepare()).
    llvm::Error commit();
  };
  llvm::Expected<Prepared> prepare();

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

/// A linked host binary with HIP device code (FORMAT.md §2-3), mapped and
/// analysed; pages of scanned bundles are released so resident memory does
/// not grow with .hip_fatbin.
class FatHostBinary {
public:
  static llvm::Expected<FatHostBinary> open(llvm::StringRef Path);
  ~FatHostBinary();
  FatHostBinary(FatHostBinary &&);
  FatHostBinary &operator=(FatHostBinary &&);

  const std::string &path() const;
  const HostBinary &analysis() const;
  /// HIPF wrappers over .hip_fatbin: something to convert.
  bool isConvertible() const;

  /// The device code objects, bundle by bundle in section order. Payloads of
  /// uncompressed bundles are read from the file; a compressed bundle is
  /// decoded once per writer pass, when the first of its entries is read,
  /// and released after the last read the writer announced
  /// (EntrySource::willRead): entries left out of every archive do not keep
  /// it.
  llvm::Expected<std::vector<CodeObjectRef>> codeObjects() const;

  /// Compressed bundles of codeObjects(): decoded so far, decoded and held
  /// now, held at most at once.
  struct DecodeCounters {
    uint64_t Decodes = 0, Held = 0, PeakHeld = 0;
  };
  DecodeCounters decodeCounters() const;

  /// The host-only image carrying Metadata (docs/convert.md), verified.
  llvm::Expected<std::vector<uint8_t>>
  rewrite(llvm::ArrayRef<uint8_t> Metadata) const;

private:
  FatHostBinary();
  struct Impl;
  std::unique_ptr<Impl> P;
};

/// A compiler-emitted binary: HIPK wrappers, metadata in the room ld.kpack
/// reserved (or in what `kpack convert` left of .hip_fatbin), and the
/// archives its search paths name.
class EmittedHostBinary {
public:
  static llvm::Expected<EmittedHostBinary> open(llvm::StringRef Path);
  ~EmittedHostBinary();
  EmittedHostBinary(EmittedHostBinary &&);
  EmittedHostBinary &operator=(EmittedHostBinary &&);

  const KpackMetadata &metadata() const;
  /// Bytes available for metadata in place.
  uint64_t metadataRoom() const;

  /// The archives its search paths reach from its own directory (an
  /// @GFXARCH@ pattern matched against the files present), sorted.
  const std::vector<std::string> &archives() const;
  /// The code objects keyed "<kernel_name>#N" in those archives.
  llvm::Expected<std::vector<CodeObjectRef>> codeObjects() const;

  /// The image with its metadata replaced in place; nothing else changes.
  /// Fails with the sizes and the ld.kpack option to use when Metadata does
  /// not fit.
  llvm::Expected<std::vector<uint8_t>>
  withMetadata(llvm::ArrayRef<uint8_t> Metadata) const;

private:
  EmittedHostBinary();
  struct Impl;
  std::unique_ptr<Impl> P;
};

/// The per-target archives Dir/<Name>_<target ID>.kpack, other than Keep,
/// that the previous write of the host binary now at BinaryPath wrote: every
/// entry keyed "<Name>#N" with that binary's link_id. What a new write of the
/// binary leaves stale; none when BinaryPath is no kpack host binary of that
/// name with a link_id. Sorted.
std::vector<std::string> staleArchives(llvm::StringRef BinaryPath,
                                       llvm::StringRef Dir,
                                       llvm::StringRef Name,
                                       llvm::ArrayRef<std::string> Keep);
/// Removes them (after the new outputs are committed).
llvm::Error removeStaleArchives(llvm::ArrayRef<std::string> Stale);

/// The encoded metadata {kernel_name: KernelName, kpack_search_paths: ...,
/// link_id: LinkId (when not empty)}.
llvm::Expected<std::vector<uint8_t>>
encodeMetadata(llvm::StringRef KernelName,
               llvm::ArrayRef<std::string> SearchPaths,
               llvm::StringRef LinkId = {});

} // namespace kpack

#endif

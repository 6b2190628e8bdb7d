//===- Pack.cpp - kpack pack: build an archive ----------------------------===//
//
// kpack pack -o OUT.kpack [options] INPUT...
//
// An INPUT is either
//   KEY:ARCH=FILE   one code object: FILE stored as toc[KEY][ARCH]. The key
//                   ends at the first ':' and the arch at the first '=', so
//                   arches may hold features (k#0:gfx90a:xnack+=a.co).
//   FILE            a host binary (executable, shared library or object)
//                   with .hip_fatbin: every device code object of bundle N
//                   becomes toc["NAME#N"][target ID], N being the bundle's
//                   index in .hip_fatbin, i.e. the code-object index that
//                   `kpack convert` writes into the wrapper pointing at it.
// Entries are added in command-line order (ordinals follow it); the output
// is the same bytes for the same inputs. Every entry passes
// kpack::checkArchiveEntry, the check of `kpack verify`, before the archive
// is committed: a bundle's device entries must be AMDGPU code objects for a
// valid target ID; a KEY:ARCH=FILE entry needs a valid target ID and, if FILE
// is an ELF file, a code object built for it (other files are stored as
// opaque blobs, which verify reports as notes).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/ArchiveWriter.h"
#include "kpack/CodeObjectCheck.h"
#include "kpack/HostBinary.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/mman.h>
#include <unistd.h>

using namespace llvm;
using namespace kpack;

static cl::SubCommand PackCmd("pack", "Write code objects into a .kpack archive");
static cl::list<std::string> PackInputs(cl::Positional, cl::OneOrMore,
                                        cl::desc("<KEY:ARCH=FILE | host binary>..."),
                                        cl::sub(PackCmd));
static cl::opt<std::string> PackOutput("o", cl::Required,
                                       cl::desc("Output archive"),
                                       cl::value_desc("file"), cl::sub(PackCmd));
static cl::opt<std::string> PackGroup("group",
                                      cl::desc("TOC group_name (default: the "
                                               "output file name without .kpack)"),
                                      cl::sub(PackCmd));
static cl::opt<std::string> PackFamily(
    "family",
    cl::desc("TOC gfx_arch_family (default: the arch if there is only one, else \"multi\")"),
    cl::sub(PackCmd));
static cl::opt<std::string> PackName(
    "name", cl::desc("Kernel name for host-binary inputs: keys NAME#N "
                     "(default: the input's file name)"),
    cl::sub(PackCmd));
enum class PackScheme { None, Zstd };
static cl::opt<PackScheme> PackCompression(
    "compression", cl::desc("Compression scheme"), cl::init(PackScheme::Zstd),
    cl::values(clEnumValN(PackScheme::None, "none", "store code objects as is"),
               clEnumValN(PackScheme::Zstd, "zstd",
                          "one zstd frame per code object (zstd-per-kernel)")),
    cl::sub(PackCmd));
static cl::opt<int> PackLevel("level", cl::desc("zstd level (default 3)"),
                              cl::init(3), cl::sub(PackCmd));
static cl::opt<unsigned> PackThreads("j", cl::desc("Compression threads "
                                                   "(default: all cores)"),
                                     cl::init(0), cl::sub(PackCmd));

/// The entry check of a bundle's device code, with the entry named.
static Error checkBundleEntry(StringRef Path, size_t N, const BundleEntry &E,
                              ArrayRef<uint8_t> Payload) {
  if (Error Err =
          checkArchiveEntry(E.TargetId, Payload, OpaqueEntries::Reject)
              .takeError())
    return makeError("'" + Path + "': bundle " + Twine(N) + ", entry " +
                     quoteInput(E.Id) + ": " + toString(std::move(Err)));
  return Error::success();
}

/// Adds every device code object of a host binary's bundles.
static Error addHostBinary(ArchiveWriter &W, StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> BufOr =
      MemoryBuffer::getFile(Path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!BufOr)
    return makeError("cannot read '" + Path + "': " + BufOr.getError().message());
  std::shared_ptr<MemoryBuffer> Buf = std::move(*BufOr);
  // The analysis touches every bundle of a possibly huge mapped file; drop
  // the pages of each bundle once scanned so resident memory stays small
  // (the writer reads uncompressed payloads again with pread).
  AnalyzeOptions Analyze;
  Analyze.BundleScanned = [&Buf](uint64_t Offset, uint64_t Size) {
    uintptr_t Page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    uintptr_t Begin = reinterpret_cast<uintptr_t>(Buf->getBufferStart()) + Offset;
    uintptr_t End = Begin + Size;
    Begin = (Begin + Page - 1) / Page * Page;
    End = End / Page * Page;
    if (Buf->getBufferKind() == MemoryBuffer::MemoryBuffer_MMap && End > Begin)
      ::madvise(reinterpret_cast<void *>(Begin), End - Begin, MADV_DONTNEED);
  };
  Expected<HostBinary> HostOr = analyzeHostBinary(Buf->getMemBufferRef(), Analyze);
  if (!HostOr)
    return makeError("'" + Path + "' is neither KEY:ARCH=FILE nor a readable "
                     "host binary: " + toString(HostOr.takeError()));
  if (!HostOr->hasDeviceCode())
    return makeError("'" + Path + "' holds no device code (.hip_fatbin)");
  std::string Name = PackName.empty() ? sys::path::filename(Path).str()
                                      : PackName.getValue();
  auto Host = std::make_shared<HostBinary>(std::move(*HostOr));
  for (size_t N = 0; N < Host->Bundles.size(); ++N) {
    const BundleInfo &B = Host->Bundles[N];
    std::string Key = Name + "#" + std::to_string(N);
    for (size_t I = 0; I < B.Entries.size(); ++I) {
      const BundleEntry &E = B.Entries[I];
      if (!E.isDevice() || E.Size == 0)
        continue;
      if (B.Compression == BundleCompression::None) {
        ArrayRef<uint8_t> Payload = arrayRefFromStringRef(
            Buf->getBuffer().substr(B.FileOffset + E.Offset, E.Size));
        if (Error Err = checkBundleEntry(Path, N, E, Payload))
          return Err;
      }
      EntrySource Src =
          B.Compression == BundleCompression::None
              ? EntrySource::fromFileRange(Path.str(), B.FileOffset + E.Offset,
                                           E.Size)
              // Compressed bundles are decoded (and their entries checked)
              // when the writer asks for the entry, so only one bundle is
              // expanded at a time per thread; a failure leaves no output.
              : EntrySource::fromCallback(
                    [Buf, Host, N, I, Path = Path.str()](
                        std::vector<uint8_t> &Out) {
                      Bundle Decoded;
                      if (Error Err = decodeBundleAt(Buf->getMemBufferRef(),
                                                     Host->Bundles[N], Decoded))
                        return Status::error(toString(std::move(Err)));
                      if (I >= Decoded.Entries.size())
                        return Status::error("'" + Path + "': bundle " +
                                             std::to_string(N) +
                                             " changed while being read");
                      const BundleEntry &DE = Decoded.Entries[I];
                      ArrayRef<uint8_t> Payload(Decoded.payload(DE), DE.Size);
                      if (Error Err = checkBundleEntry(Path, N, DE, Payload))
                        return Status::error(toString(std::move(Err)));
                      Out.assign(Payload.begin(), Payload.end());
                      return Status::ok();
                    },
                    E.Size);
      if (Error Err = toError(W.addEntry(Key, E.TargetId, std::move(Src))))
        return Err;
    }
  }
  return Error::success();
}

static Error pack() {
  if (PackCompression == PackScheme::Zstd && (PackLevel < 1 || PackLevel > 22))
    return makeError("--level must be in 1..22");
  ArchiveWriterOptions Opts;
  Opts.Compression = PackCompression == PackScheme::Zstd
                         ? ArchiveCompression::ZstdPerKernel
                         : ArchiveCompression::None;
  Opts.ZstdLevel = PackLevel;
  Opts.Threads = PackThreads;
  Opts.GroupName = PackGroup;
  if (Opts.GroupName.empty())
    Opts.GroupName = sys::path::stem(PackOutput).str();

  ArchiveWriter W(Opts);
  for (const std::string &Input : PackInputs) {
    size_t Eq = Input.find('=');
    if (Eq == std::string::npos) {
      if (Error E = addHostBinary(W, Input))
        return E;
      continue;
    }
    std::string Spec = Input.substr(0, Eq), File = Input.substr(Eq + 1);
    size_t Colon = Spec.find(':');
    if (Colon == std::string::npos || Colon == 0 || Colon + 1 == Spec.size() ||
        File.empty())
      return makeError("malformed input '" + Input + "': expected KEY:ARCH=FILE");
    ErrorOr<std::unique_ptr<MemoryBuffer>> FileBuf = MemoryBuffer::getFile(
        File, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!FileBuf)
      return makeError("cannot read '" + File +
                       "': " + FileBuf.getError().message());
    std::string Arch = Spec.substr(Colon + 1);
    if (Error Err = checkArchiveEntry(
                        Arch, arrayRefFromStringRef((*FileBuf)->getBuffer()),
                        OpaqueEntries::Allow)
                        .takeError())
      return makeError("'" + File + "' as " + quoteInput(Arch) + ": " +
                       toString(std::move(Err)));
    uint64_t Size = (*FileBuf)->getBufferSize();
    if (Error E = toError(W.addEntry(Spec.substr(0, Colon), Arch,
                                     EntrySource::fromFileRange(File, 0, Size))))
      return E;
  }

  W.options().GfxArchFamily = PackFamily;
  ArchiveWriteStats Stats;
  if (Error E = toError(W.write(PackOutput, &Stats)))
    return E;
  outs() << PackOutput << ": " << Stats.Entries << " code objects, "
         << Stats.OriginalBytes << " bytes -> " << Stats.FileBytes << " bytes\n";
  return Error::success();
}

int runPack() {
  if (Error E = pack())
    return reportError("kpack pack", std::move(E));
  return 0;
}

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
// Entries are added in command-line order (ordinals follow it; identical
// code objects are stored once); the output is the same bytes for the same
// inputs. The work is the emission library's (kpack/Emission.h): host
// binaries through FatHostBinary, every entry through one ArchiveSet, whose
// check (kpack::checkArchiveEntry, the check of `kpack verify`) every entry
// passes before the archive is committed: a bundle's device entries must be
// AMDGPU code objects for a valid target ID; a KEY:ARCH=FILE entry needs a
// valid target ID and, if FILE is an ELF file, a code object built for it
// (other files are stored as opaque blobs, which verify reports as notes).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CompressionOptions.h"
#include "TimeTraceOption.h"

#include "kpack/Emission.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

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
static CompressionOptions PackCompression(PackCmd);
static TimeTraceOption PackTrace(PackCmd);

/// Adds every device code object of a host binary's bundles.
static Error addHostBinary(ArchiveSet &Archives, StringRef Path) {
  auto Fat = FatHostBinary::open(Path);
  if (!Fat)
    return makeError("'" + Path + "' is neither KEY:ARCH=FILE nor a readable "
                     "host binary: " + toString(Fat.takeError()));
  if (!Fat->analysis().hasDeviceCode())
    return makeError("'" + Path + "' holds no device code (.hip_fatbin)");
  auto Objects = Fat->codeObjects();
  if (!Objects)
    return Objects.takeError();
  std::string Name = PackName.empty() ? sys::path::filename(Path).str()
                                      : PackName.getValue();
  return Archives.addAll(Name, *Objects);
}

/// Adds FILE as toc[KEY][ARCH] (opaque unless it is an ELF file).
static Error addFile(ArchiveSet &Archives, StringRef Input) {
  size_t Eq = Input.find('=');
  StringRef Spec = Input.take_front(Eq), File = Input.drop_front(Eq + 1);
  size_t Colon = Spec.find(':');
  if (Colon == StringRef::npos || Colon == 0 || Colon + 1 == Spec.size() ||
      File.empty())
    return makeUsageError("malformed input '" + Input +
                          "': expected KEY:ARCH=FILE");
  uint64_t Size = 0;
  if (std::error_code EC = sys::fs::file_size(File, Size))
    return makeError("cannot read '" + File + "': " + EC.message());
  CodeObjectRef C;
  C.TargetId = Spec.drop_front(Colon + 1).str();
  C.Size = Size;
  C.Source = EntrySource::fromFileRange(File.str(), 0, Size);
  C.Origin = "'" + File.str() + "' as " + quoteInput(C.TargetId);
  return Archives.add(Spec.take_front(Colon), C);
}

static Error pack() {
  auto Compression = PackCompression.settings();
  if (!Compression)
    return Compression.takeError();
  ArchiveLayout Layout;
  Layout.ArchivePath = PackOutput;
  Layout.GroupName = PackGroup.empty() ? sys::path::stem(PackOutput).str()
                                       : PackGroup.getValue();
  Layout.Family = PackFamily;
  Layout.Compression = *Compression;
  Layout.Threads = PackCompression.threads();
  Layout.WriteEmpty = true;
  Layout.AllowOpaqueEntries = true; // KEY:ARCH=FILE; bundles stay checked
  ArchiveSet Archives(std::move(Layout));
  for (const std::string &Input : PackInputs)
    if (Error E = StringRef(Input).contains('=') ? addFile(Archives, Input)
                                                 : addHostBinary(Archives, Input))
      return E;

  auto Written = Archives.write();
  if (!Written)
    return Written.takeError();
  const ArchiveWriteStats &Stats = Written->front().Stats;
  outs() << PackOutput << ": " << Stats.Entries << " code objects, "
         << Stats.OriginalBytes << " bytes -> " << Stats.FileBytes << " bytes";
  if (Stats.Deduplicated)
    outs() << ", " << Stats.Deduplicated << " stored once with another";
  outs() << "\n";
  return Error::success();
}

int runPack() {
  return PackTrace.run("kpack pack", PackOutput, [] {
    if (Error E = pack())
      return reportError("kpack pack", std::move(E));
    return 0;
  });
}

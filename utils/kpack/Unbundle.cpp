//===- Unbundle.cpp - kpack unbundle: code objects out of fat binaries ----===//
//
// kpack unbundle FILE... [-o DIR] [--gfx-arch ARCH]
//
// Upstream's bulk_unbundle (rocm_kpack/tools/bulk_unbundle.py), which
// TheRock's rccl-translate step runs as `bulk_unbundle --gfx-arch gfx1250
// --output-dir DIR librccl.so`. An input is a host binary (the bundles of
// its .hip_fatbin section; of .hip_fat in a PE32+ x86-64 EXE or DLL) or a
// file holding offload bundles (uncompressed or CCOB). Every device entry is written to
// DIR/<bundle entry ID>.hsaco (".elf" for an ID not starting with "hip");
// when an ID occurs twice among the entries written, every name gets the
// entry's position: <ID>_<i>.hsaco. Only entry IDs
// "<kind>-amdgcn-amd-amdhsa--<target ID>" name files (UnbundleInput.h): any
// other ID of an entry to write is an error before anything is written, so
// no name leaves DIR. DIR defaults to the input's path with
// its last extension replaced by ".unbundled". --gfx-arch keeps the entries
// whose processor (the ID's target without features) is ARCH; none is an
// error. Exit status: 0, 1 on a failed input (the inputs after it are not
// read), 2 on a usage error.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "UnbundleInput.h"

#include "kpack/AtomicFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::SubCommand UnbundleCmd(
    "unbundle", "Write the device code objects of fat binaries or offload "
                "bundles to files (upstream's bulk_unbundle)");
static cl::list<std::string> UnbundleInputs(cl::Positional, cl::OneOrMore,
                                            cl::desc("<file>..."),
                                            cl::sub(UnbundleCmd));
static cl::opt<std::string>
    UnbundleOutput("output-dir",
                   cl::desc("Write the code objects of the one input here"),
                   cl::value_desc("dir"), cl::sub(UnbundleCmd));
static cl::alias UnbundleOutputShort("o", cl::aliasopt(UnbundleOutput),
                                     cl::desc("Alias for --output-dir"));
static cl::opt<std::string> UnbundleArch(
    "gfx-arch",
    cl::desc("Write only code objects for this processor (e.g. gfx1250); "
             "target features do not matter"),
    cl::value_desc("arch"), cl::sub(UnbundleCmd));

static Error unbundle(StringRef File, StringRef Dir) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> BufOr =
      MemoryBuffer::getFile(File, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!BufOr)
    return kpack::makeError("'" + File + "': " + BufOr.getError().message());
  Expected<std::vector<kpack::UnbundledObject>> Objects =
      kpack::unbundleImage((*BufOr)->getMemBufferRef(), UnbundleArch);
  if (!Objects)
    return Objects.takeError();
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return kpack::makeError("'" + Dir + "': " + EC.message());
  std::vector<std::string> Names;
  for (const kpack::UnbundledObject &O : *Objects) {
    std::string Path = (Dir + "/" + O.Name).str();
    if (Error E = toError(
            kpack::writeFileAtomically(Path, O.Bytes.data(), O.Bytes.size())))
      return E;
    Names.push_back(O.Name);
  }
  outs() << "Unbundled " << Dir << ": " << join(Names, ", ") << "\n";
  return Error::success();
}

int runUnbundle() {
  if (UnbundleOutput.getNumOccurrences() && UnbundleInputs.size() != 1)
    return kpack::reportUsageError(
        "kpack unbundle", "--output-dir requires exactly one input file");
  for (const std::string &File : UnbundleInputs) {
    SmallString<256> Dir(UnbundleOutput);
    if (Dir.empty()) {
      Dir = File;
      sys::path::replace_extension(Dir, ".unbundled");
    }
    if (Error E = unbundle(File, Dir))
      return reportError("kpack unbundle", std::move(E));
  }
  return 0;
}

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
// entry's position: <ID>_<i>.hsaco. DIR defaults to the input's path with
// its last extension replaced by ".unbundled". --gfx-arch keeps the entries
// whose processor (the ID's target without features) is ARCH; none is an
// error. Exit status: 0, 1 on a failed input (the inputs after it are not
// read), 2 on a usage error.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/AtomicFile.h"
#include "kpack/BundleCodec.h"
#include "kpack/HostBinary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
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

namespace {
struct CodeObject {
  std::string Id;
  std::vector<uint8_t> Bytes;
};
} // namespace

static Error fail(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
}

/// The device entries of every bundle of File, in order.
static Error readCodeObjects(StringRef File, std::vector<CodeObject> &Out) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> BufOr =
      MemoryBuffer::getFile(File, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!BufOr)
    return fail("'" + File + "': " + BufOr.getError().message());
  MemoryBufferRef Image = (*BufOr)->getMemBufferRef();
  StringRef Bytes = Image.getBuffer();
  std::vector<kpack::Bundle> Bundles;
  if (Bytes.starts_with("\x7f" "ELF") ||
      kpack::hostImageFormat(Bytes) != kpack::HostImageFormat::None) {
    Expected<kpack::HostBinary> H = kpack::analyzeHostBinary(Image);
    if (!H)
      return fail("'" + File + "': " + toString(H.takeError()));
    if (!H->Fatbin)
      return fail("'" + File + "': no " + H->fatbinSectionName() +
                  " section");
    for (const kpack::BundleInfo &B : H->Bundles) {
      Bundles.emplace_back();
      if (Error E = kpack::decodeBundleAt(Image, B, Bundles.back()))
        return fail("'" + File + "': " + toString(std::move(E)));
    }
  } else {
    const auto *Data = reinterpret_cast<const uint8_t *>(Bytes.data());
    if (!kpack::isBundle(Data, Bytes.size()))
      return fail("'" + File + "': not a fat binary or an offload bundle");
    if (kpack::Status S =
            kpack::decodeBundleSection(Data, Bytes.size(), Bundles, /*Align=*/1))
      return fail("'" + File + "': " + S.message());
  }
  for (const kpack::Bundle &B : Bundles)
    for (const kpack::BundleEntry *E : B.deviceEntries())
      Out.push_back({E->Id, std::vector<uint8_t>(B.payload(*E),
                                                 B.payload(*E) + E->Size)});
  return Error::success();
}

static Error unbundle(StringRef File, StringRef Dir) {
  std::vector<CodeObject> Objects;
  if (Error E = readCodeObjects(File, Objects))
    return E;
  if (!UnbundleArch.empty()) {
    llvm::erase_if(Objects, [](const CodeObject &O) {
      size_t Sep = StringRef(O.Id).rfind("--");
      return Sep == StringRef::npos ||
             StringRef(O.Id).substr(Sep + 2).split(':').first != UnbundleArch;
    });
    if (Objects.empty())
      return fail("no code objects for architecture '" + UnbundleArch +
                  "' in '" + File + "'");
  }
  StringSet<> Seen;
  bool Indexed = false;
  for (const CodeObject &O : Objects)
    Indexed |= !Seen.insert(O.Id).second;
  std::vector<std::string> Names;
  for (size_t I = 0; I < Objects.size(); ++I) {
    StringRef Ext = StringRef(Objects[I].Id).starts_with("hip") ? ".hsaco" : ".elf";
    Names.push_back(Objects[I].Id + (Indexed ? "_" + std::to_string(I) : "") +
                    Ext.str());
  }
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return fail("'" + Dir + "': " + EC.message());
  for (size_t I = 0; I < Objects.size(); ++I) {
    std::string Path = (Dir + "/" + Names[I]).str();
    if (Error E = toError(kpack::writeFileAtomically(
            Path, Objects[I].Bytes.data(), Objects[I].Bytes.size())))
      return E;
  }
  outs() << "Unbundled " << Dir << ": " << join(Names, ", ") << "\n";
  return Error::success();
}

int runUnbundle() {
  if (UnbundleOutput.getNumOccurrences() && UnbundleInputs.size() != 1) {
    WithColor::error(errs(), "kpack unbundle")
        << "--output-dir requires exactly one input file\n";
    return 2;
  }
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

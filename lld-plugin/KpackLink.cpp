//===- KpackLink.cpp - The ld.kpack link flow -----------------------------===//

#include "KpackLink.h"

#include "Finalize.h"
#include "LinkInputs.h"
#include "MetadataRoom.h"

#include "kpack/Convert.h"
#include "kpack/KpackReady.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

LLD_HAS_DRIVER(elf)
LLD_HAS_DRIVER(mingw)
LLD_HAS_DRIVER(coff)

using namespace llvm;

namespace kpack {
namespace link {

int runLld(const std::vector<std::string> &Args) {
  // "-flavor gnu" selects lld's ELF driver whatever our own name is, and
  // keeps "ld.kpack" as the name in lld's diagnostics.
  std::vector<const char *> Argv = {"ld.kpack", "-flavor", "gnu"};
  for (const std::string &A : Args)
    Argv.push_back(A.c_str());
  // lld itself turns a GNU-style link for a PE emulation (-m i386pep, what
  // clang passes for *-windows-gnu targets) into its MinGW driver, which
  // runs the COFF linker.
  lld::Result R = lld::lldMain(Argv, outs(), errs(),
                               {{lld::Gnu, &lld::elf::link},
                                {lld::MinGW, &lld::mingw::link},
                                {lld::WinLink, &lld::coff::link}});
  outs().flush();
  errs().flush();
  return R.retCode;
}

static bool isPeLink(const std::vector<std::string> &Args) {
  // lld's own rule: the -m emulation names a PE target (i386pe, i386pep,
  // thumb2pe, arm64pe, ...).
  auto IsPe = [](StringRef M) { return M.ends_with("pe") || M.ends_with("pep"); };
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (A == "-m" && I + 1 < Args.size())
      return IsPe(Args[I + 1]);
    if (A.starts_with("-m") && A.size() > 2 && !A.starts_with("-m=") &&
        IsPe(A.drop_front(2)))
      return true;
  }
  return false;
}

namespace {

/// A PE link (the MinGW driver): the fat image lld links is converted as
/// `kpack convert` converts one (lib/emit's convertHostBinary: .kpackrf,
/// HIPK wrappers, .hip_fat without file bytes, the archives), all outputs
/// committed together. Device code is still laid out in the link; the
/// kpack-ready path (no .hip_fat at all) is ELF-only (docs/ld-kpack.md).
Expected<int> runPeKpackLink(const KpackOptions &Kpack, const LinkerArgs &Linker,
                             TempDir &Temp) {
  if (Linker.Relocatable)
    return createStringError(
        "--kpack-output/--kpack-dir: a relocatable (-r) PE link is not "
        "supported");
  auto Plan = planEmission(Kpack, Linker.Output);
  if (!Plan)
    return Plan.takeError();
  std::string Linked = Temp.newFile(sys::path::filename(Linker.Output));
  int RC = runLld(Linker.withOutput(Linked).Args);
  if (RC != 0)
    return RC;
  // Objects the kpack plugin compiled keep their device code in
  // .rocm_kpack_payload, which the COFF link drops, and their key records in
  // .rocm_kpack_ref (".rocm_kp" in the image: 8-character names). Their
  // wrappers could not be given code objects: refuse.
  {
    auto Buf = MemoryBuffer::getFile(Linked, /*IsText=*/false,
                                     /*RequiresNullTerminator=*/false);
    if (!Buf)
      return createFileError(Linked, errorCodeToError(Buf.getError()));
    auto Obj = object::ObjectFile::createObjectFile((*Buf)->getMemBufferRef());
    if (!Obj)
      return Obj.takeError();
    for (const object::SectionRef &Sec : (*Obj)->sections()) {
      Expected<StringRef> Name = Sec.getName();
      if (!Name)
        return Name.takeError();
      if (Name->starts_with(ready::KeySectionName.take_front(8)))
        return createStringError(
            "%s: kpack-ready inputs (compiled with the kpack plugin) are not "
            "supported in Windows (PE) links; compile them without the "
            "plugin and link the fat objects",
            Linker.Output.c_str());
    }
  }
  ConvertOptions Opts;
  Opts.Input = Linked;
  Opts.Output = Linker.Output;
  Opts.KpackOutput = Plan->ArchivePath;
  Opts.KpackDir = Plan->ArchiveDir;
  Opts.KernelName = Plan->KernelName;
  Opts.SearchPaths = Plan->SearchPaths;
  Opts.GroupName = Kpack.Group;
  Opts.Family = Kpack.Family;
  Opts.Compression = Plan->Compression;
  auto Result = convertHostBinary(Opts);
  if (!Result)
    return Result.takeError();
  if (Result->Outcome != ConvertOutcome::Converted) {
    // Nothing to take out (no device code, or wrappers already HIPK): the
    // linked image is the output, with its mode.
    if (std::error_code EC = sys::fs::copy_file(Linked, Linker.Output))
      return createFileError(Linker.Output, errorCodeToError(EC));
    auto Perms = sys::fs::getPermissions(Linked);
    if (!Perms)
      return createFileError(Linked, errorCodeToError(Perms.getError()));
    if (std::error_code EC = sys::fs::setPermissions(Linker.Output, *Perms))
      return createFileError(Linker.Output, errorCodeToError(EC));
  }
  return 0;
}

/// The identity of the file at Path, if there is one.
std::optional<sys::fs::UniqueID> fileIdentity(StringRef Path) {
  sys::fs::UniqueID ID;
  if (sys::fs::getUniqueID(Path, ID))
    return std::nullopt;
  return ID;
}

/// A plain link must not silently produce a binary whose wrappers point at
/// unfinalized key records. Only a file this link wrote (lld replaces the
/// output, so its identity changes) is judged, by its section names and the
/// first record's magic, so a plain link of a large fat binary pays nothing
/// noticeable and an older, finalized output is never touched.
Error checkNotKpackReady(StringRef OutputPath,
                         std::optional<sys::fs::UniqueID> Before) {
  std::optional<sys::fs::UniqueID> After = fileIdentity(OutputPath);
  if (!After || After == Before)
    return Error::success(); // nothing written (e.g. --version)
  auto Buf = MemoryBuffer::getFile(OutputPath, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return Error::success();
  auto Obj = object::ObjectFile::createObjectFile((*Buf)->getMemBufferRef());
  if (!Obj) {
    consumeError(Obj.takeError()); // not an object file: not ours to judge
    return Error::success();
  }
  for (const object::SectionRef &Sec : (*Obj)->sections()) {
    Expected<StringRef> Name = Sec.getName();
    if (!Name) {
      consumeError(Name.takeError());
      continue;
    }
    if (*Name != ready::KeySectionName)
      continue;
    Expected<StringRef> Contents = Sec.getContents();
    if (!Contents) {
      consumeError(Contents.takeError());
      continue;
    }
    if (Contents->size() < ready::KeySlotSize)
      continue;
    // A finalized binary holds metadata here, not key records.
    auto Record = ready::parseKeyRecord(arrayRefFromStringRef(*Contents));
    if (!Record) {
      consumeError(Record.takeError());
      continue;
    }
    Buf->reset();
    sys::fs::remove(OutputPath);
    return createStringError(
        "%s: inputs are kpack-ready (compiled with the kpack plugin); pass "
        "--kpack-output=FILE or --kpack-dir=DIR to emit their device code",
        OutputPath.str().c_str());
  }
  return Error::success();
}

/// Appends the input that makes room for metadata longer than the one key
/// slot a single live wrapper guarantees (MetadataRoom.h), or for the room
/// --kpack-metadata-room asks for.
Error addMetadataRoom(const KpackOptions &Opts, const EmitPlan &Plan,
                      TempDir &Temp, std::vector<std::string> &LldArgs) {
  auto Meta = encodePlanMetadata(Plan);
  if (!Meta)
    return Meta.takeError();
  uint64_t Needed =
      std::max<uint64_t>(Meta->size(), Opts.MetadataRoom.value_or(0));
  if (Needed <= ready::KeySlotSize)
    return Error::success();
  std::string Room = Temp.newFile("kpack-metadata-room.o");
  std::vector<uint8_t> Obj = makeMetadataRoomObject(Needed - ready::KeySlotSize);
  std::error_code EC;
  raw_fd_ostream OS(Room, EC);
  if (EC)
    return createFileError(Room, errorCodeToError(EC));
  OS.write(reinterpret_cast<const char *>(Obj.data()), Obj.size());
  OS.close();
  if (OS.has_error())
    return createFileError(Room, errorCodeToError(OS.error()));
  LldArgs.push_back(Room);
  return Error::success();
}

} // namespace

Expected<int> runKpackLink(const ParsedCommandLine &CommandLine) {
  const KpackOptions &Kpack = CommandLine.Kpack;
  const LinkerArgs &Linker = CommandLine.Linker;

  // Without kpack options this is exactly an lld link.
  if (!Kpack.emitsArchives()) {
    std::optional<sys::fs::UniqueID> Before = fileIdentity(Linker.Output);
    int RC = runLld(Linker.Args);
    if (RC == 0 && !Linker.Relocatable)
      if (Error E = checkNotKpackReady(Linker.Output, Before))
        return E;
    return RC;
  }

  auto Temp = TempDir::create("ld.kpack");
  if (!Temp)
    return Temp.takeError();
  if (isPeLink(Linker.Args))
    return runPeKpackLink(Kpack, Linker, *Temp);

  // A relocatable link keeps the payload sections (SHF_EXCLUDE survives
  // -r), so its output is itself kpack-ready.
  if (Linker.Relocatable) {
    // No archive is written, but the options are checked all the same.
    if (auto Compression = compressionOf(Kpack); !Compression)
      return Compression.takeError();
    auto Prepared = prepareInputs(Linker, *Temp);
    if (!Prepared)
      return Prepared.takeError();
    return runLld(Prepared->LldArgs);
  }

  auto Plan = planEmission(Kpack, Linker.Output);
  if (!Plan)
    return Plan.takeError();
  // lld writes to a temporary file; finalize writes the real output.
  std::string Linked = Temp->newFile(sys::path::filename(Linker.Output));
  auto Prepared = prepareInputs(Linker.withOutput(Linked), *Temp);
  if (!Prepared)
    return Prepared.takeError();
  std::vector<std::string> LldArgs = std::move(Prepared->LldArgs);
  if (Prepared->HasDeviceCode)
    if (Error E = addMetadataRoom(Kpack, *Plan, *Temp, LldArgs))
      return E;
  int RC = runLld(LldArgs);
  if (RC != 0)
    return RC;
  if (Error E = finalizeOutput(Linked, Linker.Output, Kpack, *Plan,
                               Prepared->Payloads))
    return E;
  return 0;
}

} // namespace link
} // namespace kpack

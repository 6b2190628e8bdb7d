//===- Driver.cpp - The ld.kpack link flow --------------------------------===//

#include "Driver.h"

#include "Finalize.h"
#include "GuardLibrary.h"
#include "InputRewriter.h"

#include "kpack/AtomicFile.h"
#include "kpack/COFF/CoffHostBinary.h"
#include "kpack/Convert.h"
#include "kpack/KpackReady.h"
#include "kpack/MetadataRoom.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

LLD_HAS_DRIVER(elf)
LLD_HAS_DRIVER(mingw)
LLD_HAS_DRIVER(coff)

using namespace llvm;

namespace kpack {
namespace link {

int runLld(const std::vector<std::string> &Args, bool LldLink) {
  // "-flavor gnu" selects lld's ELF driver whatever our own name is, and
  // keeps "ld.kpack" as the name in lld's diagnostics; "-flavor link" its
  // COFF driver (lld-link).
  std::vector<const char *> Argv = {"ld.kpack", "-flavor",
                                    LldLink ? "link" : "gnu"};
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


namespace {

Error addMetadataRoom(const KpackOptions &Opts, const EmitPlan &Plan,
                      TempDir &Temp, std::vector<std::string> &LldArgs,
                      bool Pe);

/// Converts the fat image lld linked as `kpack convert` converts one (lib/emit's
/// convertHostBinary: .kpackrf, HIPK wrappers, .hip_fat without file bytes,
/// the archives), all outputs committed together.
Expected<int> convertLinkedPeImage(const KpackOptions &Kpack,
                                   const LinkerArgs &Linker,
                                   const EmitPlan &Plan, StringRef Linked) {
  ConvertOptions Opts;
  Opts.Input = Linked.str();
  Opts.Output = Linker.Output;
  Opts.KpackOutput = Plan.ArchivePath;
  Opts.KpackDir = Plan.ArchiveDir;
  Opts.KernelName = Plan.KernelName;
  Opts.SearchPaths = Plan.SearchPaths;
  Opts.GroupName = Kpack.Group;
  Opts.Family = Kpack.Family;
  Opts.Compression = Plan.Compression;
  Opts.Threads = Kpack.Jobs.value_or(0);
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

/// Which sections the image lld linked has: .hip_fat (device code laid out)
/// and .kpackrf (key records of kpack-ready inputs).
struct PeSections {
  bool Fatbin = false;
  bool KeyRecords = false;
};
Expected<PeSections> peSectionsOf(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return createFileError(Path, errorCodeToError(Buf.getError()));
  auto Obj = object::ObjectFile::createObjectFile((*Buf)->getMemBufferRef());
  if (!Obj)
    return createFileError(Path, Obj.takeError());
  PeSections S;
  for (const object::SectionRef &Sec : (*Obj)->sections()) {
    Expected<StringRef> Name = Sec.getName();
    if (!Name)
      return createFileError(Path, Name.takeError());
    S.Fatbin |= *Name == CoffFatbinSection;
    S.KeyRecords |= *Name == ready::CoffKeySectionName;
  }
  return S;
}

/// lld-link names the files it writes beside the image after the output:
/// the import library of a DLL (or of an EXE with exports) and, with /debug,
/// the PDB. The link goes to a temporary file, so they are named after the
/// real output unless the command line names them.
void addLldLinkSideOutputs(const LinkerArgs &Linker,
                           std::vector<std::string> &Args) {
  auto Has = [&](StringRef Opt) {
    return any_of(Linker.Args, [&](StringRef A) {
      return (A.starts_with("/") || A.starts_with("-")) &&
             A.drop_front().starts_with_insensitive(Opt);
    });
  };
  auto Replaced = [&](StringRef Ext) {
    SmallString<256> P(Linker.Output);
    sys::path::replace_extension(P, Ext);
    return std::string(P);
  };
  if (!Has("implib:"))
    Args.push_back("-implib:" + Replaced(".lib"));
  if (Has("debug") && !Has("pdb:"))
    Args.push_back("-pdb:" + Replaced(".pdb"));
}

/// A PE link (lld's MinGW driver, or lld-link): as an ELF link, every input
/// is made kpack-ready first (fat COFF objects and archive members
/// rewritten, InputRewriter.h), so lld never lays out device code: the image
/// has `.kpackrf` (the key records) and no `.hip_fat`, and finalize turns the
/// wrappers into HIPK and the key records into the metadata (Finalize.h). An
/// image that still has `.hip_fat` (device code from an input ld.kpack did
/// not see) and no key records is converted after the link instead.
Expected<int> runPeKpackLink(const KpackOptions &Kpack, const LinkerArgs &Linker,
                             TempDir &Temp) {
  if (Linker.Relocatable)
    return createStringError(
        "--kpack-output/--kpack-dir: a relocatable (-r) PE link is not "
        "supported");
  auto Plan = planEmission(Kpack, Linker.Output);
  if (!Plan)
    return Plan.takeError();
  // A PE image records its own file name (a DLL's export directory, the
  // import library's DLL name): lld links to a file of the output's very
  // name, in a directory of its own.
  SmallString<256> Linked(Temp.path());
  sys::path::append(Linked, "pe-link");
  if (std::error_code EC = sys::fs::create_directory(Linked))
    return createFileError(Linked, errorCodeToError(EC));
  sys::path::append(Linked, sys::path::filename(Linker.Output));
  LinkerArgs ToTemp = Linker.withOutput(Linked);
  if (Linker.LldLink)
    addLldLinkSideOutputs(Linker, ToTemp.Args);
  auto Prepared = prepareInputs(ToTemp, Temp);
  if (!Prepared)
    return Prepared.takeError();
  std::vector<std::string> LldArgs = std::move(Prepared->LldArgs);
  if (Prepared->HasDeviceCode)
    if (Error E = addMetadataRoom(Kpack, *Plan, Temp, LldArgs, /*Pe=*/true))
      return E;
  if (Error E = addGuardLibrary(/*Pe=*/true, Temp, LldArgs))
    return E;
  int RC = runLld(LldArgs, Linker.LldLink);
  if (RC != 0)
    return RC;
  auto Sections = peSectionsOf(Linked.str());
  if (!Sections)
    return Sections.takeError();
  if (Sections->Fatbin && Sections->KeyRecords)
    return createStringError(
        "%s: the image has both %s (device code of an input ld.kpack could "
        "not rewrite) and the key records of kpack-ready inputs",
        Linker.Output.c_str(), CoffFatbinSection);
  if (Sections->Fatbin)
    return convertLinkedPeImage(Kpack, Linker, *Plan, Linked.str());
  // The output's directory is made if missing (and removed again if the
  // link fails), as the conversion above (`kpack convert`) does.
  OutputDirectories Dirs;
  StringRef Parent = sys::path::parent_path(Linker.Output);
  if (!Parent.empty())
    if (Status S = Dirs.create(Parent.str()))
      return createStringError(S.message());
  if (Error E = finalizeOutput(Linked, Linker.Output, Kpack, *Plan,
                               Prepared->Payloads))
    return E;
  Dirs.keep();
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
    // .kpackrf: a PE image's key records (or, finalized, its metadata).
    if (*Name != ready::KeySectionName && *Name != ready::CoffKeySectionName)
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
                      TempDir &Temp, std::vector<std::string> &LldArgs,
                      bool Pe) {
  auto Meta = encodePlanMetadata(Plan, std::string(LinkIdChars, '0'));
  if (!Meta)
    return Meta.takeError();
  uint64_t Needed =
      std::max<uint64_t>(Meta->size(), Opts.MetadataRoom.value_or(0));
  if (Needed <= ready::KeySlotSize)
    return Error::success();
  std::string Room = Temp.newFile("kpack-metadata-room.o");
  std::vector<uint8_t> Obj =
      Pe ? makeCoffMetadataRoomObject(Needed - ready::KeySlotSize)
         : makeMetadataRoomObject(Needed - ready::KeySlotSize);
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
    // The guard is defined (GuardLibrary.h) so that kpack-ready inputs get
    // the message below rather than an undefined symbol. Not for -r (its
    // output must keep the reference) nor without -o (`-v` alone must not
    // become a link).
    std::optional<TempDir> Temp;
    std::vector<std::string> Args = Linker.Args;
    if (!Linker.Relocatable && Linker.OutputIndex) {
      auto Made = TempDir::create("ld.kpack");
      if (!Made)
        return Made.takeError();
      Temp.emplace(std::move(*Made));
      if (Error E = addGuardLibrary(Linker.LldLink || Linker.isMinGW(), *Temp,
                                    Args))
        return E;
    }
    int RC = runLld(Args, Linker.LldLink);
    if (RC == 0 && !Linker.Relocatable)
      if (Error E = checkNotKpackReady(Linker.Output, Before))
        return E;
    return RC;
  }

  auto Temp = TempDir::create("ld.kpack");
  if (!Temp)
    return Temp.takeError();
  if (Linker.LldLink || Linker.isMinGW())
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
    if (Error E = addMetadataRoom(Kpack, *Plan, *Temp, LldArgs, /*Pe=*/false))
      return E;
  if (Error E = addGuardLibrary(/*Pe=*/false, *Temp, LldArgs))
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

//===- InputRewriter.cpp - Make every link input kpack-ready --------------===//

#include "InputRewriter.h"

#include "kpack/ReadyEmitter.h"
#include "kpack/COFF/ReadyCoffObject.h"
#include "kpack/ReadyObject.h"
#include "kpack/Quote.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/BinaryFormat/Magic.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/Archive.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace llvm;
using namespace llvm::object;

namespace kpack {
namespace link {

//===----------------------------------------------------------------------===//
// PayloadStore
//===----------------------------------------------------------------------===//

Error readFileBytes(StringRef Path, uint64_t Offset, uint64_t Size,
                    std::vector<uint8_t> &Out) {
  Expected<sys::fs::file_t> F = sys::fs::openNativeFileForRead(Path);
  if (!F)
    return createFileError(Path, F.takeError());
  Out.resize(Size);
  uint64_t Done = 0;
  Error Result = Error::success();
  while (Done < Size) {
    Expected<size_t> N = sys::fs::readNativeFileSlice(
        *F,
        MutableArrayRef<char>(reinterpret_cast<char *>(Out.data()) + Done,
                              Size - Done),
        Offset + Done);
    if (!N) {
      Result = createFileError(Path, N.takeError());
      break;
    }
    if (*N == 0) {
      Result = createFileError(
          Path, createStringError("the file ends before byte %llu",
                                  (unsigned long long)(Offset + Size)));
      break;
    }
    Done += *N;
  }
  sys::fs::closeFile(*F);
  return Result;
}

/// Whether two stored bundles hold the same bytes, compared a bounded piece
/// at a time.
static Expected<bool> sameBytes(const PayloadBytes &A, const PayloadBytes &B) {
  if (A.Size != B.Size)
    return false;
  if (!A.inFile() && !B.inFile())
    return A.Bytes == B.Bytes;
  constexpr uint64_t Piece = uint64_t(8) << 20;
  std::vector<uint8_t> BufA, BufB;
  auto Slice = [](const PayloadBytes &P, uint64_t Off, uint64_t N,
                  std::vector<uint8_t> &Buf) -> Expected<ArrayRef<uint8_t>> {
    if (!P.inFile())
      return P.Bytes.slice(Off, N);
    if (Error E = readFileBytes(P.File, P.Offset + Off, N, Buf))
      return Expected<ArrayRef<uint8_t>>(std::move(E));
    return ArrayRef<uint8_t>(Buf);
  };
  for (uint64_t Off = 0; Off < A.Size; Off += Piece) {
    uint64_t N = std::min(Piece, A.Size - Off);
    Expected<ArrayRef<uint8_t>> X = Slice(A, Off, N, BufA);
    if (!X)
      return X.takeError();
    Expected<ArrayRef<uint8_t>> Y = Slice(B, Off, N, BufB);
    if (!Y)
      return Y.takeError();
    if (*X != *Y)
      return false;
  }
  return true;
}

Error PayloadStore::add(uint64_t Key, PayloadBytes Bundle, StringRef Origin) {
  auto [It, Inserted] = Bundles.try_emplace(Key, Bundle);
  if (Inserted) {
    Origins[Key] = Origin.str();
    return Error::success();
  }
  Expected<bool> Same = sameBytes(It->second, Bundle);
  if (!Same)
    return Same.takeError();
  if (!*Same)
    return createStringError("%s: content key 0x%016llx names two different "
                             "offload bundles",
                             Origin.str().c_str(), (unsigned long long)Key);
  return Error::success();
}

const PayloadBytes *PayloadStore::find(uint64_t Key) const {
  auto It = Bundles.find(Key);
  return It == Bundles.end() ? nullptr : &It->second;
}

StringRef PayloadStore::origin(uint64_t Key) const {
  auto It = Origins.find(Key);
  return It == Origins.end() ? StringRef() : StringRef(It->second);
}

//===----------------------------------------------------------------------===//
// TempDir
//===----------------------------------------------------------------------===//

Expected<TempDir> TempDir::create(StringRef Prefix) {
  SmallString<256> Parent;
  sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Parent);
  TempDir T;
  T.Dirs = std::make_unique<OutputDirectories>();
  if (Status S = T.Dirs->createTree(std::string(Parent), Prefix.str() + "-",
                                    T.Path))
    return createStringError(inconvertibleErrorCode(),
                             "cannot create a temporary directory: %s",
                             S.message().c_str());
  return T;
}

// The tree goes with Dirs (OutputDirectories::undo).
TempDir::~TempDir() = default;

std::string TempDir::newFile(StringRef Name) {
  SmallString<256> P(Path);
  sys::path::append(P, "out" + std::to_string(Counter++) + "-" +
                           sys::path::filename(Name).str());
  return std::string(P);
}

std::string TempDir::pathFor(size_t Index, StringRef Name) const {
  SmallString<256> P(Path);
  sys::path::append(P, "in" + std::to_string(Index) + "-" +
                           sys::path::filename(Name).str());
  return std::string(P);
}

//===----------------------------------------------------------------------===//
// Rewriting one input
//===----------------------------------------------------------------------===//

namespace {

using Bytes = std::unique_ptr<MemoryBuffer>;

/// What preparing one input file yields. Files are prepared in parallel and
/// merged in command-line order.
struct PreparedFile {
  struct Record {
    uint64_t Key;
    PayloadBytes Bundle;
    std::string Origin;
  };
  std::optional<std::string> Substitute; ///< path lld reads instead
  std::vector<Record> Records;
  std::vector<Bytes> Keep; ///< buffers the records point into
  /// Thin archives own the buffers of their (external) members.
  std::vector<std::unique_ptr<Archive>> KeepArchives;
  bool HasDeviceCode = false;

  void addRecords(const std::vector<ready::PayloadRecord> &Rs,
                  StringRef Origin) {
    for (const ready::PayloadRecord &R : Rs)
      Records.push_back(
          {R.Key, PayloadBytes::inMemory(R.Bundle), Origin.str()});
  }
};

/// Prepares one input file (object, archive or bitcode). One per thread: it
/// owns the LLVMContext bitcode is read into.
class FilePreparer {
public:
  /// Placement: where a streamed fat object's bundles go (LeftInInput for a
  /// final link: they are read from the input file when the archives are
  /// written, so the temporary copy holds only the host part, and they are
  /// named by link-local keys seeded with KeySeed, so they are not read
  /// before that at all).
  FilePreparer(std::string TempPath, PreparedFile &Out,
               ready::PayloadPlacement Placement =
                   ready::PayloadPlacement::InOutput,
               uint64_t KeySeed = 0)
      : TempPath(std::move(TempPath)), Out(Out), Placement(Placement),
        KeySeed(KeySeed) {}

  /// Fills Out; Out.Substitute is set if the file had to be rewritten (to
  /// TempPath).
  Error run(StringRef Path);
  /// The file's bytes: the rewritten bytes if it was fat, nullptr if it is
  /// used as is. Payload records are collected either way.
  Expected<Bytes> processFile(MemoryBufferRef Buf);

private:
  /// For an object or bitcode module: the rewritten bytes if it was fat,
  /// nullptr if it is used as is. Payload records are collected either way.
  Expected<Bytes> processMember(MemoryBufferRef Buf);
  Expected<Bytes> processObject(MemoryBufferRef Buf);
  Expected<Bytes> processBitcode(MemoryBufferRef Buf);
  Expected<Bytes> processArchive(MemoryBufferRef Buf);
  /// A fat relocatable object (the file InputPath) rewritten straight into
  /// TempPath (its bundles streamed, never held, or left in the input);
  /// false if Buf is not such an object.
  Expected<bool> streamFatObject(const MemoryBuffer &Buf, StringRef InputPath);
  Error collectPayloads(const ObjectFile &Obj, StringRef Origin);
  Error collectPayloads(Module &M, StringRef Origin);
  Error writeTemp(const MemoryBuffer &Buf);

  std::string TempPath;
  PreparedFile &Out;
  ready::PayloadPlacement Placement;
  uint64_t KeySeed; ///< the file's position (link-local keys)
  LLVMContext Ctx;
};

/// Cheap test before parsing: a relocatable ELF that has one of our sections
/// names it in its section-header string table. Large objects (device code)
/// are parsed instead of scanned, which would read every page.
bool mayCarryDeviceCode(MemoryBufferRef Buf) {
  StringRef B = Buf.getBuffer();
  if (B.size() > (size_t(1) << 20))
    return true;
  return B.contains(ready::FatbinSectionName) ||
         B.contains(ready::PayloadSectionName);
}

template <class ELFT> Error checkSymbolTables(const ELFFile<ELFT> &File) {
  auto Sections = File.sections();
  if (!Sections)
    return Sections.takeError();
  for (const typename ELFT::Shdr &Sec : *Sections)
    if (Sec.sh_type == ELF::SHT_SYMTAB || Sec.sh_type == ELF::SHT_DYNSYM)
      if (auto Syms = File.symbols(&Sec); !Syms)
        return Syms.takeError();
  return Error::success();
}

/// Writing an archive reads every ELF member's symbol table through an API
/// that ends the process on a malformed one (found by the fuzzer): check
/// them first, as errors of the input.
Error checkMemberSymbols(MemoryBufferRef Member) {
  if (!Member.getBuffer().starts_with(ELF::ElfMagic))
    return Error::success();
  auto Obj = ObjectFile::createObjectFile(Member);
  if (!Obj)
    return Obj.takeError();
  if (auto *E = dyn_cast<ELF64LEObjectFile>(Obj->get()))
    return checkSymbolTables(E->getELFFile());
  if (auto *E = dyn_cast<ELF64BEObjectFile>(Obj->get()))
    return checkSymbolTables(E->getELFFile());
  if (auto *E = dyn_cast<ELF32LEObjectFile>(Obj->get()))
    return checkSymbolTables(E->getELFFile());
  if (auto *E = dyn_cast<ELF32BEObjectFile>(Obj->get()))
    return checkSymbolTables(E->getELFFile());
  return Error::success();
}

} // namespace

Error FilePreparer::collectPayloads(const ObjectFile &Obj, StringRef Origin) {
  // PayloadStore::add compares the bytes of records that share a key, so
  // the keys need not be recomputed (a pass over all the device code).
  auto Records = ready::readPayloadRecords(Obj, ready::KeyCheck::Trust);
  if (!Records)
    return createFileError(Origin, Records.takeError());
  if (!Records->empty())
    Out.HasDeviceCode = true;
  Out.addRecords(*Records, Origin);
  return Error::success();
}

Error FilePreparer::collectPayloads(Module &M, StringRef Origin) {
  for (GlobalVariable &GV : M.globals()) {
    if (GV.getSection() != ready::PayloadSectionName || !GV.hasInitializer())
      continue;
    auto *Init = dyn_cast<ConstantDataSequential>(GV.getInitializer());
    if (!Init)
      return createFileError(
          Origin, createStringError("payload global '%s' is not plain bytes",
                                    GV.getName().str().c_str()));
    // The module goes away after this; the store keeps a copy.
    Bytes Copy = MemoryBuffer::getMemBufferCopy(Init->getRawDataValues());
    ArrayRef<uint8_t> Data(
        reinterpret_cast<const uint8_t *>(Copy->getBufferStart()),
        Copy->getBufferSize());
    auto Records = ready::parsePayloadSection(Data, ready::KeyCheck::Trust);
    if (!Records)
      return createFileError(Origin, Records.takeError());
    Out.Keep.push_back(std::move(Copy));
    Out.HasDeviceCode = true;
    Out.addRecords(*Records, Origin);
  }
  return Error::success();
}

Expected<Bytes> FilePreparer::processObject(MemoryBufferRef Buf) {
  if (!mayCarryDeviceCode(Buf))
    return nullptr;
  auto Obj = ObjectFile::createObjectFile(Buf);
  if (!Obj) {
    consumeError(Obj.takeError()); // not ours to diagnose; lld will
    return nullptr;
  }
  if (!ready::hasFatbinSection(**Obj)) {
    if (Error E = collectPayloads(**Obj, Buf.getBufferIdentifier()))
      return E;
    return nullptr;
  }
  SmallVector<char, 0> Out;
  // A fat COFF object (PE links) is rewritten by the COFF rewriter.
  if (Error E = (*Obj)->isCOFF() ? ready::rewriteFatCoffObject(Buf, Out)
                                 : ready::rewriteFatObject(Buf, Out))
    return createFileError(Buf.getBufferIdentifier(), std::move(E));
  Bytes Rewritten = std::make_unique<SmallVectorMemoryBuffer>(
      std::move(Out), Buf.getBufferIdentifier(),
      /*RequiresNullTerminator=*/false);
  auto NewObj = ObjectFile::createObjectFile(Rewritten->getMemBufferRef());
  if (!NewObj)
    return NewObj.takeError();
  if (Error E = collectPayloads(**NewObj, Buf.getBufferIdentifier()))
    return E;
  return Rewritten;
}

Expected<Bytes> FilePreparer::processBitcode(MemoryBufferRef Buf) {
  StringRef Origin = Buf.getBufferIdentifier();
  auto M = getLazyBitcodeModule(Buf, Ctx);
  if (!M) {
    consumeError(M.takeError()); // lld reports unreadable bitcode
    return nullptr;
  }
  bool Fat = any_of((*M)->globals(), [](const GlobalVariable &GV) {
    return GV.getSection() == ready::FatbinSectionName;
  });
  if (!Fat) {
    if (Error E = collectPayloads(**M, Origin))
      return E;
    return nullptr;
  }
  // A fat host module compiled without the plugin: make it kpack-ready here.
  auto LTOInfo = getBitcodeLTOInfo(Buf);
  if (!LTOInfo)
    return LTOInfo.takeError();
  if (LTOInfo->IsThinLTO)
    return createFileError(
        Origin, createStringError("ThinLTO bitcode with embedded device code "
                                  "is not supported; compile it with the "
                                  "kpack plugin (hipcc --emit-kpack)"));
  if (Error E = (*M)->materializeAll())
    return createFileError(Origin, std::move(E));
  auto Converted = ready::makeModuleKpackReady(**M);
  if (!Converted)
    return createFileError(Origin, Converted.takeError());
  if (Error E = collectPayloads(**M, Origin))
    return E;
  SmallVector<char, 0> Out;
  raw_svector_ostream OS(Out);
  WriteBitcodeToFile(**M, OS);
  return std::make_unique<SmallVectorMemoryBuffer>(
      std::move(Out), Origin, /*RequiresNullTerminator=*/false);
}

Expected<Bytes> FilePreparer::processMember(MemoryBufferRef Buf) {
  switch (identify_magic(Buf.getBuffer())) {
  case file_magic::elf_relocatable:
  case file_magic::coff_object: // PE links (docs/windows.md)
    return processObject(Buf);
  case file_magic::bitcode:
    return processBitcode(Buf);
  default:
    return nullptr;
  }
}

Expected<Bytes> FilePreparer::processArchive(MemoryBufferRef Buf) {
  auto ArOrErr = Archive::create(Buf);
  if (!ArOrErr) {
    consumeError(ArOrErr.takeError()); // lld reports malformed archives
    return nullptr;
  }
  Archive &Ar = **ArOrErr;

  // Rewritten member bytes by member index; empty if kept as is.
  std::vector<Bytes> Rewritten;
  bool AnyRewritten = false;
  Error Err = Error::success();
  for (const Archive::Child &C : Ar.children(Err)) {
    auto MemberBuf = C.getMemoryBufferRef();
    if (!MemberBuf)
      return createFileError(Buf.getBufferIdentifier(),
                             MemberBuf.takeError());
    auto Name = C.getName();
    if (!Name)
      return createFileError(Buf.getBufferIdentifier(), Name.takeError());
    // llvm::object::Archive does not bound every member by the archive's
    // bytes (a truncated archive gave a member running past its end; found
    // by the fuzzer). Members of a thin archive live in their own files.
    if (!Ar.isThin() &&
        (MemberBuf->getBufferStart() < Buf.getBufferStart() ||
         MemberBuf->getBufferEnd() > Buf.getBufferEnd()))
      return createFileError(
          Buf.getBufferIdentifier(),
          createStringError("member " + quoteInput(*Name) +
                            " runs past the end of the archive"));
    std::string Origin =
        (Buf.getBufferIdentifier() + "(" + *Name + ")").str();
    auto NewBytes = processMember(MemoryBufferRef(MemberBuf->getBuffer(), Origin));
    if (!NewBytes)
      return NewBytes.takeError();
    AnyRewritten |= *NewBytes != nullptr;
    Rewritten.push_back(std::move(*NewBytes));
  }
  if (Err)
    return createFileError(Buf.getBufferIdentifier(), std::move(Err));
  if (!AnyRewritten) {
    if (Ar.isThin())
      Out.KeepArchives.push_back(std::move(*ArOrErr));
    return nullptr;
  }

  // Same members, same order, same names; fat members replaced.
  std::vector<NewArchiveMember> Members;
  size_t Index = 0;
  Error Err2 = Error::success();
  for (const Archive::Child &C : Ar.children(Err2)) {
    auto M = NewArchiveMember::getOldMember(C, /*Deterministic=*/true);
    if (!M)
      return createFileError(Buf.getBufferIdentifier(), M.takeError());
    if (const Bytes &New = Rewritten[Index++]) {
      // MemberName points into the old buffer's identifier: give the new
      // buffer the same name and refer to its copy before the old one goes.
      Bytes NewBuf = MemoryBuffer::getMemBuffer(
          New->getBuffer(), M->MemberName, /*RequiresNullTerminator=*/false);
      M->MemberName = NewBuf->getBufferIdentifier();
      M->Buf = std::move(NewBuf);
    }
    if (Error E = checkMemberSymbols(M->Buf->getMemBufferRef()))
      return createFileError(Buf.getBufferIdentifier(), std::move(E));
    Members.push_back(std::move(*M));
  }
  if (Err2)
    return createFileError(Buf.getBufferIdentifier(), std::move(Err2));
  auto Kind = Ar.kind() == Archive::K_BSD || Ar.kind() == Archive::K_DARWIN
                  ? Ar.kind()
                  : Archive::K_GNU;
  // A member whose symbols cannot be read is an error of this input (the
  // default handler ends the process; found by the fuzzer).
  Error SymtabErr = Error::success();
  auto NewArchive = writeArchiveToBuffer(
      Members, SymtabWritingMode::NormalSymtab, Kind, /*Deterministic=*/true,
      /*Thin=*/false, [&](Error E) {
        SymtabErr = joinErrors(std::move(SymtabErr), std::move(E));
      });
  if (!NewArchive) {
    consumeError(std::move(SymtabErr));
    return createFileError(Buf.getBufferIdentifier(),
                           NewArchive.takeError());
  }
  if (SymtabErr)
    return createFileError(Buf.getBufferIdentifier(), std::move(SymtabErr));
  // The payload records point into the rewritten members: keep them.
  for (Bytes &B : Rewritten)
    if (B)
      Out.Keep.push_back(std::move(B));
  if (Ar.isThin())
    Out.KeepArchives.push_back(std::move(*ArOrErr));
  return std::move(*NewArchive);
}

Error FilePreparer::writeTemp(const MemoryBuffer &Buf) {
  std::error_code EC;
  raw_fd_ostream OS(TempPath, EC, sys::fs::OF_None);
  if (EC)
    return createFileError(TempPath, errorCodeToError(EC));
  OS << Buf.getBuffer();
  OS.close();
  if (OS.has_error())
    return createFileError(TempPath, errorCodeToError(OS.error()));
  return Error::success();
}

Expected<Bytes> FilePreparer::processFile(MemoryBufferRef Buf) {
  if (identify_magic(Buf.getBuffer()) == file_magic::archive)
    return processArchive(Buf);
  return processMember(Buf);
}

Expected<bool> FilePreparer::streamFatObject(const MemoryBuffer &Buf,
                                             StringRef InputPath) {
  if (identify_magic(Buf.getBuffer()) != file_magic::elf_relocatable ||
      !mayCarryDeviceCode(Buf.getMemBufferRef()))
    return false;
  auto Obj = ObjectFile::createObjectFile(Buf.getMemBufferRef());
  if (!Obj) {
    consumeError(Obj.takeError()); // not ours to diagnose; lld will
    return false;
  }
  if (!ready::hasFatbinSection(**Obj))
    return false;
  StringRef Origin = Buf.getBufferIdentifier();
  std::error_code EC;
  raw_fd_ostream OS(TempPath, EC, sys::fs::OF_None);
  if (EC)
    return createFileError(TempPath, errorCodeToError(EC));
  std::vector<ready::WrittenPayload> Written;
  ready::StreamOptions Options;
  Options.ReleaseInput =
      Buf.getBufferKind() == MemoryBuffer::MemoryBuffer_MMap;
  Options.Placement = Placement;
  Options.KeySeed = KeySeed;
  if (Error E = ready::rewriteFatObject(Buf.getMemBufferRef(), OS, Options,
                                        &Written))
    return createFileError(Origin, std::move(E));
  OS.close();
  if (OS.has_error())
    return createFileError(TempPath, errorCodeToError(OS.error()));
  const std::string BundleFile =
      Placement == ready::PayloadPlacement::InOutput ? TempPath
                                                     : InputPath.str();
  for (const ready::WrittenPayload &W : Written)
    Out.Records.push_back(
        {W.Key,
         PayloadBytes::inFileRange(BundleFile, W.BundleOffset, W.BundleSize),
         Origin.str()});
  Out.HasDeviceCode |= !Written.empty();
  Out.Substitute = TempPath;
  return true;
}

Error FilePreparer::run(StringRef Path) {
  auto BufOrErr = MemoryBuffer::getFile(Path, /*IsText=*/false,
                                        /*RequiresNullTerminator=*/false);
  if (!BufOrErr)
    return Error::success(); // missing inputs are lld's to report
  Bytes Buf = std::move(*BufOrErr);
  // A fat object (the common case, and the one whose device code can be
  // gigabytes) goes straight to its temporary file.
  Expected<bool> Streamed = streamFatObject(*Buf, Path);
  if (!Streamed)
    return Streamed.takeError();
  if (*Streamed)
    return Error::success();
  Expected<Bytes> New = processFile(Buf->getMemBufferRef());
  if (!New)
    return New.takeError();
  // Payload records of unmodified inputs (objects, members of a regular
  // archive) point into Buf: they are read from the file again when the
  // archives are written, and Buf is let go so that its pages need not stay.
  StringRef Whole = Buf->getBuffer();
  bool ViewsIntoBuf = false;
  for (PreparedFile::Record &R : Out.Records) {
    if (R.Bundle.inFile())
      continue;
    const char *Begin = reinterpret_cast<const char *>(R.Bundle.Bytes.data());
    if (Begin >= Whole.begin() && Begin + R.Bundle.Size <= Whole.end() &&
        R.Bundle.Size != 0)
      R.Bundle = PayloadBytes::inFileRange(Path.str(), Begin - Whole.begin(),
                                           R.Bundle.Size);
    else if (Begin >= Whole.begin() && Begin <= Whole.end())
      ViewsIntoBuf = true;
  }
  if (ViewsIntoBuf)
    Out.Keep.push_back(std::move(Buf));
  else
    Buf.reset();
  if (!*New)
    return Error::success();
  if (Error E = writeTemp(**New))
    return E;
  Out.Substitute = TempPath;
  // Objects' payloads point into the rewritten bytes.
  Out.Keep.push_back(std::move(*New));
  return Error::success();
}

Expected<std::unique_ptr<MemoryBuffer>> readLinkInput(MemoryBufferRef Buf,
                                                      PayloadStore &Store) {
  PreparedFile P;
  FilePreparer Preparer(/*TempPath=*/"", P);
  Expected<Bytes> New = Preparer.processFile(Buf);
  if (!New)
    return New.takeError();
  for (const PreparedFile::Record &R : P.Records)
    if (Error E = Store.add(R.Key, R.Bundle, R.Origin))
      return E;
  for (Bytes &B : P.Keep)
    Store.keepAlive(std::move(B));
  for (std::unique_ptr<Archive> &A : P.KeepArchives)
    Store.keepAlive(std::move(A));
  return std::move(*New);
}

//===----------------------------------------------------------------------===//
// Walking lld's command line
//===----------------------------------------------------------------------===//

namespace {

/// lld's -l lookup: every -L directory in command-line order, libNAME.so
/// before libNAME.a unless linking statically at that point; -l:FILE names
/// the file exactly.
class LibrarySearch {
public:
  void addDir(StringRef Dir, StringRef Sysroot) {
    if (Dir.consume_front("="))
      Dirs.push_back((Sysroot + Dir).str());
    else
      Dirs.push_back(Dir.str());
  }
  std::optional<std::string> find(StringRef Name, bool Static) const {
    for (const std::string &Dir : Dirs) {
      auto Try = [&](const Twine &File) -> std::optional<std::string> {
        SmallString<256> P(Dir);
        sys::path::append(P, File);
        if (sys::fs::exists(P))
          return std::string(P);
        return std::nullopt;
      };
      if (Name.starts_with(":")) {
        if (auto P = Try(Name.drop_front()))
          return P;
        continue;
      }
      if (MinGW) {
        // lld's MinGW driver: import libraries first unless static, then
        // static libraries, then DLLs (not archives: never rewritten).
        std::vector<std::string> Names;
        if (!Static)
          Names = {("lib" + Name + ".dll.a").str(), (Name + ".dll.a").str()};
        Names.push_back(("lib" + Name + ".a").str());
        Names.push_back((Name + ".lib").str());
        if (!Static) {
          Names.push_back(("lib" + Name + ".dll").str());
          Names.push_back((Name + ".dll").str());
        }
        for (const std::string &F : Names)
          if (auto P = Try(F))
            return P;
        continue;
      }
      if (!Static)
        if (auto P = Try("lib" + Name + ".so"))
          return P;
      if (auto P = Try("lib" + Name + ".a"))
        return P;
    }
    return std::nullopt;
  }
  /// A PE link (-m i386pep...): lld's MinGW library lookup.
  bool MinGW = false;

private:
  std::vector<std::string> Dirs;
};

/// The value of a "-Xvalue" / "--long=value" option, if Arg is that option.
std::optional<StringRef> joinedValue(StringRef Arg, StringRef Short,
                                     StringRef Long) {
  if (!Short.empty() && Arg.starts_with(Short) && Arg.size() > Short.size())
    return Arg.drop_front(Short.size());
  for (StringRef Dashes : {"--", "-"})
    if (Arg.starts_with((Dashes + Long + "=").str()))
      return Arg.drop_front(Dashes.size() + Long.size() + 1);
  return std::nullopt;
}

bool isOption(StringRef Arg, std::initializer_list<StringRef> Names) {
  StringRef Name = Arg.drop_front(Arg.starts_with("--") ? 2 : 1);
  return Arg.starts_with("-") && llvm::is_contained(Names, Name);
}

/// lld-link's view of its inputs (lld's COFF driver): options start with '/'
/// or '-' (a '/' argument that names an existing file is an input); a file
/// name without a directory is looked up in the current directory, then the
/// /libpath: directories in order, then those of the LIB variable;
/// /defaultlib:NAME is such a file (".lib" added without an extension).
class LldLinkInputs {
public:
  explicit LldLinkInputs(const std::vector<std::string> &Args) {
    Dirs.push_back("");
    for (StringRef A : Args)
      if (auto V = value(A, "libpath:"))
        Dirs.push_back(V->str());
    if (std::optional<std::string> Lib = sys::Process::GetEnv("LIB")) {
      SmallVector<StringRef, 8> Parts;
      StringRef(*Lib).split(Parts, ';', -1, /*KeepEmpty=*/false);
      for (StringRef P : Parts)
        Dirs.push_back(P.str());
    }
  }
  /// The file Arg makes lld-link read, if any.
  std::optional<std::string> fileOf(StringRef Arg) const {
    if (auto V = value(Arg, "defaultlib:")) {
      std::string Name = V->str();
      if (!StringRef(Name).contains('.'))
        Name += ".lib";
      return find(Name);
    }
    if (Arg.starts_with("-") ||
        (Arg.starts_with("/") && !sys::fs::exists(Arg)))
      return std::nullopt;
    return find(Arg);
  }

private:
  static std::optional<StringRef> value(StringRef Arg, StringRef Opt) {
    if ((Arg.starts_with("/") || Arg.starts_with("-")) &&
        Arg.drop_front().starts_with_insensitive(Opt))
      return Arg.drop_front(1 + Opt.size());
    return std::nullopt;
  }
  std::optional<std::string> find(StringRef Name) const {
    if (sys::path::filename(Name) != Name)
      return Name.str();
    for (const std::string &Dir : Dirs) {
      SmallString<256> P(Dir);
      sys::path::append(P, Name);
      if (sys::fs::exists(P))
        return std::string(P);
    }
    return std::nullopt;
  }
  std::vector<std::string> Dirs;
};

} // namespace

Expected<PreparedInputs> prepareInputs(const LinkerArgs &Linker,
                                       TempDir &Temp) {
  TimeTraceScope Trace("Prepare inputs");
  PreparedInputs Result;
  const std::vector<std::string> &Args = Linker.Args;

  // lld collects every -L before resolving any -l.
  std::string Sysroot;
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (isOption(A, {"sysroot"}) && I + 1 < Args.size())
      Sysroot = Args[I + 1];
    else if (auto V = joinedValue(A, "", "sysroot"))
      Sysroot = V->str();
  }
  LibrarySearch Search;
  Search.MinGW = Linker.isMinGW();
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (isOption(A, {"L", "library-path"}) && I + 1 < Args.size())
      Search.addDir(Args[++I], Sysroot);
    else if (auto V = joinedValue(A, "-L", "library-path"))
      Search.addDir(*V, Sysroot);
  }

  // Pass 1: the files lld will read, in command-line order, each once (a
  // library named twice, --start-group repeats). ArgFile[I] is the file
  // argument I names (-l NAME resolved), or -1.
  std::vector<std::string> Files;
  StringMap<size_t> FileIndex;
  std::vector<int> ArgFile(Args.size(), -1);
  auto noteFile = [&](size_t ArgIndex, StringRef Path) {
    auto [It, New] = FileIndex.try_emplace(Path, Files.size());
    if (New)
      Files.push_back(Path.str());
    ArgFile[ArgIndex] = It->second;
  };
  bool Static = false;
  std::optional<LldLinkInputs> LldLink;
  if (Linker.LldLink)
    LldLink.emplace(Args);
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (LldLink) {
      if (std::optional<std::string> F = LldLink->fileOf(A))
        noteFile(I, *F);
      continue;
    }
    if (isOption(A, {"Bstatic", "static", "dn", "non_shared"}))
      Static = true;
    else if (isOption(A, {"Bdynamic", "dy", "call_shared"}))
      Static = false;

    // -l NAME, -lNAME, --library=NAME: the archive it resolves to. Shared
    // libraries carry no relocatable device code.
    std::optional<StringRef> Lib;
    size_t LibArg = I;
    if (isOption(A, {"l", "library"}) && I + 1 < Args.size())
      Lib = StringRef(Args[++I]);
    else
      Lib = joinedValue(A, "-l", "library");
    if (Lib) {
      std::optional<std::string> Found = Search.find(*Lib, Static);
      if (Found && (StringRef(*Found).ends_with(".a") ||
                    StringRef(*Found).ends_with(".lib")))
        noteFile(LibArg, *Found);
      continue;
    }
    switch (classifyLinkerArg(A)) {
    case ArgKind::WithValue:
      ++I;
      break;
    case ArgKind::Flag:
      break;
    case ArgKind::Input:
      noteFile(I, A);
      break;
    }
  }

  // Pass 2: prepare the files in parallel. The outputs do not depend on the
  // thread count: temporary names follow the file index and the results are
  // merged in file order below.
  // A relocatable link's output must carry the device code on; a final
  // link's archives read it from the inputs themselves.
  const ready::PayloadPlacement Placement =
      Linker.Relocatable ? ready::PayloadPlacement::InOutput
                         : ready::PayloadPlacement::LeftInInput;
  std::vector<PreparedFile> Prepared(Files.size());
  std::vector<std::string> Errors(Files.size());
  parallelFor(0, Files.size(), [&](size_t F) {
    FilePreparer Preparer(Temp.pathFor(F, Files[F]), Prepared[F], Placement,
                          /*KeySeed=*/F);
    if (Error E = Preparer.run(Files[F]))
      Errors[F] = toString(std::move(E));
  });
  for (const std::string &E : Errors)
    if (!E.empty())
      return createStringError(E);
  for (PreparedFile &P : Prepared) {
    for (const PreparedFile::Record &R : P.Records)
      if (Error E = Result.Payloads.add(R.Key, R.Bundle, R.Origin))
        return E;
    for (Bytes &B : P.Keep)
      Result.Payloads.keepAlive(std::move(B));
    for (std::unique_ptr<Archive> &A : P.KeepArchives)
      Result.Payloads.keepAlive(std::move(A));
    Result.HasDeviceCode |= P.HasDeviceCode;
  }

  // Pass 3: lld's command line with the rewritten files substituted in place
  // ("-l NAME" becomes the rewritten archive's path).
  for (size_t I = 0; I < Args.size(); ++I) {
    int F = ArgFile[I];
    if (F >= 0 && Prepared[F].Substitute) {
      Result.LldArgs.push_back(*Prepared[F].Substitute);
      if (isOption(Args[I], {"l", "library"}))
        ++I; // the separate NAME of "-l NAME"
      continue;
    }
    Result.LldArgs.push_back(Args[I]);
  }
  return Result;
}

} // namespace link
} // namespace kpack

//===- DoctorInputs.cpp - kpack doctor: the files to examine --------------===//
//
// A PATH of `kpack doctor` is a file, a directory tree (an install prefix, a
// TheRock artifact or dist tree, a site-packages directory), walked without
// following symbolic links (a link to a file or directory inside the tree
// names something the walk reaches anyway; one that leads out of the tree is
// reported, not followed), or the name of an installed Python distribution.
//
//===----------------------------------------------------------------------===//

#include "Doctor.h"

#include "kpack/HostBinary.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"
#include "kpack/Wheel.h"
#include "kpack/Zip.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace kpack {
namespace doctor {

namespace {

/// Is Path (canonical) Root (canonical) or below it?
bool isWithin(StringRef Path, StringRef Root) {
  if (Path == Root)
    return true;
  if (!Path.starts_with(Root))
    return false;
  return Root.ends_with("/") || Path[Root.size()] == '/';
}

Error walkTree(StringRef Root, std::vector<Candidate> &Out,
               std::vector<NotFollowed> &Skipped) {
  SmallString<256> RootReal;
  if (std::error_code EC = sys::fs::real_path(Root, RootReal))
    return makeError("'" + Root + "': " + EC.message());
  std::vector<Candidate> Found;
  std::error_code EC;
  for (sys::fs::recursive_directory_iterator It(Root, EC,
                                                /*follow_symlinks=*/false),
       End;
       It != End && !EC; It.increment(EC)) {
    const sys::fs::file_type Type = It->type();
    if (Type == sys::fs::file_type::symlink_file) {
      SmallString<256> Target;
      if (sys::fs::real_path(It->path(), Target))
        continue; // dangling: names nothing
      if (!isWithin(Target, RootReal))
        Skipped.push_back({It->path(), std::string(Target)});
      continue;
    }
    if (Type == sys::fs::file_type::regular_file)
      Found.push_back({It->path(), false});
  }
  if (EC)
    return makeError("'" + Root + "': cannot walk it: " + EC.message());
  std::sort(Found.begin(), Found.end(),
            [](const Candidate &A, const Candidate &B) { return A.Path < B.Path; });
  Out.insert(Out.end(), Found.begin(), Found.end());
  return Error::success();
}

/// The site-packages directories to look for installed distributions in:
/// the directories among the command line's paths that hold a .dist-info
/// directory, then python3's sys.path.
std::vector<std::string> siteDirectories(const std::vector<std::string> &Args) {
  std::vector<std::string> Dirs;
  auto HasDistInfo = [](StringRef Dir) {
    std::error_code EC;
    for (sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
         It.increment(EC))
      if (StringRef(It->path()).ends_with(".dist-info"))
        return true;
    return false;
  };
  for (const std::string &A : Args)
    if (sys::fs::is_directory(A) && HasDistInfo(A))
      Dirs.push_back(A);
  ErrorOr<std::string> Python = sys::findProgramByName("python3");
  if (!Python)
    return Dirs;
  SmallString<128> OutFile;
  if (sys::fs::createTemporaryFile("kpack-doctor", "txt", OutFile))
    return Dirs;
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(OutFile),
                                          StringRef("")};
  StringRef Argv[] = {*Python, "-c",
                      "import sys\nfor p in sys.path: print(p)"};
  if (sys::ExecuteAndWait(*Python, Argv, std::nullopt, Redirects) == 0)
    if (auto Buf = MemoryBuffer::getFile(OutFile)) {
      SmallVector<StringRef, 16> Lines;
      (*Buf)->getBuffer().split(Lines, '\n', -1, false);
      for (StringRef L : Lines)
        if (sys::path::is_absolute(L) && sys::fs::is_directory(L))
          Dirs.push_back(L.str());
    }
  sys::fs::remove(OutFile);
  return Dirs;
}

/// The files of the installed distribution Name, from its RECORD.
Error collectDistribution(StringRef Name, const std::vector<std::string> &Args,
                          std::vector<Candidate> &Out, bool &Found) {
  const std::string Want = normalizeDistributionName(Name);
  for (const std::string &Site : siteDirectories(Args)) {
    std::error_code EC;
    for (sys::fs::directory_iterator It(Site, EC), End; It != End && !EC;
         It.increment(EC)) {
      StringRef Dir = sys::path::filename(It->path());
      if (!Dir.consume_back(".dist-info"))
        continue;
      if (normalizeDistributionName(Dir.rsplit('-').first) != Want)
        continue;
      SmallString<256> RecordPath(It->path());
      sys::path::append(RecordPath, "RECORD");
      auto Text = MemoryBuffer::getFile(RecordPath);
      if (!Text)
        return makeError("'" + RecordPath + "': " + Text.getError().message());
      Expected<std::vector<RecordEntry>> Rows =
          parseRecord((*Text)->getBuffer(), "'" + RecordPath + "'");
      if (!Rows)
        return Rows.takeError();
      Found = true;
      for (const RecordEntry &R : *Rows) {
        // Only files below the site directory (RECORD may name scripts in
        // ../../bin): a RECORD is input, its paths are not trusted.
        if (R.Path.empty() || sys::path::is_absolute(R.Path) ||
            StringRef(R.Path).contains(".."))
          continue;
        SmallString<256> P(Site);
        sys::path::append(P, R.Path);
        if (sys::fs::is_regular_file(P) && !sys::fs::is_symlink_file(P))
          Out.push_back({std::string(P), false});
      }
      return Error::success();
    }
  }
  return Error::success();
}

/// A wheel, as pip would install it: its .dist-info files, its archives and
/// its host images (found by their first 4 KiB as they stream) extracted
/// into a scratch tree that stands in for site-packages. Entry names were
/// checked when the wheel was opened (relative, no "." or ".." component,
/// no backslash); contents are checked against RECORD as they stream.
Error collectWheel(StringRef Path, InputContext &Ctx,
                   std::vector<Candidate> &Out) {
  Expected<WheelFile> W = WheelFile::open(Path);
  if (!W)
    return W.takeError();
  if (Ctx.WheelSite.empty()) {
    SmallString<128> Tmp;
    sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Tmp);
    if (Status S = Ctx.Scratch.createTree(std::string(Tmp), "kpack-doctor-",
                                          Ctx.WheelSite))
      return makeError("'" + Path + "': " + S.message());
  }
  Ctx.Wheels.push_back(Path.str());
  const std::string &Scratch = Ctx.WheelSite;
  const std::string DistInfo = W->distInfoDir().str() + "/";
  std::vector<Candidate> Found;
  for (const ZipEntry &E : W->zip().entries()) {
    if (E.isDirectory())
      continue;
    const bool Always = StringRef(E.Name).starts_with(DistInfo) ||
                        StringRef(E.Name).ends_with(".kpack");
    SmallString<256> Dest(Scratch);
    sys::path::append(Dest, E.Name);
    std::string Head;
    std::unique_ptr<raw_fd_ostream> File;
    bool Decided = Always, Keep = Always;
    auto Open = [&]() -> Error {
      if (std::error_code EC =
              sys::fs::create_directories(sys::path::parent_path(Dest)))
        return makeError("'" + Dest + "': " + EC.message());
      std::error_code EC;
      File = std::make_unique<raw_fd_ostream>(Dest, EC);
      if (EC)
        return makeError("'" + Dest + "': " + EC.message());
      *File << Head;
      return Error::success();
    };
    Expected<RecordEntry> Row =
        W->readVerified(E, [&](ArrayRef<uint8_t> C) -> Error {
          StringRef Chunk(reinterpret_cast<const char *>(C.data()), C.size());
          if (!Decided) {
            size_t Take =
                std::min(Chunk.size(), HostImageHeadSize - Head.size());
            Head.append(Chunk.data(), Take);
            Chunk = Chunk.drop_front(Take);
            if (Head.size() < HostImageHeadSize)
              return Error::success();
            Decided = true;
            Keep = looksLikeHostImage(Head);
            if (!Keep)
              return Error::success();
            if (Error Err = Open()) // writes the head
              return Err;
          } else if (Keep && !File) {
            if (Error Err = Open())
              return Err;
          }
          if (Keep)
            *File << Chunk;
          return Error::success();
        });
    if (!Row)
      return Row.takeError();
    if (!Decided) { // shorter than the head
      Keep = looksLikeHostImage(Head);
      if (Keep)
        if (Error Err = Open())
          return Err;
    }
    if (Keep && !File)
      if (Error Err = Open()) // an empty archive or dist-info file
        return Err;
    if (File) {
      File->close();
      if (File->has_error())
        return makeError("'" + Dest + "': " + File->error().message());
    }
    if (Keep && !Always)
      Found.push_back({std::string(Dest), false});
  }
  std::sort(Found.begin(), Found.end(),
            [](const Candidate &A, const Candidate &B) { return A.Path < B.Path; });
  Out.insert(Out.end(), Found.begin(), Found.end());
  return Error::success();
}

} // namespace

bool looksLikeHostImage(StringRef Head) {
  return hostImageFormat(Head) != HostImageFormat::None;
}

Error collectInputs(StringRef Arg, InputContext &Ctx,
                    std::vector<Candidate> &Out) {
  SmallString<256> Abs(Arg);
  sys::fs::make_absolute(Abs);
  sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
  if (sys::fs::is_directory(Abs))
    return walkTree(Abs, Out, Ctx.Skipped);
  if (sys::fs::exists(Abs) && StringRef(Abs).ends_with(".whl") &&
      !sys::fs::is_directory(Abs))
    return collectWheel(Abs, Ctx, Out);
  if (sys::fs::exists(Abs)) {
    Out.push_back({std::string(Abs), true});
    return Error::success();
  }
  if (isValidDistributionName(Arg)) {
    bool Found = false;
    if (Error E = collectDistribution(Arg, Ctx.Args, Out, Found))
      return E;
    if (Found)
      return Error::success();
  }
  return makeError(quoteInput(Arg) +
                   ": no such file or directory, nor an installed Python "
                   "distribution");
}

} // namespace doctor
} // namespace kpack

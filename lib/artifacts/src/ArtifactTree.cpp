//===- ArtifactTree.cpp - TheRock artifact directories --------------------===//
//
// Plain POSIX calls rather than llvm::sys::fs: the copies must see symlinks
// as symlinks, keep nanosecond timestamps and exact mode bits, and reach
// link() and copy_file_range() directly.
//
//===----------------------------------------------------------------------===//

#include "kpack/ArtifactTree.h"

#include "kpack/AtomicFile.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace llvm;
using namespace kpack;

namespace {

Error errnoError(const Twine &What, StringRef Path, int Err) {
  return makeError(What + " '" + Path + "': " + std::strerror(Err));
}

/// A file descriptor closed on scope exit.
class Fd {
public:
  explicit Fd(int F) : F(F) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() {
    if (F >= 0)
      ::close(F);
  }
  int get() const { return F; }
  /// Closes now, reporting the error close() may carry (NFS, quotas).
  int close() {
    int R = ::close(F);
    F = -1;
    return R;
  }

private:
  int F;
};

/// The names in directory Path, "." and ".." excluded, unsorted. Path's
/// last component is not followed if it is a symlink (unless FollowLast: a
/// walk's root, which its caller chose).
Error readDirNames(const std::string &Path, std::vector<std::string> &Names,
                   bool FollowLast = false) {
  int F = ::open(Path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC |
                                   (FollowLast ? 0 : O_NOFOLLOW));
  if (F < 0)
    return errnoError("cannot open directory", Path, errno);
  DIR *D = ::fdopendir(F);
  if (!D) {
    int Err = errno;
    ::close(F);
    return errnoError("cannot open directory", Path, Err);
  }
  errno = 0;
  while (struct dirent *Ent = ::readdir(D)) {
    StringRef N(Ent->d_name);
    if (N != "." && N != "..")
      Names.push_back(N.str());
    errno = 0;
  }
  int Err = errno;
  ::closedir(D);
  if (Err)
    return errnoError("cannot read directory", Path, Err);
  return Error::success();
}

std::string joinPath(StringRef A, StringRef B) {
  if (A.empty())
    return B.str();
  return (A + "/" + B).str();
}

bool isPlainName(StringRef Name) {
  return !Name.empty() && Name != "." && Name != ".." && !Name.contains('/');
}

} // namespace

//===----------------------------------------------------------------------===//
// Manifests and names
//===----------------------------------------------------------------------===//

Expected<std::vector<std::string>>
kpack::readArtifactManifest(StringRef ArtifactDir, MissingPrefix Missing) {
  std::string Path = joinPath(ArtifactDir, ArtifactManifestName);
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf =
      MemoryBuffer::getFile(Path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!Buf)
    return makeError("cannot read '" + Path + "': " + Buf.getError().message());
  std::vector<std::string> Prefixes;
  SmallVector<StringRef, 16> Lines;
  (*Buf)->getBuffer().split(Lines, '\n');
  for (StringRef Line : Lines) {
    StringRef Prefix = Line.trim();
    if (Prefix.empty())
      continue;
    // A control byte would not survive the C calls below (a NUL ends the
    // path lstat sees, so "lib\0" checks "lib" while the walkers recurse
    // through "lib\0/lib\0/..."), and no real prefix has one.
    if (any_of(Prefix, [](char C) {
          return static_cast<unsigned char>(C) < 0x20 || C == 0x7f;
        }))
      return makeError("'" + Path + "': prefix " + quoteInput(Prefix) +
                       " is not a plain relative path (no control bytes)");
    if (Prefix.starts_with("/"))
      return makeError("'" + Path + "': prefix '" + Prefix + "' is absolute");
    SmallVector<StringRef, 8> Parts;
    Prefix.split(Parts, '/');
    if (is_contained(Parts, ".."))
      return makeError("'" + Path + "': prefix '" + Prefix +
                       "' leaves the artifact");
    if (is_contained(Parts, ".") || is_contained(Parts, ""))
      return makeError("'" + Path + "': prefix '" + Prefix +
                       "' is not a plain relative path (no '.' or empty "
                       "components)");
    // Every component must be a directory of the artifact itself: a symlink
    // (lib -> /usr/lib) would make the tree walkers read and copy whatever
    // it points to.
    std::string Dir = ArtifactDir.str();
    bool Skip = false;
    for (StringRef Part : Parts) {
      Dir += "/" + Part.str();
      struct stat St;
      if (::lstat(Dir.c_str(), &St) != 0) {
        if (Missing == MissingPrefix::Skip && errno == ENOENT) {
          Skip = true;
          break;
        }
        return makeError("'" + Path + "': prefix '" + Prefix +
                         "' is not a directory of the artifact");
      }
      if (S_ISLNK(St.st_mode))
        return makeError("'" + Path + "': prefix '" + Prefix +
                         "' is a symlink ('" +
                         Dir.substr(ArtifactDir.size() + 1) +
                         "'); prefixes must be directories of the artifact");
      if (!S_ISDIR(St.st_mode))
        return makeError("'" + Path + "': prefix '" + Prefix +
                         "' is not a directory of the artifact");
    }
    if (Skip)
      continue;
    Prefixes.push_back(Prefix.str());
  }
  return Prefixes;
}

Error kpack::writeArtifactManifest(StringRef ArtifactDir,
                                   ArrayRef<std::string> Prefixes) {
  std::string Text;
  for (const std::string &P : Prefixes)
    Text += P + "\n";
  return toError(writeFileAtomically(joinPath(ArtifactDir, ArtifactManifestName),
                                     Text.data(), Text.size()));
}

std::optional<std::pair<std::string, std::string>>
kpack::splitArtifactName(StringRef Name) {
  size_t Pos = Name.rfind('_');
  if (Pos == StringRef::npos || Pos == 0 || Pos + 1 == Name.size())
    return std::nullopt;
  return std::make_pair(Name.take_front(Pos).str(),
                        Name.drop_front(Pos + 1).str());
}

//===----------------------------------------------------------------------===//
// Listing
//===----------------------------------------------------------------------===//

static Error walkTree(const std::string &Root, const std::string &Rel,
                      std::vector<TreeEntry> &Entries,
                      std::vector<std::string> *Dirs) {
  std::string DirPath = Rel.empty() ? Root : Root + "/" + Rel;
  std::vector<std::string> Names;
  if (Error E = readDirNames(DirPath, Names, /*FollowLast=*/Rel.empty()))
    return E;
  for (const std::string &N : Names) {
    std::string RelPath = joinPath(Rel, N);
    std::string Path = Root + "/" + RelPath;
    struct stat St;
    if (::lstat(Path.c_str(), &St) != 0)
      return errnoError("cannot stat", Path, errno);
    if (S_ISDIR(St.st_mode)) {
      if (Dirs)
        Dirs->push_back(RelPath);
      if (Error E = walkTree(Root, RelPath, Entries, Dirs))
        return E;
      continue;
    }
    TreeEntry E;
    E.K = S_ISREG(St.st_mode)   ? TreeEntry::File
          : S_ISLNK(St.st_mode) ? TreeEntry::Symlink
                                : TreeEntry::Other;
    E.RelPath = std::move(RelPath);
    E.Size = St.st_size;
    E.Device = St.st_dev;
    E.Inode = St.st_ino;
    E.LinkCount = St.st_nlink;
    Entries.push_back(std::move(E));
  }
  return Error::success();
}

Expected<std::vector<TreeEntry>> kpack::listTree(StringRef Root,
                                                 std::vector<std::string> *Dirs) {
  std::string R = Root.str();
  struct stat St;
  if (::stat(R.c_str(), &St) != 0)
    return errnoError("cannot stat", R, errno);
  if (!S_ISDIR(St.st_mode))
    return makeError("'" + R + "' is not a directory");
  std::vector<TreeEntry> Entries;
  if (Dirs)
    Dirs->clear();
  if (Error E = walkTree(R, "", Entries, Dirs))
    return E;
  // std::string compares with char_traits<char>, i.e. memcmp: bytewise.
  llvm::sort(Entries, [](const TreeEntry &A, const TreeEntry &B) {
    return A.RelPath < B.RelPath;
  });
  if (Dirs)
    llvm::sort(*Dirs);
  return Entries;
}

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

/// Copies the bytes of regular file From into a new file To with From's
/// mode and timestamps. copy_file_range lets the kernel share extents
/// (reflinks) or copy in-kernel; where it cannot (another filesystem type,
/// old kernels) the bytes go through a buffer.
static Error copyFileBytes(const std::string &From, const std::string &To) {
  Fd In(::open(From.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (In.get() < 0)
    return errnoError("cannot open", From, errno);
  struct stat St;
  if (::fstat(In.get(), &St) != 0)
    return errnoError("cannot stat", From, errno);
  Fd Out(::open(To.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                S_IRUSR | S_IWUSR));
  if (Out.get() < 0)
    return errnoError("cannot create", To, errno);

  bool UseCopyRange = true;
  uint64_t Left = St.st_size;
  std::vector<char> Buf;
  while (Left > 0) {
    if (UseCopyRange) {
      ssize_t N = ::copy_file_range(In.get(), nullptr, Out.get(), nullptr,
                                    std::min<uint64_t>(Left, 1u << 30), 0);
      if (N > 0) {
        Left -= N;
        continue;
      }
      if (N == 0)
        return makeError("'" + From + "' shrank while being copied");
      if (errno == EINTR)
        continue;
      if (errno != EXDEV && errno != ENOSYS && errno != EINVAL &&
          errno != EOPNOTSUPP && errno != EPERM)
        return errnoError("cannot copy to", To, errno);
      UseCopyRange = false;
      Buf.resize(1 << 20);
    }
    ssize_t N = ::read(In.get(), Buf.data(), std::min<uint64_t>(Left, Buf.size()));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return errnoError("cannot read", From, errno);
    if (N == 0)
      return makeError("'" + From + "' shrank while being copied");
    for (ssize_t Done = 0; Done < N;) {
      ssize_t W = ::write(Out.get(), Buf.data() + Done, N - Done);
      if (W < 0 && errno == EINTR)
        continue;
      if (W < 0)
        return errnoError("cannot write", To, errno);
      Done += W;
    }
    Left -= N;
  }
  if (::fchmod(Out.get(), St.st_mode & 07777) != 0)
    return errnoError("cannot set the mode of", To, errno);
  struct timespec Times[2] = {St.st_atim, St.st_mtim};
  if (::futimens(Out.get(), Times) != 0)
    return errnoError("cannot set the timestamps of", To, errno);
  if (Out.close() != 0)
    return errnoError("cannot write", To, errno);
  return Error::success();
}

/// Creates directory To and its missing parents. Directories created here
/// whose names match From's ancestors at the same depth are recorded, so
/// finish() can give them the source directory's mode and timestamps.
static Error makeDirs(StringRef From, StringRef To,
                      std::vector<std::pair<std::string, std::string>> &Stamp) {
  struct stat St;
  if (::lstat(To.str().c_str(), &St) == 0) {
    if (S_ISDIR(St.st_mode))
      return Error::success();
    return makeError("'" + To + "' exists and is not a directory");
  }
  StringRef ToParent = sys::path::parent_path(To, sys::path::Style::posix);
  bool Mapped = !From.empty() &&
                sys::path::filename(From, sys::path::Style::posix) ==
                    sys::path::filename(To, sys::path::Style::posix);
  StringRef FromParent =
      Mapped ? sys::path::parent_path(From, sys::path::Style::posix)
             : StringRef();
  if (!ToParent.empty())
    if (Error E = makeDirs(FromParent, ToParent, Stamp))
      return E;
  if (::mkdir(To.str().c_str(), 0777) != 0 && errno != EEXIST)
    return errnoError("cannot create directory", To, errno);
  if (Mapped)
    Stamp.emplace_back(From.str(), To.str());
  return Error::success();
}

Error TreeCopier::makeDir(StringRef From, StringRef To) {
  std::lock_guard<std::mutex> Lock(DirsMutex);
  return makeDirs(From, To, DirsToStamp);
}

Error TreeCopier::copy(StringRef FromRef, const TreeEntry &E, StringRef ToRef) {
  std::string From = FromRef.str(), To = ToRef.str();
  if (Error Err = makeDirs(sys::path::parent_path(FromRef, sys::path::Style::posix),
                           sys::path::parent_path(ToRef, sys::path::Style::posix),
                           DirsToStamp))
    return Err;

  switch (E.K) {
  case TreeEntry::Symlink: {
    std::vector<char> Target(E.Size + 1);
    ssize_t N = ::readlink(From.c_str(), Target.data(), Target.size());
    if (N < 0)
      return errnoError("cannot read symlink", From, errno);
    if (static_cast<size_t>(N) >= Target.size())
      return makeError("symlink '" + From + "' changed while being copied");
    std::string T(Target.data(), N);
    if (::symlink(T.c_str(), To.c_str()) != 0)
      return errnoError("cannot create symlink", To, errno);
    struct stat St;
    if (::lstat(From.c_str(), &St) != 0)
      return errnoError("cannot stat", From, errno);
    struct timespec Times[2] = {St.st_atim, St.st_mtim};
    if (::utimensat(AT_FDCWD, To.c_str(), Times, AT_SYMLINK_NOFOLLOW) != 0)
      return errnoError("cannot set the timestamps of", To, errno);
    return Error::success();
  }
  case TreeEntry::Other: {
    struct stat St;
    if (::lstat(From.c_str(), &St) != 0)
      return errnoError("cannot stat", From, errno);
    if (::mknod(To.c_str(), St.st_mode, St.st_rdev) != 0)
      return errnoError("cannot create special file", To, errno);
    struct timespec Times[2] = {St.st_atim, St.st_mtim};
    if (::utimensat(AT_FDCWD, To.c_str(), Times, AT_SYMLINK_NOFOLLOW) != 0)
      return errnoError("cannot set the timestamps of", To, errno);
    return Error::success();
  }
  case TreeEntry::File:
    break;
  }

  std::pair<uint64_t, uint64_t> Id(E.Device, E.Inode);
  if (E.LinkCount > 1) {
    auto It = Linked.find(Id);
    if (It != Linked.end()) {
      if (::link(It->second.c_str(), To.c_str()) != 0)
        return errnoError("cannot link '" + It->second + "' to", To, errno);
      return Error::success();
    }
  }
  if (Mode == CopyMode::HardLinkFirst) {
    if (::link(From.c_str(), To.c_str()) == 0)
      return Error::success();
    if (errno != EXDEV && errno != EPERM && errno != EMLINK)
      return errnoError("cannot link '" + From + "' to", To, errno);
  }
  if (Error Err = copyFileBytes(From, To))
    return Err;
  if (E.LinkCount > 1)
    Linked.emplace(Id, To);
  return Error::success();
}

Error TreeCopier::finish() {
  // Deepest first is not needed for correctness (stamping a directory does
  // not touch its parent), but the modes go on last so that a read-only
  // source directory does not stop the copies into it.
  for (const auto &[From, To] : llvm::reverse(DirsToStamp)) {
    struct stat St;
    if (::stat(From.c_str(), &St) != 0)
      return errnoError("cannot stat", From, errno);
    if (::chmod(To.c_str(), St.st_mode & 07777) != 0)
      return errnoError("cannot set the mode of", To, errno);
    struct timespec Times[2] = {St.st_atim, St.st_mtim};
    if (::utimensat(AT_FDCWD, To.c_str(), Times, 0) != 0)
      return errnoError("cannot set the timestamps of", To, errno);
  }
  DirsToStamp.clear();
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Staged outputs
//===----------------------------------------------------------------------===//

Expected<StagedOutputs> StagedOutputs::create(StringRef Parent) {
  // The one undo of directories (kpack/AtomicFile.h): the staging tree and
  // a Parent made for it go again unless committed, on failure and on
  // SIGINT/SIGTERM alike.
  StagedOutputs S;
  S.Dirs = std::make_unique<OutputDirectories>();
  if (Status St = S.Dirs->create(Parent.str()))
    return makeError(St.message());
  if (Status St = S.Dirs->createTree(Parent.str(), ".kpack-staging-", S.Root))
    return makeError(St.message());
  S.Parent = Parent.str();
  return S;
}

StagedOutputs::StagedOutputs(StagedOutputs &&) = default;
StagedOutputs &StagedOutputs::operator=(StagedOutputs &&) = default;
StagedOutputs::~StagedOutputs() = default;

Expected<std::string> StagedOutputs::dir(StringRef Name) {
  if (!isPlainName(Name) || Name.starts_with(".kpack-staging-"))
    return makeError("invalid output name '" + Name + "'");
  if (Root.empty() || Committed)
    return makeError("output '" + Name + "' requested after commit");
  std::string Dir = Root + "/" + Name.str();
  if (!is_contained(Names, Name)) {
    if (::mkdir(Dir.c_str(), 0777) != 0)
      return errnoError("cannot create directory", Dir, errno);
    Names.push_back(Name.str());
  }
  return Dir;
}

Error StagedOutputs::commit() {
  if (Root.empty() || Committed)
    return makeError("staged outputs committed twice");
  // Existing outputs are moved aside into the staging directory (removed
  // with it); if a rename fails, everything moved so far goes back, so the
  // outputs change all together or not at all.
  struct Done {
    std::string Name;
    bool Replaced;
  };
  std::vector<Done> Moved;
  auto Rollback = [&] {
    for (const Done &D : llvm::reverse(Moved)) {
      std::string Dest = Parent + "/" + D.Name;
      ::rename(Dest.c_str(), (Root + "/" + D.Name).c_str());
      if (D.Replaced)
        ::rename((Root + "/.replaced." + D.Name).c_str(), Dest.c_str());
    }
  };
  for (const std::string &Name : Names) {
    std::string Dest = Parent + "/" + Name;
    std::string Aside = Root + "/.replaced." + Name;
    struct stat St;
    bool Replaced = ::lstat(Dest.c_str(), &St) == 0;
    if (Replaced && ::rename(Dest.c_str(), Aside.c_str()) != 0) {
      int Err = errno;
      Rollback();
      return errnoError("cannot replace", Dest, Err);
    }
    if (::rename((Root + "/" + Name).c_str(), Dest.c_str()) != 0) {
      int Err = errno;
      if (Replaced)
        ::rename(Aside.c_str(), Dest.c_str());
      Rollback();
      return errnoError("cannot move output into place:", Dest, Err);
    }
    Moved.push_back({Name, Replaced});
  }
  Committed = true;
  // What was replaced is in the staging tree, removed with it.
  Dirs->removeTree(Root);
  Dirs->keep();
  Root.clear();
  return Error::success();
}

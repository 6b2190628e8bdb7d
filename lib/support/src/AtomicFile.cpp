//===- AtomicFile.cpp - All-or-nothing output files -----------------------===//

#include "kpack/AtomicFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/TimeProfiler.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <ctime>
#include <iterator>
#include <mutex>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace kpack;

namespace {

constexpr size_t BufferCapacity = size_t(1) << 20;

/// Set by the signal handler (OutputDirectories): no new output file or
/// directory from then on.
std::atomic<bool> Interrupted{false};

/// The signals whose handler removes what this process has made.
constexpr int HandledSignals[] = {SIGINT, SIGTERM, SIGHUP};

/// Holds the handled signals back from the calling thread while it makes a
/// file or directory and records it for removal: a handler run on this
/// thread between the two would not know it and leave it behind. The
/// process's signal goes to another thread meanwhile (whose handler waits
/// for this one), or comes here once both steps are done.
class SignalsHeld {
public:
  SignalsHeld() {
    sigset_t Block;
    sigemptyset(&Block);
    for (int Sig : HandledSignals)
      sigaddset(&Block, Sig);
    ::pthread_sigmask(SIG_BLOCK, &Block, &Old);
  }
  ~SignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &Old, nullptr); }
  SignalsHeld(const SignalsHeld &) = delete;
  SignalsHeld &operator=(const SignalsHeld &) = delete;

private:
  sigset_t Old;
};

std::string sysError(const std::string &What, const std::string &Path,
                     int Err = errno) {
  return What + " '" + Path + "': " + std::strerror(Err);
}

std::string dirName(const std::string &Path) {
  size_t Slash = Path.rfind('/');
  if (Slash == std::string::npos)
    return ".";
  return Slash == 0 ? "/" : Path.substr(0, Slash);
}

/// The process umask without changing it (umask(2) would race with other
/// threads creating files).
mode_t currentUmask() {
  if (FILE *F = std::fopen("/proc/self/status", "r")) {
    char Line[256];
    while (std::fgets(Line, sizeof(Line), F)) {
      unsigned Mask;
      if (std::sscanf(Line, "Umask: %o", &Mask) == 1) {
        std::fclose(F);
        return static_cast<mode_t>(Mask);
      }
    }
    std::fclose(F);
  }
  return 022;
}

Status writeAll(int Fd, const uint8_t *Data, size_t Size, const std::string &P) {
  while (Size) {
    ssize_t N = ::write(Fd, Data, Size);
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return Status::error(sysError("cannot write", P));
    }
    Data += N;
    Size -= static_cast<size_t>(N);
  }
  return Status::ok();
}

/// Whether Path names an existing file that is neither a regular file nor
/// a directory (/dev/null, a FIFO, a terminal): renaming over it would
/// replace it (as root, /dev/null itself), so such an output is written
/// into instead, once its contents are complete.
bool isSpecialFile(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 && !S_ISREG(St.st_mode) &&
         !S_ISDIR(St.st_mode);
}

/// Copies the complete temporary file Fd into the special file Path.
Status copyIntoSpecialFile(int Fd, uint64_t Size, const std::string &Path) {
  int Out = ::open(Path.c_str(), O_WRONLY | O_CLOEXEC);
  if (Out < 0)
    return Status::error(sysError("cannot open", Path));
  std::vector<uint8_t> Buf(std::min<uint64_t>(Size, uint64_t(1) << 20));
  Status Result = Status::ok();
  for (uint64_t At = 0; At < Size && !Result;) {
    ssize_t N = ::pread(Fd, Buf.data(),
                        std::min<uint64_t>(Buf.size(), Size - At),
                        static_cast<off_t>(At));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      Result = Status::error(sysError("cannot read back the output for", Path));
      break;
    }
    Result = writeAll(Out, Buf.data(), static_cast<size_t>(N), Path);
    At += static_cast<uint64_t>(N);
  }
  if (::close(Out) != 0 && !Result)
    Result = Status::error(sysError("cannot write", Path));
  return Result;
}

} // namespace

AtomicFile::~AtomicFile() { discard(); }

Status AtomicFile::open(const std::string &P, const AtomicFileOptions &O) {
  discard();
  Path = P;
  Opts = O;
  Offset = 0;
  Sticky = Status::ok();
  if (Interrupted.load())
    return Status::error("interrupted");
  // TempFile registers the name for removal on SIGINT/SIGTERM
  // (llvm::sys::RemoveFileOnSignal) until keep() or discard().
  // A special file's directory (/dev) may not be writable: its contents
  // are staged in the temporary directory, then written into it.
  std::string Model = P + ".tmp.%%%%%%";
  if (isSpecialFile(P)) {
    llvm::SmallString<128> TmpDir;
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, TmpDir);
    Model = std::string(TmpDir) + "/kpack-output.tmp.%%%%%%";
  }
  SignalsHeld Held; // between creating the file and registering it
  llvm::Expected<llvm::sys::fs::TempFile> T =
      llvm::sys::fs::TempFile::create(Model);
  if (!T) {
    std::string Message = llvm::toString(T.takeError());
    return Status::error("cannot create output file '" + P + "': " + Message);
  }
  if (Interrupted.load()) {
    // A handler on another thread may have removed the registered files
    // already.
    llvm::consumeError(T->discard());
    return Status::error("interrupted");
  }
  Temp.emplace(std::move(*T));
  Fd = Temp->FD;
  Buffer.reserve(BufferCapacity);
  return Status::ok();
}

Status AtomicFile::flush() {
  if (Buffer.empty())
    return Status::ok();
  Status S = writeAll(Fd, Buffer.data(), Buffer.size(), Temp->TmpName);
  Buffer.clear();
  return S;
}

Status AtomicFile::write(const void *Data, size_t Size) {
  if (!Temp)
    return Status::error("write to a closed output file");
  if (Sticky)
    return Sticky;
  const uint8_t *Bytes = static_cast<const uint8_t *>(Data);
  Offset += Size;
  if (Buffer.size() + Size > BufferCapacity) {
    if (Status S = flush())
      return Sticky = S;
    if (Size >= BufferCapacity) {
      if (Status S = writeAll(Fd, Bytes, Size, Temp->TmpName))
        return Sticky = S;
      return Status::ok();
    }
  }
  Buffer.insert(Buffer.end(), Bytes, Bytes + Size);
  return Status::ok();
}

Status AtomicFile::writeAt(uint64_t At, const void *Data, size_t Size) {
  if (!Temp)
    return Status::error("write to a closed output file");
  if (Sticky)
    return Sticky;
  if (At > Offset || Size > Offset - At)
    return Status::error("internal error: patch beyond the written data");
  if (Status S = flush())
    return Sticky = S;
  const uint8_t *Bytes = static_cast<const uint8_t *>(Data);
  while (Size) {
    ssize_t N = ::pwrite(Fd, Bytes, Size, static_cast<off_t>(At));
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return Sticky = Status::error(sysError("cannot write", Temp->TmpName));
    }
    Bytes += N;
    At += static_cast<uint64_t>(N);
    Size -= static_cast<size_t>(N);
  }
  return Status::ok();
}

Status AtomicFile::reserve(uint64_t Size, uint64_t &At) {
  if (!Temp)
    return Status::error("write to a closed output file");
  if (Sticky)
    return Sticky;
  if (Status S = flush())
    return Sticky = S;
  At = Offset;
  Offset += Size;
  // Later appends go after the reserved bytes.
  if (::lseek(Fd, static_cast<off_t>(Offset), SEEK_SET) < 0)
    return Sticky = Status::error(sysError("cannot write", Temp->TmpName));
  return Status::ok();
}

Status AtomicFile::writeReserved(uint64_t At, const void *Data,
                                 size_t Size) const {
  if (!Temp)
    return Status::error("write to a closed output file");
  if (At > Offset || Size > Offset - At)
    return Status::error("internal error: write beyond the reserved bytes");
  const uint8_t *Bytes = static_cast<const uint8_t *>(Data);
  while (Size) {
    ssize_t N = ::pwrite(Fd, Bytes, Size, static_cast<off_t>(At));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return Status::error(sysError("cannot write", Temp->TmpName));
    Bytes += N;
    At += static_cast<uint64_t>(N);
    Size -= static_cast<size_t>(N);
  }
  return Status::ok();
}

Status AtomicFile::readAt(uint64_t At, void *Data, size_t Size) {
  if (!Temp)
    return Status::error("read from a closed output file");
  if (Sticky)
    return Sticky;
  if (At > Offset || Size > Offset - At)
    return Status::error("internal error: read beyond the written data");
  if (Status S = flush())
    return Sticky = S;
  uint8_t *Bytes = static_cast<uint8_t *>(Data);
  while (Size) {
    ssize_t N = ::pread(Fd, Bytes, Size, static_cast<off_t>(At));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return Status::error(sysError("cannot read back", Temp->TmpName));
    if (N == 0)
      return Status::error("'" + Temp->TmpName + "' is shorter than written");
    Bytes += N;
    At += static_cast<uint64_t>(N);
    Size -= static_cast<size_t>(N);
  }
  return Status::ok();
}

Status AtomicFile::finishContents() {
  if (!Temp)
    return Status::error("commit of a closed output file");
  if (Sticky || (Sticky = flush())) {
    Status S = Sticky;
    discard();
    return S;
  }
  mode_t Mode = 0666 & ~currentUmask();
  if (!Opts.ModeFrom.empty()) {
    struct stat St;
    if (::stat(Opts.ModeFrom.c_str(), &St) != 0) {
      Status S = Status::error(sysError("cannot stat", Opts.ModeFrom));
      discard();
      return S;
    }
    Mode = St.st_mode & 07777;
  }
  if (::fchmod(Fd, Mode) != 0 || (Opts.Sync && ::fsync(Fd) != 0)) {
    Status S = Status::error(sysError("cannot finish", Temp->TmpName));
    discard();
    return S;
  }
  return Status::ok();
}

Status AtomicFile::commit() {
  if (Status S = finishContents())
    return S;
  if (isSpecialFile(Path)) {
    Status S = copyIntoSpecialFile(Fd, Offset, Path);
    discard();
    return S;
  }
  Fd = -1;
  std::string TmpName = Temp->TmpName;
  llvm::Error E = Temp->keep(Path);
  Temp.reset();
  if (E) {
    std::string Message = llvm::toString(std::move(E));
    ::unlink(TmpName.c_str());
    return Status::error("cannot rename output to '" + Path + "': " + Message);
  }
  if (Opts.Sync) {
    int Dir = ::open(dirName(Path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (Dir >= 0) {
      ::fsync(Dir);
      ::close(Dir);
    }
  }
  return Status::ok();
}

void AtomicFile::discard() {
  if (Temp) {
    llvm::consumeError(Temp->discard());
    Temp.reset();
  }
  Fd = -1;
  Buffer.clear();
}

Status kpack::writeFileAtomically(const std::string &Path, const void *Data,
                                  size_t Size, const AtomicFileOptions &Opts) {
  AtomicFile F;
  if (Status S = F.open(Path, Opts))
    return S;
  if (Status S = F.write(Data, Size))
    return S;
  return F.commit();
}

//===----------------------------------------------------------------------===//
// OutputDirectories
//===----------------------------------------------------------------------===//

namespace {

/// The directories to remove on a signal, in a table the handler can read
/// without locks or allocation.
struct SignalSlot {
  std::atomic<int> State{0}; // 0 free, 1 being filled, 2 active
  bool Tree = false;
  char Path[4096] = {}; // all zero: constant-initialized, no start-up code
};
constexpr int SlotCount = 256;
SignalSlot Slots[SlotCount];

/// Removes the tree Name in directory ParentFd with system calls only
/// (async-signal-safe).
void removeTreeAt(int ParentFd, const char *Name) {
  if (::unlinkat(ParentFd, Name, 0) == 0 || (errno != EISDIR && errno != EPERM))
    return;
  int Fd = ::openat(ParentFd, Name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (Fd < 0)
    return;
  ::fchmod(Fd, S_IRWXU);
  for (int Round = 0; Round < 4; ++Round) {
    ::lseek(Fd, 0, SEEK_SET);
    alignas(8) char Buf[4096];
    long N;
    while ((N = ::syscall(SYS_getdents64, Fd, Buf, sizeof(Buf))) > 0) {
      for (long Off = 0; Off < N;) {
        // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name.
        unsigned short RecLen;
        std::memcpy(&RecLen, Buf + Off + 16, sizeof(RecLen));
        const char *Entry = Buf + Off + 19;
        Off += RecLen;
        if (std::strcmp(Entry, ".") == 0 || std::strcmp(Entry, "..") == 0)
          continue;
        removeTreeAt(Fd, Entry);
      }
    }
    if (::unlinkat(ParentFd, Name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY)
      break;
  }
  ::close(Fd);
}

/// The commit in progress (commitPathsTogether), for the signal handler.
/// Its strings are built before it is published and not changed after.
struct CommitJournal {
  struct Step {
    std::string Staged, Destination, Backup;
    /// 0 not begun, 1 backing up the destination, 2 renaming the staged
    /// path; set before the system call, so that rollBack() checks what
    /// happened.
    std::atomic<int> State{0};
  };
  std::vector<Step> Steps;
  /// 1 renaming, 2 removing the backups, 3 being rolled back.
  std::atomic<int> Phase{1};
};
std::atomic<CommitJournal *> ActiveCommit{nullptr};
/// One commit at a time in a process (the signal handler undoes the one in
/// ActiveCommit): threads that commit at once wait for each other. A commit
/// is a few renames.
std::mutex CommitMutex;

bool exists(const char *Path) {
  struct stat St;
  return ::lstat(Path, &St) == 0;
}

/// Undoes the steps done, last first, with system calls only
/// (async-signal-safe).
void rollBack(CommitJournal &J) {
  for (size_t I = J.Steps.size(); I-- > 0;) {
    CommitJournal::Step &S = J.Steps[I];
    int State = S.State.load();
    if (State == 0)
      continue;
    const char *Dest = S.Destination.c_str();
    if (State == 2 && !exists(S.Staged.c_str()) &&
        ::rename(Dest, S.Staged.c_str()) != 0)
      removeTreeAt(AT_FDCWD, Dest);
    const char *Backup = S.Backup.c_str();
    if (!S.Backup.empty() && exists(Backup) && ::rename(Backup, Dest) != 0) {
      // A directory to put back over a directory (not moved back).
      removeTreeAt(AT_FDCWD, Dest);
      ::rename(Backup, Dest);
    }
  }
}

void removeBackups(CommitJournal &J) {
  for (CommitJournal::Step &S : J.Steps)
    if (!S.Backup.empty())
      removeTreeAt(AT_FDCWD, S.Backup.c_str());
}

/// The signal handler's part of a commit in progress.
void interruptCommit() {
  CommitJournal *J = ActiveCommit.load();
  if (!J)
    return;
  // Renaming: undone here. Being rolled back (a failed commit, perhaps
  // interrupted in the middle of that): again from the start, as rollBack()
  // checks what is where. Done: only the backups are left to remove.
  int Phase = 1;
  J->Phase.compare_exchange_strong(Phase, 3);
  if (Phase == 2)
    removeBackups(*J);
  else
    rollBack(*J);
}

void removeRecorded() {
  // Trees first, then created directories (twice: a parent recorded in a
  // later slot than its child is empty on the second pass).
  for (bool Trees : {true, false}) {
    for (int Pass = 0; Pass < 2; ++Pass)
      for (int I = SlotCount - 1; I >= 0; --I) {
        SignalSlot &S = Slots[I];
        if (S.State.load() != 2 || S.Tree != Trees)
          continue;
        if (Trees)
          removeTreeAt(AT_FDCWD, S.Path);
        else
          ::rmdir(S.Path);
      }
  }
}

void onSignal(int Sig) {
  Interrupted.store(true);
  // Other threads may be creating an output right now: let them finish
  // (the next one fails), then remove everything.
  struct timespec Pause = {0, 20 * 1000 * 1000};
  ::nanosleep(&Pause, nullptr);
  // A commit in progress is undone first (its outputs back to their
  // staged paths), then AtomicFile's temporaries go, so that the
  // directories are empty.
  interruptCommit();
  llvm::sys::RunInterruptHandlers();
  removeRecorded();
  // End now, by the signal, before any thread writes anything more.
  struct sigaction Default;
  std::memset(&Default, 0, sizeof(Default));
  Default.sa_handler = SIG_DFL;
  sigemptyset(&Default.sa_mask);
  ::sigaction(Sig, &Default, nullptr);
  sigset_t Unblock;
  sigemptyset(&Unblock);
  sigaddset(&Unblock, Sig);
  ::sigprocmask(SIG_UNBLOCK, &Unblock, nullptr);
  ::raise(Sig);
  ::_exit(128 + Sig);
}

void installHandlers() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    for (int Sig : HandledSignals) {
      struct sigaction Action, Old;
      std::memset(&Action, 0, sizeof(Action));
      Action.sa_handler = onSignal;
      sigemptyset(&Action.sa_mask);
      if (::sigaction(Sig, nullptr, &Old) == 0 && Old.sa_handler == SIG_IGN)
        continue; // an ignored signal stays ignored
      ::sigaction(Sig, &Action, nullptr);
    }
  });
}

int claimSlot(const std::string &Path, bool Tree) {
  if (Path.size() >= sizeof(SignalSlot::Path))
    return -1;
  installHandlers();
  for (int I = 0; I < SlotCount; ++I) {
    int Free = 0;
    if (!Slots[I].State.compare_exchange_strong(Free, 1))
      continue;
    std::memcpy(Slots[I].Path, Path.c_str(), Path.size() + 1);
    Slots[I].Tree = Tree;
    Slots[I].State.store(2);
    return I;
  }
  return -1; // not removed on a signal; still undone on failure
}

void releaseSlot(int Slot) {
  if (Slot >= 0)
    Slots[Slot].State.store(0);
}

} // namespace

Status kpack::commitPathsTogether(const std::vector<StagedPath> &Paths) {
  std::lock_guard<std::mutex> OneCommit(CommitMutex);
  if (Interrupted.load())
    return Status::error("interrupted");
  CommitJournal J;
  J.Steps = std::vector<CommitJournal::Step>(Paths.size());
  for (size_t I = 0; I < Paths.size(); ++I) {
    CommitJournal::Step &S = J.Steps[I];
    S.Staged = Paths[I].Staged;
    S.Destination = Paths[I].Destination;
    if (exists(S.Destination.c_str())) {
      S.Backup = S.Staged + ".old";
      for (int N = 1; exists(S.Backup.c_str()); ++N)
        S.Backup = S.Staged + ".old" + std::to_string(N);
    }
  }
  CommitJournal *None = nullptr;
  if (!ActiveCommit.compare_exchange_strong(None, &J))
    return Status::error("internal error: two commits at once");
  installHandlers();

  Status Failed;
  for (CommitJournal::Step &S : J.Steps) {
    const char *Staged = S.Staged.c_str(), *Dest = S.Destination.c_str();
    if (!S.Backup.empty()) {
      S.State.store(1);
      struct stat From, To;
      bool StagedDir = ::lstat(Staged, &From) == 0 && S_ISDIR(From.st_mode);
      bool DestDir = ::lstat(Dest, &To) == 0 && S_ISDIR(To.st_mode);
      // A file replacing a file: the destination never disappears. A file
      // does not replace a directory (the rename fails, as rename(2) does);
      // a directory replaces whatever is there, moved aside.
      if (!(!StagedDir && DestDir) &&
          !(!StagedDir && ::link(Dest, S.Backup.c_str()) == 0) &&
          ::rename(Dest, S.Backup.c_str()) != 0) {
        Failed = Status::error(sysError("cannot move aside", S.Destination));
        break;
      }
    }
    S.State.store(2);
    if (::rename(Staged, Dest) != 0) {
      Failed =
          Status::error(sysError("cannot rename output to", S.Destination));
      break;
    }
  }

  int Phase = 1;
  if (!J.Phase.compare_exchange_strong(Phase, Failed ? 3 : 2)) {
    // A signal handler on another thread is undoing the commit and ends
    // the process.
    for (;;)
      ::pause();
  }
  if (Failed)
    rollBack(J);
  else
    removeBackups(J);
  ActiveCommit.store(nullptr);
  return Failed;
}

Status kpack::commitTogether(const std::vector<AtomicFile *> &Files) {
  llvm::TimeTraceScope Trace(
      "Commit", [&] { return std::to_string(Files.size()) + " files"; });
  // Every file's contents first: a failure there changes no destination.
  for (AtomicFile *F : Files)
    if (Status S = F->finishContents()) {
      for (AtomicFile *G : Files)
        G->discard();
      return S;
    }
  // The temporary files stay registered for removal on a signal while
  // they are renamed: a signal puts them back under their names first.
  std::vector<StagedPath> Paths;
  std::vector<AtomicFile *> Renamed;
  for (AtomicFile *F : Files)
    if (!isSpecialFile(F->path())) {
      Paths.push_back({F->tempPath(), F->path()});
      Renamed.push_back(F);
    }
  if (Status S = commitPathsTogether(Paths)) {
    for (AtomicFile *G : Files)
      G->discard();
    return S;
  }
  // Special files (/dev/null) are written into, after the renames.
  Status Special = Status::ok();
  for (AtomicFile *F : Files)
    if (F->Temp && std::find(Renamed.begin(), Renamed.end(), F) ==
                       Renamed.end()) {
      if (!Special)
        Special = copyIntoSpecialFile(F->Fd, F->Offset, F->Path);
      F->discard();
    }
  for (AtomicFile *F : Renamed) {
    F->Fd = -1;
    llvm::consumeError(F->Temp->keep()); // under its new name
    F->Temp.reset();
    F->Buffer.clear();
    if (F->Opts.Sync) {
      int Dir = ::open(dirName(F->Path).c_str(),
                       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (Dir >= 0) {
        ::fsync(Dir);
        ::close(Dir);
      }
    }
  }
  return Special;
}

Status kpack::removeDirectoryTree(const std::string &Path) {
  struct stat St;
  if (::lstat(Path.c_str(), &St) != 0)
    return errno == ENOENT ? Status::ok()
                           : Status::error(sysError("cannot stat", Path));
  removeTreeAt(AT_FDCWD, Path.c_str());
  if (::lstat(Path.c_str(), &St) == 0)
    return Status::error("cannot remove '" + Path + "'");
  return Status::ok();
}

OutputDirectories::~OutputDirectories() { undo(); }

void OutputDirectories::record(const std::string &Path, bool Tree) {
  Dirs.push_back({Path, Tree, claimSlot(Path, Tree)});
}

Status OutputDirectories::create(const std::string &Dir) {
  if (Interrupted.load())
    return Status::error("interrupted");
  std::vector<std::string> Missing; // deepest first
  for (std::string D = Dir; !D.empty() && D != "/" && D != ".";) {
    struct stat St;
    if (::lstat(D.c_str(), &St) == 0)
      break;
    Missing.push_back(D);
    size_t Slash = D.find_last_of('/');
    if (Slash == std::string::npos)
      break;
    D.resize(Slash);
  }
  for (auto It = Missing.rbegin(); It != Missing.rend(); ++It) {
    SignalsHeld Held; // between making the directory and recording it
    if (::mkdir(It->c_str(), 0777) != 0) {
      if (errno == EEXIST)
        continue;
      return Status::error(sysError("cannot create directory", *It));
    }
    record(*It, /*Tree=*/false);
  }
  struct stat St;
  if (::stat(Dir.c_str(), &St) != 0 || !S_ISDIR(St.st_mode))
    return Status::error("cannot create directory '" + Dir +
                         "': it exists and is not a directory");
  return Status::ok();
}

Status OutputDirectories::createTree(const std::string &Parent,
                                     const std::string &Stem,
                                     std::string &Path) {
  if (Interrupted.load())
    return Status::error("interrupted");
  std::string Template = Parent + "/" + Stem + "XXXXXX";
  SignalsHeld Held; // between making the directory and recording it
  if (!::mkdtemp(Template.data()))
    return Status::error(sysError("cannot create a directory in", Parent));
  record(Template, /*Tree=*/true);
  Path = std::move(Template);
  return Status::ok();
}

void OutputDirectories::removeTree(const std::string &Path) {
  (void)removeDirectoryTree(Path);
  forget(Path);
}

void OutputDirectories::forget(const std::string &Path) {
  for (auto It = Dirs.begin(); It != Dirs.end(); ++It)
    if (It->Path == Path) {
      releaseSlot(It->Slot);
      Dirs.erase(It);
      return;
    }
}

void OutputDirectories::keep() {
  for (const Made &M : Dirs)
    releaseSlot(M.Slot);
  Dirs.clear();
}

void OutputDirectories::undo() {
  for (const Made &M : llvm::reverse(Dirs))
    if (M.Tree)
      (void)removeDirectoryTree(M.Path);
  for (const Made &M : llvm::reverse(Dirs))
    if (!M.Tree)
      ::rmdir(M.Path.c_str()); // non-empty ones stay
  keep();
}

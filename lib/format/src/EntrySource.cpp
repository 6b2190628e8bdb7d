//===- EntrySource.cpp - Where an archive entry's bytes come from ---------===//

#include "WriterInternals.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace kpack;

namespace {

Status readFileRange(const std::string &Path, uint64_t Offset, uint64_t Size,
                     llvm::SmallVectorImpl<uint8_t> &Out) {
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return Status::error("cannot open '" + Path + "': " + std::strerror(errno));
  Status Result = Status::ok();
  const size_t Old = Out.size(); // the bytes are appended
  try {
    Out.resize_for_overwrite(Old + Size); // pread writes every byte
  } catch (const std::bad_alloc &) {
    ::close(Fd);
    return Status::error("out of memory reading " + std::to_string(Size) +
                         " bytes of '" + Path + "'");
  }
  uint64_t Done = 0;
  while (Done < Size) {
    ssize_t N = ::pread(Fd, Out.data() + Old + Done, Size - Done,
                        static_cast<off_t>(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      Result = Status::error("cannot read '" + Path + "': " +
                             std::strerror(errno));
      break;
    }
    if (N == 0) {
      Result = Status::error("'" + Path + "' ends before byte " +
                             std::to_string(Offset + Size));
      break;
    }
    Done += static_cast<uint64_t>(N);
  }
  ::close(Fd);
  if (Result)
    Out.truncate(Old);
  return Result;
}

} // namespace

EntrySource EntrySource::fromBytes(const uint8_t *Data, size_t Size) {
  EntrySource S;
  S.K = Kind::View;
  S.Data = Data;
  S.Size = Size;
  return S;
}

EntrySource EntrySource::fromOwnedBytes(std::vector<uint8_t> Bytes) {
  EntrySource S;
  S.K = Kind::Owned;
  S.Size = Bytes.size();
  S.Owned = std::make_shared<const std::vector<uint8_t>>(std::move(Bytes));
  return S;
}

EntrySource EntrySource::fromFileRange(std::string Path, uint64_t Offset,
                                       uint64_t Size) {
  EntrySource S;
  S.K = Kind::FileRange;
  S.Path = std::move(Path);
  S.Offset = Offset;
  S.Size = Size;
  return S;
}

EntrySource EntrySource::fromCallback(Producer P, uint64_t SizeHint,
                                      std::function<void()> WillRead) {
  EntrySource S;
  S.K = Kind::Callback;
  S.Make = std::move(P);
  S.Size = SizeHint;
  S.WillRead = std::move(WillRead);
  return S;
}

EntrySource EntrySource::checkedBy(Check C, std::string Origin) const {
  EntrySource S = *this;
  if (!Origin.empty())
    S.Origin = S.Origin.empty() ? std::move(Origin)
                                : std::move(Origin) + ": " + S.Origin;
  if (!Checked) {
    S.Checked = std::move(C);
    return S;
  }
  S.Checked = [First = Checked, Then = std::move(C)](const uint8_t *D,
                                                      size_t N) {
    if (Status St = First(D, N))
      return St;
    return Then(D, N);
  };
  return S;
}

Status EntrySource::read(ReadBuffers &Bufs, const uint8_t *&View,
                         size_t &ViewSize) const {
  Status S = produce(Bufs, View, ViewSize);
  if (!S && Checked)
    S = Checked(View, ViewSize);
  if (S && !Origin.empty())
    return Status::error(Origin + ": " + S.message());
  return S;
}

Status EntrySource::produce(ReadBuffers &Bufs, const uint8_t *&View,
                            size_t &ViewSize) const {
  switch (K) {
  case Kind::View:
    View = Data;
    ViewSize = Size;
    break;
  case Kind::Owned:
    View = Owned->data();
    ViewSize = Owned->size();
    break;
  case Kind::FileRange: {
    const size_t Old = Bufs.Range.size();
    if (Status S = readFileRange(Path, Offset, Size, Bufs.Range))
      return S;
    View = Bufs.Range.data() + Old;
    ViewSize = Size;
    break;
  }
  case Kind::Callback:
    Bufs.Produced.clear();
    if (!Make)
      return Status::error("entry source has no producer");
    if (Status S = Make(Bufs.Produced))
      return S;
    View = Bufs.Produced.data();
    ViewSize = Bufs.Produced.size();
    break;
  }
  return Status::ok();
}

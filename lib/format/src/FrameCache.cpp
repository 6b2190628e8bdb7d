//===- FrameCache.cpp - Compressed frames kept between runs ---------------===//

#include "kpack/FrameCache.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <cstring>
#include <ctime>

using namespace kpack;
using namespace llvm;

namespace {
constexpr char Magic[8] = {'K', 'P', 'K', 'F', 'R', 'M', '0', '1'};
constexpr size_t HeaderSize = 8 + 16 + 8 + 8;
/// pruneCache considers only the files with this prefix; temporaries do
/// not have it.
constexpr char EntryPrefix[] = "llvmcache-kpack-";
} // namespace

Status FrameCache::parsePolicy(StringRef Policy, CachePruningPolicy &Out) {
  Expected<CachePruningPolicy> P = parseCachePruningPolicy(Policy);
  if (!P)
    return Status::error("invalid cache policy '" + Policy.str() +
                         "': " + toString(P.takeError()));
  Out = *P;
  return Status::ok();
}

Status FrameCache::open(StringRef Dir, StringRef Policy,
                        std::shared_ptr<FrameCache> &Out) {
  if (Dir.empty())
    return Status::error("empty cache directory");
  CachePruningPolicy P;
  if (Status S = parsePolicy(Policy, P))
    return S;
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return Status::error("cannot create cache directory '" + Dir.str() +
                         "': " + EC.message());
  Out.reset(new FrameCache(Dir.str(), P));
  return Status::ok();
}

FrameCache::~FrameCache() {
  // Pruning failures only leave the cache larger.
  pruneCache(Dir, Policy);
}

FrameCache::Key FrameCache::keyOf(const uint8_t *Data, size_t Size,
                                  StringRef Salt) {
  // The content's hash, then that and the salt hashed together: the bytes
  // are not copied.
  XXH128_hash_t Content = xxh3_128bits(ArrayRef<uint8_t>(Data, Size));
  SmallVector<uint8_t, 128> Buf(16);
  support::endian::write64le(Buf.data(), Content.high64);
  support::endian::write64le(Buf.data() + 8, Content.low64);
  Buf.append(Salt.bytes_begin(), Salt.bytes_end());
  XXH128_hash_t H = xxh3_128bits(Buf);
  Key K;
  support::endian::write64be(K.data(), H.high64);
  support::endian::write64be(K.data() + 8, H.low64);
  return K;
}

std::string FrameCache::hex(const Key &K) {
  static const char Digits[] = "0123456789abcdef";
  std::string S;
  for (uint8_t B : K) {
    S += Digits[B >> 4];
    S += Digits[B & 15];
  }
  return S;
}

std::string FrameCache::pathOf(const Key &K) const {
  SmallString<256> P(Dir);
  sys::path::append(P, EntryPrefix + hex(K));
  return std::string(P);
}

bool FrameCache::lookup(const Key &K, SmallVectorImpl<uint8_t> &Frame) {
  std::string Path = pathOf(K);
  int FD;
  if (sys::fs::openFileForRead(Path, FD)) {
    ++Misses;
    return false;
  }
  SmallVector<char, 0> Buf;
  Error E =
      sys::fs::readNativeFileToEOF(sys::fs::convertFDToNativeFile(FD), Buf);
  bool Valid = !E && Buf.size() >= HeaderSize &&
               std::memcmp(Buf.data(), Magic, sizeof(Magic)) == 0 &&
               std::memcmp(Buf.data() + 8, K.data(), K.size()) == 0;
  consumeError(std::move(E));
  const uint8_t *Bytes = reinterpret_cast<const uint8_t *>(Buf.data());
  uint64_t Size = Valid ? support::endian::read64le(Bytes + 24) : 0;
  Valid = Valid && Size == Buf.size() - HeaderSize &&
          xxh3_64bits(ArrayRef<uint8_t>(Bytes + HeaderSize, Size)) ==
              support::endian::read64le(Bytes + 32);
  if (Valid) // pruning by age counts from the last use
    (void)sys::fs::setLastAccessAndModificationTime(
        FD, sys::toTimePoint(std::time(nullptr)));
  (void)sys::Process::SafelyCloseFileDescriptor(FD);
  if (!Valid) {
    ++Invalid;
    ++Misses;
    return false;
  }
  Frame.append(Bytes + HeaderSize, Bytes + HeaderSize + Size);
  ++Hits;
  return true;
}

void FrameCache::store(const Key &K, const uint8_t *Frame, size_t Size) {
  SmallString<256> Model(Dir);
  sys::path::append(Model, "kpack-tmp-%%%%%%%%%%%%%%%%");
  Expected<sys::fs::TempFile> Temp = sys::fs::TempFile::create(Model);
  if (!Temp) {
    consumeError(Temp.takeError());
    return;
  }
  uint8_t Header[HeaderSize];
  std::memcpy(Header, Magic, sizeof(Magic));
  std::memcpy(Header + 8, K.data(), K.size());
  support::endian::write64le(Header + 24, Size);
  support::endian::write64le(Header + 32,
                             xxh3_64bits(ArrayRef<uint8_t>(Frame, Size)));
  bool Written;
  {
    raw_fd_ostream OS(Temp->FD, /*shouldClose=*/false);
    OS.write(reinterpret_cast<const char *>(Header), HeaderSize);
    OS.write(reinterpret_cast<const char *>(Frame), Size);
    OS.flush();
    Written = !OS.has_error();
    OS.clear_error();
  }
  // The rename replaces any entry of the key at once: a reader opens the
  // old file or the new one, never a partial one.
  Error E = Written ? Temp->keep(pathOf(K)) : Temp->discard();
  if (E) // keep() removes the temporary it could not rename
    consumeError(std::move(E));
  else if (Written)
    ++Stored;
}

//===- InputRewriter.h - Make every link input kpack-ready ------*- C++ -*-===//
//
// lld reads inputs by path and has no hook for object contents, so before the
// link every input that still carries `.hip_fatbin` (a relocatable object, an
// archive member, or a regular-LTO bitcode module) is rewritten into its
// kpack-ready form (docs/kpack-ready.md) in a private temporary directory and
// its path is substituted in place in lld's command line, which keeps
// --start-group/--whole-archive/--as-needed positions intact. The payload
// records of every input are collected on the way.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_LLD_INPUTREWRITER_H
#define KPACK_LLD_INPUTREWRITER_H

#include "LinkOptions.h"

#include "kpack/AtomicFile.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Object/Archive.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace kpack {
namespace link {

/// Where one offload bundle's bytes are: in memory (a view into a buffer the
/// store keeps), or a range of a file (an input, or a rewritten input in the
/// temporary directory), read only when the archives are written so that
/// memory does not grow with the device code.
struct PayloadBytes {
  llvm::ArrayRef<uint8_t> Bytes; ///< in memory; unused if File is set
  std::string File;
  uint64_t Offset = 0; ///< of the bundle in File
  uint64_t Size = 0;
  bool inFile() const { return !File.empty(); }
  static PayloadBytes inMemory(llvm::ArrayRef<uint8_t> B) {
    PayloadBytes P;
    P.Bytes = B;
    P.Size = B.size();
    return P;
  }
  static PayloadBytes inFileRange(std::string F, uint64_t Off, uint64_t N) {
    PayloadBytes P;
    P.File = std::move(F);
    P.Offset = Off;
    P.Size = N;
    return P;
  }
};

/// Offload bundles by content key, gathered from the payload records of the
/// inputs. Owns the buffers in-memory bundles point into.
class PayloadStore {
public:
  /// Records Bundle under Key. The same key seen again must carry the same
  /// bytes (it is then stored once).
  llvm::Error add(uint64_t Key, PayloadBytes Bundle, llvm::StringRef Origin);
  llvm::Error add(uint64_t Key, llvm::ArrayRef<uint8_t> Bundle,
                  llvm::StringRef Origin) {
    return add(Key, PayloadBytes::inMemory(Bundle), Origin);
  }
  /// The bundle for Key, or nullptr.
  const PayloadBytes *find(uint64_t Key) const;
  /// The input Key was first seen in (for messages), or "".
  llvm::StringRef origin(uint64_t Key) const;
  void keepAlive(std::unique_ptr<llvm::MemoryBuffer> Buffer) {
    Buffers.push_back(std::move(Buffer));
  }
  /// A thin archive owns the buffers of its members.
  void keepAlive(std::unique_ptr<llvm::object::Archive> Ar) {
    Archives.push_back(std::move(Ar));
  }
  /// Calls F(Key, Bytes) for every bundle held in memory (all of those
  /// readLinkInput stores), in no particular order.
  template <typename Fn> void forEach(Fn F) const {
    for (const auto &KV : Bundles)
      if (!KV.second.inFile())
        F(KV.first, KV.second.Bytes);
  }
  bool empty() const { return Bundles.empty(); }
  size_t size() const { return Bundles.size(); }

private:
  llvm::DenseMap<uint64_t, PayloadBytes> Bundles;
  llvm::DenseMap<uint64_t, std::string> Origins;
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> Buffers;
  std::vector<std::unique_ptr<llvm::object::Archive>> Archives;
};

/// Reads Size bytes at Offset of Path into Out (a bounded piece of a payload).
llvm::Error readFileBytes(llvm::StringRef Path, uint64_t Offset, uint64_t Size,
                          std::vector<uint8_t> &Out);

/// A private temporary directory ($TMPDIR/<Prefix>-XXXXXX), removed with
/// everything in it on destruction, and by SIGINT, SIGTERM and SIGHUP: it
/// is an OutputDirectories tree (kpack/AtomicFile.h), the one cleanup of
/// what a run leaves behind.
class TempDir {
public:
  static llvm::Expected<TempDir> create(llvm::StringRef Prefix);
  TempDir(TempDir &&Other) = default;
  TempDir(const TempDir &) = delete;
  ~TempDir();
  /// A fresh path inside the directory ending in Name's file name.
  std::string newFile(llvm::StringRef Name);
  /// The path for input file number Index (thread-safe, deterministic).
  std::string pathFor(size_t Index, llvm::StringRef Name) const;
  const std::string &path() const { return Path; }

private:
  TempDir() = default;
  std::unique_ptr<OutputDirectories> Dirs; ///< holds the one tree, Path
  std::string Path;
  unsigned Counter = 0;
};

struct PreparedInputs {
  /// lld's arguments with rewritten inputs substituted.
  std::vector<std::string> LldArgs;
  PayloadStore Payloads;
  /// Any input was fat or kpack-ready.
  bool HasDeviceCode = false;
};

/// Reads one input's bytes (relocatable object, archive or bitcode module)
/// as prepareInputs reads every input file, in memory: adds its payload
/// records to Store and returns the kpack-ready rewrite of a fat input, or
/// nullptr if the input is used as is. Records may point into Buf and into
/// the returned buffer, which must outlive Store's use of them.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readLinkInput(llvm::MemoryBufferRef Buf, PayloadStore &Store);

/// Scans lld's inputs (positional files and -l libraries), rewrites fat ones
/// into Temp and collects all payload records.
llvm::Expected<PreparedInputs> prepareInputs(const LinkerArgs &Args,
                                             TempDir &Temp);

} // namespace link
} // namespace kpack

#endif

//===- kpack/Wheel.h - Python wheels (PEP 427) ------------------*- C++ -*-===//
//
// What the wheel tools need of the binary distribution format: file names
// and tags, distribution-name normalisation (PEP 503) and the names this
// project derives from target IDs, the header files WHEEL and METADATA (core
// metadata), RECORD (sha256, urlsafe base64 without padding, and size per
// file), the order in which `wheel` writes entries, and a wheel opened for
// reading whose contents are checked against its RECORD as they are read.
// docs/wheels.md describes the rules.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_WHEEL_H
#define KPACK_WHEEL_H

#include "kpack/Sha256.h"
#include "kpack/Zip.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kpack {

/// {distribution}-{version}[-{build}]-{python}-{abi}-{platform}.whl
struct WheelName {
  std::string Distribution; ///< as in the file name ("my_pkg")
  std::string Version;
  std::string Build; ///< empty if none; starts with a digit
  std::string Python, Abi, Platform;

  /// Parses a file name (a path's directory part is ignored). Errors name
  /// the file and the expected form.
  static llvm::Expected<WheelName> parse(llvm::StringRef FileName);
  std::string fileName() const;
  /// "{python}-{abi}-{platform}"
  std::string tags() const;
  /// "{distribution}-{version}"
  std::string nameVersion() const;
  std::string distInfoDir() const { return nameVersion() + ".dist-info"; }
  std::string dataDir() const { return nameVersion() + ".data"; }
};

/// PEP 503: runs of '-', '_' and '.' become one '-', lowercased
/// ("My.Pkg__x" -> "my-pkg-x"). Two names denote the same project iff their
/// normalised forms are equal.
std::string normalizeDistributionName(llvm::StringRef Name);
/// The form file names use (binary distribution format): normalised, with
/// '_' for '-' ("My.Pkg-x" -> "my_pkg_x").
std::string wheelFileDistributionName(llvm::StringRef Name);
/// A valid project name (PEP 508): ASCII letters and digits, with '.', '_',
/// '-' inside.
bool isValidDistributionName(llvm::StringRef Name);

/// A target ID as a name component, Separator between its parts: the
/// processor's '-' and every ':' become Separator, a feature's '+'/'-'
/// become "plus"/"minus", lowercased ("gfx90a:xnack+" -> "gfx90a_xnack_plus"
/// with '_', "gfx11-generic" -> "gfx11-generic" with '-'). With '_' the
/// result is a valid distribution-name part; with '-' it is an extra name
/// that every normalisation pip has used leaves unchanged (docs/wheels.md).
std::string targetIdNamePart(llvm::StringRef TargetId, char Separator);

/// An email-header file (WHEEL, METADATA): "Field: value" lines (a line
/// starting with whitespace continues the previous one) up to the first
/// empty line, then a body. Fields not edited are written back byte for
/// byte, so METADATA's description and unknown fields survive.
class WheelHeaderFile {
public:
  /// What names the file in errors ("'x.whl': pkg-1.0.dist-info/METADATA").
  static llvm::Expected<WheelHeaderFile> parse(llvm::StringRef Text,
                                               const llvm::Twine &What);
  /// Every value of Field (field names compare case-insensitively), in file
  /// order; continuation lines joined with '\n'.
  std::vector<std::string> getAll(llvm::StringRef Field) const;
  /// The first value of Field.
  std::optional<std::string> get(llvm::StringRef Field) const;
  /// Adds "Field: Value" after the last header.
  void append(llvm::StringRef Field, llvm::StringRef Value);
  /// Replaces the value of the first Field, or appends it.
  void set(llvm::StringRef Field, llvm::StringRef Value);
  /// Drops the headers for which Pred(field, value) holds.
  void removeIf(
      llvm::function_ref<bool(llvm::StringRef, llvm::StringRef)> Pred);
  std::string str() const;

private:
  struct Header {
    std::string Field, Value;
    std::string Raw; ///< original text incl. line endings; empty if edited
  };
  std::vector<Header> Headers;
  std::string Body; ///< from the separating empty line on
  std::string Newline = "\n";
};

/// A Requires-Dist value as the wheels of `kpack split-wheel` (and
/// upstream's) write them: "name == version; extra == \"x\"", each part
/// optional but the name ("rocm-bootstrap").
struct Requirement {
  std::string Name;    ///< as written
  std::string Version; ///< of an exact pin ("=="), else empty
  std::string Extra;   ///< of an `extra == "..."` marker, else empty
};
/// Parses Value; none when it names no distribution.
std::optional<Requirement> parseRequirement(llvm::StringRef Value);

/// One row of RECORD: path, "sha256=<urlsafe base64>" (may be empty), size
/// (may be empty).
struct RecordEntry {
  std::string Path, Hash, Size;
};

/// Parses RECORD (CSV: ',' separated, '"' quoted with "" inside, three
/// fields per row; blank lines ignored).
llvm::Expected<std::vector<RecordEntry>> parseRecord(llvm::StringRef Text,
                                                     const llvm::Twine &What);
/// RECORD text as Python's csv module writes it for `wheel` (fields quoted
/// only when they hold ',', '"', CR or LF; '\n' after each row).
std::string writeRecord(llvm::ArrayRef<RecordEntry> Rows);

/// Bytes in base64's URL-safe alphabet without '=' padding.
std::string urlsafeBase64NoPad(llvm::ArrayRef<uint8_t> Bytes);

/// The RECORD hash of a file, computed while it streams (kpack::Sha256:
/// llvm::SHA256 is wrong from 512 MiB on).
class RecordHasher {
public:
  void update(llvm::ArrayRef<uint8_t> Bytes) {
    Sha.update(Bytes);
    Size += Bytes.size();
  }
  /// The row for Path; the hasher is spent afterwards.
  RecordEntry finish(llvm::StringRef Path);

private:
  Sha256 Sha;
  uint64_t Size = 0;
};
/// The RECORD row of Bytes stored at Path.
RecordEntry recordEntryFor(llvm::StringRef Path, llvm::ArrayRef<uint8_t> Bytes);

/// Strict weak order of entry names as `wheel` writes a wheel: the tree in
/// walk order (in each directory its files sorted, then its subdirectories
/// sorted), everything under DistInfoDir after that, sorted, and
/// DistInfoDir/RECORD last.
bool wheelEntryLess(llvm::StringRef A, llvm::StringRef B,
                    llvm::StringRef DistInfoDir);

/// A wheel opened for reading: the zip validated, its name parsed, exactly
/// one .dist-info directory matching the name, WHEEL (version 1.x),
/// METADATA and RECORD parsed, and RECORD listing exactly the zip's files,
/// each with a hash (RECORD and its signatures excepted). Contents are
/// checked against RECORD as they are read.
class WheelFile {
public:
  static llvm::Expected<WheelFile> open(llvm::StringRef Path);
  /// The same for the wheel in Buffer, whose identifier is its path (its
  /// file name is parsed, and it names the wheel in errors).
  static llvm::Expected<WheelFile>
  openBuffer(std::unique_ptr<llvm::MemoryBuffer> Buffer);

  const ZipReader &zip() const { return *Zip; }
  const WheelName &name() const { return Name; }
  llvm::StringRef path() const { return Path; }
  /// The .dist-info directory as it appears in the wheel.
  llvm::StringRef distInfoDir() const { return DistInfo; }
  /// The .data directory's name (it need not exist).
  std::string dataDir() const;
  const WheelHeaderFile &wheelFile() const { return Wheel; }
  const WheelHeaderFile &metadata() const { return Metadata; }
  /// METADATA's Name and Version.
  llvm::StringRef projectName() const { return ProjectName; }
  llvm::StringRef version() const { return Version; }
  bool rootIsPurelib() const { return RootIsPurelib; }
  /// The Tag: lines of WHEEL.
  std::vector<std::string> tags() const { return Wheel.getAll("Tag"); }

  /// Is the entry RECORD itself or one of its signatures (RECORD.jws,
  /// RECORD.p7s), which RECORD does not hash?
  bool isRecordFile(llvm::StringRef EntryName) const;

  /// Streams the entry to Sink (null: only checked) and checks it against
  /// RECORD (sha256 and size); returns its RECORD row (for the same path).
  llvm::Expected<RecordEntry> readVerified(
      const ZipEntry &E,
      llvm::function_ref<llvm::Error(llvm::ArrayRef<uint8_t>)> Sink) const;

private:
  WheelFile() = default;
  static llvm::Expected<WheelFile> load(llvm::StringRef Path, WheelName Name,
                                        ZipReader Zip);

  std::string Path;
  std::optional<ZipReader> Zip;
  WheelName Name;
  std::string DistInfo, ProjectName, Version;
  WheelHeaderFile Wheel, Metadata;
  llvm::StringMap<RecordEntry> Record;
  bool RootIsPurelib = false;
};

} // namespace kpack

#endif

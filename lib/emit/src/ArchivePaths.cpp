//===- ArchivePaths.cpp - Archive names and search paths ------------------===//

#include "kpack/ArchivePaths.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

std::string kpack::perTargetArchiveName(StringRef KernelName,
                                        StringRef TargetId) {
  return (KernelName + "_" + TargetId + ".kpack").str();
}

std::string kpack::perTargetArchivePath(StringRef Dir, StringRef KernelName,
                                        StringRef TargetId) {
  SmallString<256> P(Dir);
  sys::path::append(P, perTargetArchiveName(KernelName, TargetId));
  return std::string(P);
}

std::string kpack::absolutePath(StringRef Path) {
  SmallString<256> P(Path);
  sys::fs::make_absolute(P);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

std::string kpack::searchPathFromBinary(StringRef BinaryPath,
                                        StringRef ArchivePath) {
  std::string FromDir = sys::path::parent_path(absolutePath(BinaryPath)).str();
  std::string To = absolutePath(ArchivePath);
  SmallVector<StringRef, 16> From(sys::path::begin(FromDir),
                                  sys::path::end(FromDir));
  SmallVector<StringRef, 16> Dest(sys::path::begin(To), sys::path::end(To));
  // The archive's file name always stays in the result.
  size_t Common = 0;
  while (Common < From.size() && Common + 1 < Dest.size() &&
         From[Common] == Dest[Common])
    ++Common;
  SmallString<256> Rel;
  for (size_t I = Common; I < From.size(); ++I)
    sys::path::append(Rel, "..");
  for (size_t I = Common; I < Dest.size(); ++I)
    sys::path::append(Rel, Dest[I]);
  return std::string(Rel);
}

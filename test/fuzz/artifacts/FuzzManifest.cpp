//===- FuzzManifest.cpp - Fuzz the artifact manifest reader ---------------===//
//
// Input: the bytes of an artifact_manifest.txt. They are written into a
// scratch artifact (directories lib/, lib/sub/, bin/, a file lib/x, a
// symlink out/ to the scratch directory's parent and a symlink lib/up to
// ../bin), read with readArtifactManifest (MissingPrefix::Error and Skip),
// and every accepted prefix is walked with listTree, as split and recombine
// do. Besides any crash, sanitizer report or leak (a walker recursing for
// ever overflows the stack), a finding is an accepted prefix that is not a
// plain relative path of real directories of the artifact: a control byte,
// an absolute path, a ".", ".." or empty component, a symlink or a
// non-directory on the way.
//
//===----------------------------------------------------------------------===//

#include "kpack/ArtifactTree.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace {

std::string Scratch, Artifact;

void removeScratch() {
  if (!Scratch.empty())
    (void)sys::fs::remove_directories(Scratch);
}

bool setUp() {
  SmallString<128> Dir;
  if (sys::fs::createUniqueDirectory("kpack-fuzz-manifest", Dir))
    return false;
  Scratch = Dir.str().str();
  Artifact = Scratch + "/a";
  for (const char *D : {"", "/lib", "/lib/sub", "/bin"})
    if (sys::fs::create_directory(Artifact + D))
      return false;
  if (FILE *F = std::fopen((Artifact + "/lib/x").c_str(), "w"))
    std::fclose(F);
  else
    return false;
  if (::symlink("..", (Artifact + "/out").c_str()) != 0 ||
      ::symlink("../bin", (Artifact + "/lib/up").c_str()) != 0)
    return false;
  std::atexit(removeScratch);
  return true;
}

/// What every accepted prefix must be: components that are real
/// directories of the artifact, no control byte.
void checkPrefix(const std::string &Prefix) {
  for (char C : Prefix)
    if (static_cast<unsigned char>(C) < 0x20 || C == 0x7f)
      __builtin_trap();
  if (Prefix.empty() || Prefix.front() == '/')
    __builtin_trap();
  SmallVector<StringRef, 8> Parts;
  StringRef(Prefix).split(Parts, '/');
  std::string Path = Artifact;
  for (StringRef Part : Parts) {
    if (Part.empty() || Part == "." || Part == "..")
      __builtin_trap();
    Path += "/" + Part.str();
    struct stat St;
    if (::lstat(Path.c_str(), &St) != 0 || !S_ISDIR(St.st_mode))
      __builtin_trap();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  static bool Ready = setUp();
  if (!Ready)
    abort();
  std::string Manifest = Artifact + "/" + kpack::ArtifactManifestName.str();
  FILE *F = std::fopen(Manifest.c_str(), "wb");
  if (!F || std::fwrite(Data, 1, Size, F) != Size || std::fclose(F) != 0)
    abort();
  for (kpack::MissingPrefix M :
       {kpack::MissingPrefix::Error, kpack::MissingPrefix::Skip}) {
    Expected<std::vector<std::string>> Prefixes =
        kpack::readArtifactManifest(Artifact, M);
    if (!Prefixes) {
      consumeError(Prefixes.takeError());
      continue;
    }
    for (const std::string &P : *Prefixes) {
      checkPrefix(P);
      Expected<std::vector<kpack::TreeEntry>> Tree =
          kpack::listTree(Artifact + "/" + P);
      if (!Tree)
        consumeError(Tree.takeError());
    }
  }
  return 0;
}

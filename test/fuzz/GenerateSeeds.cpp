//===- GenerateSeeds.cpp - Seed corpora for the runtime fuzzers -----------===//
//
// usage: kpack_fuzz_seeds <dir>  -> <dir>/archive/*.kpack, <dir>/metadata/*
//
//===----------------------------------------------------------------------===//

#include "ArchiveBuilder.h"

#include <cstdio>
#include <string>
#include <sys/stat.h>

using namespace kpack_test;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output dir>\n", argv[0]);
    return 2;
  }
  const std::string Root = argv[1];
  for (const std::string &D : {Root, Root + "/archive", Root + "/metadata"})
    ::mkdir(D.c_str(), 0755);

  struct Variant {
    const char *Name;
    const char *Scheme;
    bool FrameExtension;
  };
  for (const Variant &V : {Variant{"none", "none", false},
                           Variant{"zstd", "zstd-per-kernel", false},
                           Variant{"zstd_ext", "zstd-per-kernel", true}}) {
    ArchiveSpec Spec;
    Spec.Scheme = V.Scheme;
    Spec.FrameExtension = V.FrameExtension;
    Spec.Entries = {{"lib/a.so#0", "gfx1100", payload("a0", 200)},
                    {"lib/a.so#0", "gfx1101", payload("a1", 120)},
                    {"lib/a.so#1", "gfx1100", payload("b0", 90)}};
    if (!writeFile(Root + "/archive/" + V.Name + ".kpack",
                   buildArchive(Spec))) {
      std::fprintf(stderr, "error: cannot write seeds to %s\n", Root.c_str());
      return 1;
    }
  }
  // Format version 2: two segments, entries compressed against none, one
  // or both of them.
  {
    ArchiveSpec Spec;
    Spec.Scheme = "zstd-shared-segments";
    Bytes A = payload("seg-a", 300), B = payload("seg-b", 200);
    Spec.Segments = {A, B};
    Bytes Both = A;
    Both.insert(Both.end(), B.begin(), B.end());
    Spec.Entries = {{"lib/a.so#0", "gfx1100", Both},
                    {"lib/a.so#0", "gfx1101", A},
                    {"lib/a.so#1", "gfx1100", payload("b0", 90)}};
    Spec.EntrySegments = {{0, 1}, {0}, {}};
    if (!writeFile(Root + "/archive/shared.kpack", buildArchive(Spec))) {
      std::fprintf(stderr, "error: cannot write seeds to %s\n", Root.c_str());
      return 1;
    }
    // The malformed corpus's wrapping ordinal (issue 18, item 1): 2^64 - 1
    // on an entry with segments and on one without.
    ArchiveParts Parts = buildParts(Spec);
    Parts.Toc["toc"]["lib/a.so#0"]["gfx1100"]["ordinal"] = ~uint64_t(0);
    Parts.Toc["toc"]["lib/a.so#1"]["gfx1100"]["ordinal"] = ~uint64_t(0);
    if (!writeFile(Root + "/archive/shared_ordinal_max.kpack",
                   serialize(Parts))) {
      std::fprintf(stderr, "error: cannot write seeds to %s\n", Root.c_str());
      return 1;
    }
  }
  bool Ok = writeFile(Root + "/metadata/pattern",
                      hipkMetadata("lib/libfoo.so",
                                   {"../.kpack/foo_@GFXARCH@.kpack"})) &&
            writeFile(Root + "/metadata/two_paths",
                      hipkMetadata("bin/app", {"/opt/a.kpack", "b.kpack"}));
  if (!Ok) {
    std::fprintf(stderr, "error: cannot write seeds to %s\n", Root.c_str());
    return 1;
  }
  return 0;
}

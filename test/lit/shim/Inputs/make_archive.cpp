// Test helper: writes a .kpack archive with kpack_format's ArchiveWriter.
//   make_archive OUT.kpack KEY TARGET=CODE_OBJECT [TARGET=CODE_OBJECT...]
#include "kpack/ArchiveWriter.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

int main(int Argc, char **Argv) {
  if (Argc < 4) {
    std::fprintf(stderr, "usage: make_archive OUT KEY TARGET=FILE...\n");
    return 1;
  }
  kpack::ArchiveWriterOptions Opts;
  Opts.GroupName = "test";
  Opts.GfxArchFamily = "test";
  kpack::ArchiveWriter W(Opts);
  for (int I = 3; I < Argc; ++I) {
    std::string Arg = Argv[I];
    size_t Eq = Arg.find('=');
    if (Eq == std::string::npos) {
      std::fprintf(stderr, "error: expected TARGET=FILE, got '%s'\n", Argv[I]);
      return 1;
    }
    std::ifstream In(Arg.substr(Eq + 1), std::ios::binary);
    if (!In) {
      std::fprintf(stderr, "error: cannot read '%s'\n", Arg.c_str() + Eq + 1);
      return 1;
    }
    std::vector<uint8_t> Bytes((std::istreambuf_iterator<char>(In)),
                               std::istreambuf_iterator<char>());
    if (kpack::Status S = W.addEntry(Argv[2], Arg.substr(0, Eq),
                                     kpack::EntrySource::fromOwnedBytes(Bytes))) {
      std::fprintf(stderr, "error: %s\n", S.message().c_str());
      return 1;
    }
  }
  if (kpack::Status S = W.write(Argv[1])) {
    std::fprintf(stderr, "error: %s\n", S.message().c_str());
    return 1;
  }
  return 0;
}

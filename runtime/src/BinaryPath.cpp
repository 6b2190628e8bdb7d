//===- BinaryPath.cpp - Which loaded file holds an address ----------------===//
//
// dladdr only knows symbols and dl_iterate_phdr only loaded ELF objects'
// segments by name; /proc/self/maps names the file behind any mapped byte,
// which is what a HIPK wrapper's metadata pointer needs.
//
//===----------------------------------------------------------------------===//

#include "kpack/LoaderCache.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace kpack {

Status discoverBinaryPath(const void *Address, std::string &Path,
                            uint64_t &Offset) {
  std::FILE *Maps = std::fopen("/proc/self/maps", "re");
  if (!Maps)
    return Status(KPACK_ERROR_PATH_DISCOVERY_FAILED,
                    "cannot read /proc/self/maps");
  const uintptr_t Addr = reinterpret_cast<uintptr_t>(Address);
  char *Line = nullptr;
  size_t Capacity = 0;
  Status Result(KPACK_ERROR_PATH_DISCOVERY_FAILED,
                  "address is not in a file-backed mapping");
  while (getline(&Line, &Capacity, Maps) > 0) {
    uintptr_t Start, End;
    uint64_t FileOffset;
    int PathStart = 0;
    // start-end perms offset dev inode path
    if (std::sscanf(Line,
                    "%" SCNxPTR "-%" SCNxPTR " %*s %" SCNx64 " %*s %*s %n",
                    &Start, &End, &FileOffset, &PathStart) != 3 ||
        PathStart == 0)
      continue;
    if (Addr < Start || Addr >= End)
      continue;
    std::string File(Line + PathStart);
    while (!File.empty() && (File.back() == '\n' || File.back() == ' '))
      File.pop_back();
    if (File.empty() || File[0] != '/')
      break; // anonymous, [heap], [stack], ...
    Path = std::move(File);
    Offset = FileOffset + (Addr - Start);
    Result = Status::ok();
    break;
  }
  std::free(Line);
  std::fclose(Maps);
  return Result;
}

} // namespace kpack

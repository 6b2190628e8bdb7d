//===- WindowsRuntimeTest.cpp - rocm_kpack.dll's Windows semantics --------===//
//
// Built by the Windows build only (cmake/windows, run under wine64) and linked
// against rocm_kpack.dll through its import library: FORMAT.md §3.4 and seed
// 001's Windows rules through the C API. UTF-8 file names with non-ASCII
// characters (UTF-16 at the system call), ';'-separated ROCM_KPACK_PATH,
// kpack_discover_binary_path through GetModuleHandleExW, Windows path
// spellings relative to the binary, the VirtualQuery bound on metadata, and
// archives read through a read-only mapping.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/SearchPaths.h"
#include "rocm_kpack/kpack.h"

#include <gtest/gtest.h>

#include <windows.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <string>
#include <vector>

using namespace kpack_test;

namespace {

std::string narrow(const std::wstring &W) {
  int N = WideCharToMultiByte(CP_UTF8, 0, W.c_str(), -1, nullptr, 0, nullptr,
                              nullptr);
  std::string S(static_cast<size_t>(N), '\0');
  WideCharToMultiByte(CP_UTF8, 0, W.c_str(), -1, S.data(), N, nullptr,
                      nullptr);
  S.resize(S.size() - 1);
  return S;
}

std::string backslashes(std::string P) {
  for (char &C : P)
    if (C == '/')
      C = '\\';
  return P;
}

class WindowsRuntime : public ::testing::Test {
protected:
  void SetUp() override { clearEnvironment(); }
  void TearDown() override { clearEnvironment(); }
  static void clearEnvironment() {
    for (const char *Var : kpack::KpackEnvironmentVariables)
      unsetenv(Var);
  }

  /// An archive at Dir/<Name> offering gfx1100 with "<Key>" holding Tag.
  std::string archive(const std::string &Name, const std::string &Key,
                      const std::string &Tag) {
    ArchiveSpec Spec;
    Spec.Family = "gfx1100";
    Spec.Arches = {"gfx1100"};
    Spec.Entries = {{Key, "gfx1100", payload(Tag, 300)}};
    return Dir.write(Name, buildArchive(Spec));
  }

  kpack_error_t load(const std::string &BinaryPath,
                     const std::vector<std::string> &SearchPaths,
                     std::string &Out) {
    Bytes Meta = hipkMetadata("bin/app.exe", SearchPaths);
    kpack_cache_t Cache = nullptr;
    EXPECT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
    const char *Arches[] = {"amdgcn-amd-amdhsa--gfx1100"};
    void *Data = nullptr;
    size_t Size = 0;
    kpack_error_t Err = kpack_load_code_object(
        Cache, Meta.data(), BinaryPath.c_str(), 0, Arches, 1, &Data, &Size);
    if (Err == KPACK_SUCCESS) {
      Out.assign(static_cast<const char *>(Data), Size);
      kpack_free_code_object(Data);
    }
    kpack_cache_destroy(Cache);
    return Err;
  }
  static std::string str(const Bytes &B) { return std::string(B.begin(), B.end()); }

  TempDir Dir;
};

// A directory and archive name outside ASCII (UTF-8 in the API, UTF-16 at
// CreateFileW): open, enumerate, and load through an embedded relative path
// and through ROCM_KPACK_PATH.
TEST_F(WindowsRuntime, NonAsciiPaths) {
  const std::string Sub = "d\xC3\xA9j\xC3\xA0-\xE6\x96\x87\xE5\xAD\x97"; // déjà-文字
  const std::string Path =
      archive(Sub + "/.kpack/app_\xCE\xB1.kpack", "bin/app.exe#0", "alpha"); // α
  kpack_archive_t A = nullptr;
  ASSERT_EQ(kpack_open(Path.c_str(), &A), KPACK_SUCCESS);
  size_t Count = 0;
  EXPECT_EQ(kpack_get_architecture_count(A, &Count), KPACK_SUCCESS);
  EXPECT_EQ(Count, 1u);
  kpack_close(A);

  std::vector<std::string> Seen;
  ASSERT_EQ(kpack_enumerate_architectures(
                Path.c_str(),
                [](const char *Arch, void *User) {
                  static_cast<std::vector<std::string> *>(User)->push_back(Arch);
                  return true;
                },
                &Seen),
            KPACK_SUCCESS);
  EXPECT_EQ(Seen, std::vector<std::string>{"gfx1100"});

  const std::string Binary = Dir.write(Sub + "/bin/app.exe", Bytes{'M', 'Z'});
  std::string Out;
  ASSERT_EQ(load(Binary, {"../.kpack/app_\xCE\xB1.kpack"}, Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("alpha", 300)));

  setenv("ROCM_KPACK_PATH", Path.c_str(), 1);
  ASSERT_EQ(load(Dir.file("elsewhere/app.exe"), {"nothing.kpack"}, Out),
            KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("alpha", 300)));
}

// ROCM_KPACK_PATH and ROCM_KPACK_PATH_PREFIX are ';'-separated; ':' is part
// of a drive-letter path, not a separator.
TEST_F(WindowsRuntime, PathListsAreSemicolonSeparated) {
  const std::string First = backslashes(archive("a/first.kpack", "bin/app.exe#0", "first"));
  const std::string Second = archive("b/second.kpack", "bin/other.exe#0", "second");
  ASSERT_EQ(First.substr(1, 2), ":\\") << First; // a drive-letter path
  std::string Out;
  setenv("ROCM_KPACK_PATH", ("C:\\nonexistent\\x.kpack;;" + Second + ";" + First).c_str(), 1);
  ASSERT_EQ(load(Dir.file("bin/app.exe"), {"nothing.kpack"}, Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("first", 300)));

  // One item only: the whole string is one (nonexistent) path.
  setenv("ROCM_KPACK_PATH", (Second + ":" + First).c_str(), 1);
  EXPECT_EQ(load(Dir.file("bin/app.exe"), {"nothing.kpack"}, Out),
            KPACK_ERROR_ARCHIVE_NOT_FOUND);

  unsetenv("ROCM_KPACK_PATH");
  setenv("ROCM_KPACK_PATH_PREFIX", (Second + ";" + First).c_str(), 1);
  ASSERT_EQ(load(Dir.file("bin/app.exe"), {"nothing.kpack"}, Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("first", 300)));
}

// A binary path in Windows spelling (backslashes, drive letter): relative
// search paths resolve against its directory; absolute Windows paths are
// taken as they are.
TEST_F(WindowsRuntime, WindowsSpellingsOfBinaryAndSearchPaths) {
  const std::string Path = archive(".kpack/app_gfx1100.kpack", "bin/app.exe#0", "win");
  const std::string Binary = backslashes(Dir.file("bin/app.exe"));
  std::string Out;
  ASSERT_EQ(load(Binary, {"..\\.kpack\\app_@GFXARCH@.kpack"}, Out), KPACK_SUCCESS);
  EXPECT_EQ(Out, str(payload("win", 300)));
  ASSERT_EQ(load(Binary, {"../.kpack/app_@GFXARCH@.kpack"}, Out), KPACK_SUCCESS);
  ASSERT_EQ(load("Z:\\nowhere\\app.exe", {backslashes(Path)}, Out), KPACK_SUCCESS);
  ASSERT_EQ(load("Z:\\nowhere\\app.exe", {Path}, Out), KPACK_SUCCESS);
  EXPECT_EQ(load("Z:\\nowhere\\app.exe", {"app_@GFXARCH@.kpack"}, Out),
            KPACK_ERROR_ARCHIVE_NOT_FOUND);
}

// kpack_discover_binary_path: GetModuleHandleExW(FROM_ADDRESS) +
// GetModuleFileNameW; the offset is the address's offset in the image.
TEST_F(WindowsRuntime, DiscoverBinaryPath) {
  char Path[MAX_PATH * 4];
  size_t Offset = 0;
  // An address in rocm_kpack.dll.
  ASSERT_EQ(kpack_discover_binary_path(reinterpret_cast<const void *>(&kpack_open),
                                       Path, sizeof(Path), &Offset),
            KPACK_SUCCESS);
  wchar_t Dll[MAX_PATH];
  HMODULE Module = GetModuleHandleW(L"rocm_kpack.dll");
  ASSERT_NE(Module, nullptr);
  ASSERT_GT(GetModuleFileNameW(Module, Dll, MAX_PATH), 0u);
  EXPECT_EQ(std::string(Path), narrow(Dll));
  EXPECT_EQ(Offset, static_cast<size_t>(
                        reinterpret_cast<uintptr_t>(&kpack_open) -
                        reinterpret_cast<uintptr_t>(Module)));

  // Read-only data of the executable (where a wrapper's .kpackrf would be).
  static const char InExe[] = "in the executable";
  ASSERT_EQ(kpack_discover_binary_path(InExe, Path, sizeof(Path), nullptr),
            KPACK_SUCCESS);
  wchar_t Exe[MAX_PATH];
  ASSERT_GT(GetModuleFileNameW(nullptr, Exe, MAX_PATH), 0u);
  EXPECT_EQ(std::string(Path), narrow(Exe));

  EXPECT_EQ(kpack_discover_binary_path(InExe, Path, 4, nullptr),
            KPACK_ERROR_INVALID_ARGUMENT);
  int OnStack = 0;
  EXPECT_EQ(kpack_discover_binary_path(&OnStack, Path, sizeof(Path), nullptr),
            KPACK_ERROR_PATH_DISCOVERY_FAILED);
  std::vector<char> Heap(64);
  EXPECT_EQ(kpack_discover_binary_path(Heap.data(), Path, sizeof(Path), nullptr),
            KPACK_ERROR_PATH_DISCOVERY_FAILED);
}

// The metadata parse is bounded by what VirtualQuery reports readable: a
// map whose announced string runs into a PAGE_NOACCESS page is
// INVALID_METADATA, not an access violation; metadata ending right at the
// boundary loads.
TEST_F(WindowsRuntime, MetadataBoundedByVirtualQuery) {
  archive(".kpack/app.kpack", "bin/app.exe#0", "bounded");
  SYSTEM_INFO Info;
  GetSystemInfo(&Info);
  const size_t Page = Info.dwPageSize;
  auto *Region = static_cast<unsigned char *>(
      VirtualAlloc(nullptr, 2 * Page, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE));
  ASSERT_NE(Region, nullptr);
  DWORD Old = 0;
  ASSERT_TRUE(VirtualProtect(Region + Page, Page, PAGE_NOACCESS, &Old));

  Bytes Meta = hipkMetadata("bin/app.exe", {"../.kpack/app.kpack"});
  unsigned char *At = Region + Page - Meta.size();
  std::memcpy(At, Meta.data(), Meta.size());
  kpack_cache_t Cache = nullptr;
  ASSERT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
  const char *Arches[] = {"gfx1100"};
  void *Data = nullptr;
  size_t Size = 0;
  const std::string Binary = Dir.file("bin/app.exe");
  ASSERT_EQ(kpack_load_code_object(Cache, At, Binary.c_str(), 0, Arches, 1,
                                   &Data, &Size),
            KPACK_SUCCESS);
  EXPECT_EQ(std::string(static_cast<char *>(Data), Size),
            str(payload("bounded", 300)));
  kpack_free_code_object(Data);

  // Cut short by one byte: the parse would need the protected page.
  At = Region + Page - (Meta.size() - 1);
  std::memcpy(At, Meta.data(), Meta.size() - 1);
  EXPECT_EQ(kpack_load_code_object(Cache, At, Binary.c_str(), 0, Arches, 1,
                                   &Data, &Size),
            KPACK_ERROR_INVALID_METADATA);
  EXPECT_EQ(kpack_load_code_object(Cache, Region + Page, Binary.c_str(), 0,
                                   Arches, 1, &Data, &Size),
            KPACK_ERROR_INVALID_METADATA);
  kpack_cache_destroy(Cache);
  VirtualFree(Region, 0, MEM_RELEASE);
}

// Archives are read through a read-only mapping: error codes for what cannot
// be one, and an archive stays readable while the file is held open by it
// (Windows refuses to truncate a mapped file).
TEST_F(WindowsRuntime, MappedArchives) {
  kpack_archive_t A = nullptr;
  EXPECT_EQ(kpack_open(Dir.file("missing.kpack").c_str(), &A),
            KPACK_ERROR_FILE_NOT_FOUND);
  EXPECT_EQ(kpack_open(Dir.file("no/such/dir/x.kpack").c_str(), &A),
            KPACK_ERROR_FILE_NOT_FOUND);
  EXPECT_EQ(kpack_open(Dir.write("empty.kpack", Bytes{}).c_str(), &A),
            KPACK_ERROR_INVALID_FORMAT);
  EXPECT_EQ(kpack_open(Dir.path().c_str(), &A), KPACK_ERROR_IO_ERROR);

  const std::string Path = archive("mapped.kpack", "bin/app.exe#0", "mapped");
  ASSERT_EQ(kpack_open(Path.c_str(), &A), KPACK_SUCCESS);
  HANDLE H = CreateFileA(Path.c_str(), GENERIC_WRITE,
                         FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                         nullptr, OPEN_EXISTING, 0, nullptr);
  ASSERT_NE(H, INVALID_HANDLE_VALUE);
  LARGE_INTEGER Zero{};
  ASSERT_TRUE(SetFilePointerEx(H, Zero, nullptr, FILE_BEGIN));
  EXPECT_FALSE(SetEndOfFile(H)); // ERROR_USER_MAPPED_FILE
  CloseHandle(H);
  void *Data = nullptr;
  size_t Size = 0;
  ASSERT_EQ(kpack_get_kernel(A, "bin/app.exe#0", "gfx1100", &Data, &Size),
            KPACK_SUCCESS);
  EXPECT_EQ(std::string(static_cast<char *>(Data), Size),
            str(payload("mapped", 300)));
  kpack_free_kernel(Data);
  kpack_close(A);
}

// Issue 25, item 5 on Windows: what is not a disk file where an archive is
// looked for is refused without waiting and without being read. A named
// pipe lives in \\.\pipe\ only (no directory holds one), which a
// ROCM_KPACK_PATH item or kpack_open's path can name; a device (NUL, CON)
// can be named anywhere. CreateFileW does not wait on either; GetFileType
// says what it opened. Each call runs on a thread of its own, so that a
// hang fails the test (the pipe is then closed, which ends a read).
TEST_F(WindowsRuntime, PipeAndDeviceAtASearchPath) {
  const std::string Pipe =
      "\\\\.\\pipe\\kpack-test-" + std::to_string(GetCurrentProcessId());
  HANDLE Server = CreateNamedPipeA(Pipe.c_str(), PIPE_ACCESS_OUTBOUND,
                                   PIPE_TYPE_BYTE | PIPE_WAIT,
                                   PIPE_UNLIMITED_INSTANCES, 4096, 4096, 0,
                                   nullptr);
  ASSERT_NE(Server, INVALID_HANDLE_VALUE);
  const std::string Real = archive("real.kpack", "bin/app.exe#0", "real");
  auto EndsInTime = [&](const std::function<void()> &Body) {
    std::future<void> Run = std::async(std::launch::async, Body);
    if (Run.wait_for(std::chrono::seconds(10)) == std::future_status::ready)
      return;
    ADD_FAILURE() << "waits on the pipe or device";
    CloseHandle(Server);
    Server = INVALID_HANDLE_VALUE;
    Run.wait();
  };
  for (const std::string &Path : {Pipe, std::string("NUL")}) {
    EndsInTime([&] {
      kpack_archive_t A = nullptr;
      EXPECT_EQ(kpack_open(Path.c_str(), &A), KPACK_ERROR_IO_ERROR) << Path;
    });
    EndsInTime([&] {
      std::string Out;
      setenv("ROCM_KPACK_PATH", (Path + ";" + Real).c_str(), 1);
      EXPECT_EQ(load(Dir.file("bin/app.exe"), {"nothing.kpack"}, Out),
                KPACK_SUCCESS)
          << Path;
      EXPECT_EQ(Out, str(payload("real", 300)));
      setenv("ROCM_KPACK_PATH", Path.c_str(), 1);
      EXPECT_EQ(load(Dir.file("bin/app.exe"), {"nothing.kpack"}, Out),
                KPACK_ERROR_ARCHIVE_NOT_FOUND)
          << Path;
      unsetenv("ROCM_KPACK_PATH");
      // An embedded search path naming it.
      EXPECT_EQ(load(Dir.file("bin/app.exe"), {Path, Real}, Out), KPACK_SUCCESS)
          << Path;
    });
  }
  if (Server != INVALID_HANDLE_VALUE)
    CloseHandle(Server);
}

// HIPK metadata as a PE image carries it (FORMAT.md §3.4): msgpack in a
// ".kpackrf" section of the EXE, {"kernel_name": "bin/app.exe",
// "kpack_search_paths": ["kpackrf-test.kpack"]}, ending where the section's
// data ends. What CLR does with a HIPK wrapper's pointer: discover the binary,
// load with the section's bytes as the metadata.
__attribute__((section(".kpackrf"), used)) const unsigned char KpackRef[] = {
    0x82, 0xab, 'k', 'e', 'r', 'n', 'e', 'l', '_', 'n', 'a', 'm', 'e',
    0xab, 'b', 'i', 'n', '/', 'a', 'p', 'p', '.', 'e', 'x', 'e',
    0xb2, 'k', 'p', 'a', 'c', 'k', '_', 's', 'e', 'a', 'r', 'c', 'h', '_',
    'p', 'a', 't', 'h', 's', 0x91,
    0xb2, 'k', 'p', 'a', 'c', 'k', 'r', 'f', '-', 't', 'e', 's', 't', '.',
    'k', 'p', 'a', 'c', 'k'};

TEST_F(WindowsRuntime, MetadataInAKpackrfSection) {
  char Path[MAX_PATH * 4];
  ASSERT_EQ(kpack_discover_binary_path(KpackRef, Path, sizeof(Path), nullptr),
            KPACK_SUCCESS);
  wchar_t Exe[MAX_PATH];
  ASSERT_GT(GetModuleFileNameW(nullptr, Exe, MAX_PATH), 0u);
  EXPECT_EQ(std::string(Path), narrow(Exe));
  // The search path is relative to the EXE's directory: nothing is there.
  kpack_cache_t Cache = nullptr;
  ASSERT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
  const char *Arches[] = {"gfx1100"};
  void *Data = nullptr;
  size_t Size = 0;
  EXPECT_EQ(kpack_load_code_object(Cache, KpackRef, Path, 0, Arches, 1, &Data,
                                   &Size),
            KPACK_ERROR_ARCHIVE_NOT_FOUND);
  kpack_cache_destroy(Cache);
  // The same metadata, its search path replaced by ROCM_KPACK_PATH.
  setenv("ROCM_KPACK_PATH",
         archive("x/kpackrf-test.kpack", "bin/app.exe#0", "from-kpackrf").c_str(), 1);
  ASSERT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
  ASSERT_EQ(kpack_load_code_object(Cache, KpackRef, Path, 0, Arches, 1, &Data,
                                   &Size),
            KPACK_SUCCESS);
  EXPECT_EQ(std::string(static_cast<char *>(Data), Size),
            str(payload("from-kpackrf", 300)));
  kpack_free_code_object(Data);
  kpack_cache_destroy(Cache);
}

} // namespace

//===- WindowsShimTest.cpp - rocm_kpack_hip.dll before amdhip64.dll -------===//
//
// Built by the Windows build only (cmake/windows, run under wine64). The test
// EXE is linked as docs/shim.md ("Windows") tells users to link: the shim's
// import library (librocm_kpack_hip.dll.a) ahead of the HIP runtime's
// (libamdhip64.dll.a, here the stand-in). So __hipRegisterFatBinary and
// __hipUnregisterFatBinary are imported from rocm_kpack_hip.dll and every
// other HIP entry point from amdhip64.dll.
//
// Each test runs this EXE again as a child process (KPACK_SHIM_TEST_CHILD)
// whose static constructor registers a HIPK wrapper the way clang's module
// constructor does, with the stand-in's log and dumps enabled; the parent
// reads the child's stderr and the code objects the stand-in received. The
// archive is upstream's test_zstd.kpack (written by upstream's Python writer;
// its README gives the payload sizes): key lib/libhip.so#0 holds 1019 bytes
// for gfx1100, beginning "HIP_KERNEL_GFX1100_", and 619 bytes for gfx1101.
// The payloads are synthetic, not ELF, so the stand-in rejects them after
// dumping them ("not a valid AMDGPU ELF") and exits with its failure status
// 3: the checks below are on what it received.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/Metadata.h"
#include "kpack/Wrapper.h"

#include <gtest/gtest.h>

#include <windows.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
// Imported from rocm_kpack_hip.dll (the shim).
void **__hipRegisterFatBinary(const void *Data);
void __hipUnregisterFatBinary(void **Handle);
// Imported from amdhip64.dll (the stand-in), as clang's module constructor
// calls it; its Dim3 pointers are passed as null.
void __hipRegisterFunction(void **Modules, const void *HostFunction,
                           char *DeviceFunction, const char *DeviceName,
                           unsigned ThreadLimit, void *Tid, void *Bid,
                           void *BlockDim, void *GridDim, int *WSize);
}

using namespace kpack_test;

namespace {

constexpr const char *ChildVariable = "KPACK_SHIM_TEST_CHILD";

// In the image, as clang places the wrapper: the shim finds the binary's
// path from the wrapper's address.
kpack::FatbinWrapper Wrapper{};
char KernelStub;

/// The child: one HIPK registration of code object #0 of "lib/libhip.so"
/// from upstream's archive, one kernel, unregistration, exit.
int childRegister() {
  kpack::KpackMetadata Ref;
  Ref.KernelName = "lib/libhip.so";
  Ref.SearchPaths = {upstreamArchive("test_zstd.kpack")};
  static std::vector<uint8_t> Metadata;
  if (kpack::encodeKpackMetadata(Ref, Metadata)) {
    std::fputs("child: cannot encode the metadata\n", stderr);
    return 2;
  }
  Wrapper.Magic = kpack::HipkMagic;
  Wrapper.Version = kpack::WrapperVersion;
  Wrapper.Binary = Metadata.data();
  Wrapper.Reserved1 = 0;
  void **Handle = __hipRegisterFatBinary(&Wrapper);
  if (!Handle) {
    std::fputs("child: __hipRegisterFatBinary returned NULL\n", stderr);
    return 2;
  }
  static char Name[] = "kernel";
  __hipRegisterFunction(Handle, &KernelStub, Name, Name, ~0u, nullptr,
                        nullptr, nullptr, nullptr, nullptr);
  __hipUnregisterFatBinary(Handle);
  std::fflush(nullptr);
  return 0;
}

// Runs before gtest's main in the child only.
[[maybe_unused]] const bool ChildRan = [] {
  if (const char *Mode = std::getenv(ChildVariable);
      Mode && std::strcmp(Mode, "register") == 0)
    std::exit(childRegister());
  return false;
}();

std::string readFile(const std::string &Path) {
  std::ifstream In(std::filesystem::u8path(Path), std::ios::binary);
  std::ostringstream S;
  S << In.rdbuf();
  return S.str();
}

struct ChildResult {
  DWORD Exit = ~0u;
  std::string Stderr;
};

/// Runs this EXE as the child with its stderr (and stdout) in a file.
ChildResult runChild(const TempDir &Dir) {
  ChildResult R;
  wchar_t Exe[MAX_PATH];
  if (GetModuleFileNameW(nullptr, Exe, MAX_PATH) == 0) {
    ADD_FAILURE() << "GetModuleFileNameW failed";
    return R;
  }
  const std::string LogPath = Dir.file("child-stderr.txt");
  SECURITY_ATTRIBUTES Inherit{sizeof(Inherit), nullptr, TRUE};
  HANDLE Log = CreateFileA(LogPath.c_str(), GENERIC_WRITE, FILE_SHARE_READ,
                           &Inherit, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL,
                           nullptr);
  if (Log == INVALID_HANDLE_VALUE) {
    ADD_FAILURE() << "cannot create " << LogPath;
    return R;
  }
  STARTUPINFOW Startup{};
  Startup.cb = sizeof(Startup);
  Startup.dwFlags = STARTF_USESTDHANDLES;
  Startup.hStdInput = nullptr;
  Startup.hStdOutput = Log;
  Startup.hStdError = Log;
  std::wstring CommandLine = L"\"" + std::wstring(Exe) + L"\"";
  PROCESS_INFORMATION Process{};
  setenv(ChildVariable, "register", 1);
  BOOL Started = CreateProcessW(Exe, CommandLine.data(), nullptr, nullptr,
                                TRUE, 0, nullptr, nullptr, &Startup, &Process);
  unsetenv(ChildVariable);
  CloseHandle(Log);
  if (!Started) {
    ADD_FAILURE() << "CreateProcessW failed: " << GetLastError();
    return R;
  }
  if (WaitForSingleObject(Process.hProcess, 120000) != WAIT_OBJECT_0) {
    ADD_FAILURE() << "the child did not finish within 120 s";
    TerminateProcess(Process.hProcess, 99);
  }
  GetExitCodeProcess(Process.hProcess, &R.Exit);
  CloseHandle(Process.hProcess);
  CloseHandle(Process.hThread);
  R.Stderr = readFile(LogPath);
  return R;
}

bool contains(const std::string &Text, const std::string &Part) {
  return Text.find(Part) != std::string::npos;
}

class ShimDll : public ::testing::Test {
protected:
  void SetUp() override {
    clear();
    setenv("HIP_STANDIN_ACCESS", "eager", 1);
    setenv("HIP_STANDIN_LOG", "1", 1);
    setenv("HIP_STANDIN_DUMP_DIR", Dir.path().c_str(), 1);
  }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char *Var :
         {"ROCM_KPACK_ARCH_OVERRIDE", "ROCM_KPACK_PATH", "ROCM_KPACK_PATH_PREFIX",
          "ROCM_KPACK_DISABLE", "ROCM_KPACK_DEBUG", "HIP_STANDIN_AGENTS",
          "HIP_STANDIN_ACCESS", "HIP_STANDIN_LOG", "HIP_STANDIN_DUMP_DIR"})
      unsetenv(Var);
  }
  TempDir Dir;
};

// The shim turns the HIPK wrapper into a HIPF bundle holding, for each GPU of
// ROCM_KPACK_ARCH_OVERRIDE, that GPU's code object from the archive, labelled
// with its target; the runtime behind it receives only that bundle.
TEST_F(ShimDll, HipkBecomesAHipfBundleForTheAgents) {
  setenv("ROCM_KPACK_ARCH_OVERRIDE", "gfx1100,gfx1101", 1);
  setenv("HIP_STANDIN_AGENTS", "gfx1100,gfx1101", 1);
  ChildResult R = runChild(Dir);
  SCOPED_TRACE(R.Stderr);
  EXPECT_TRUE(contains(R.Stderr, "hip-standin: binary 0 magic HIPF registered"));
  EXPECT_FALSE(contains(R.Stderr, "magic HIPK"));
  EXPECT_FALSE(contains(R.Stderr, "rocm_kpack_hip: error"));
  // The bundle's entries as the stand-in labels them (its own bundle reader).
  EXPECT_TRUE(contains(R.Stderr, "agent gfx1100: code object gfx1100 (1019 "
                                 "bytes) is not a valid AMDGPU ELF"));
  EXPECT_TRUE(contains(R.Stderr, "agent gfx1101: code object gfx1101 (619 "
                                 "bytes) is not a valid AMDGPU ELF"));
  EXPECT_EQ(R.Exit, 3u); // the stand-in's status for the synthetic payloads

  const std::string Gfx1100 = readFile(Dir.file("0.gfx1100.co"));
  const std::string Gfx1101 = readFile(Dir.file("0.gfx1101.co"));
  EXPECT_EQ(Gfx1100.size(), 1019u);
  EXPECT_EQ(Gfx1100.rfind("HIP_KERNEL_GFX1100_", 0), 0u);
  EXPECT_EQ(Gfx1101.size(), 619u);
  EXPECT_NE(Gfx1100.substr(0, 619), Gfx1101);
}

// One GPU: only its code object goes into the bundle.
TEST_F(ShimDll, OneAgentGetsOnlyItsCodeObject) {
  setenv("ROCM_KPACK_ARCH_OVERRIDE", "gfx1101", 1);
  setenv("HIP_STANDIN_AGENTS", "gfx1101", 1);
  ChildResult R = runChild(Dir);
  SCOPED_TRACE(R.Stderr);
  EXPECT_TRUE(contains(R.Stderr, "hip-standin: binary 0 magic HIPF registered"));
  EXPECT_TRUE(contains(R.Stderr, "agent gfx1101: code object gfx1101 (619 "
                                 "bytes) is not a valid AMDGPU ELF"));
  EXPECT_FALSE(contains(R.Stderr, "gfx1100"));
  EXPECT_EQ(readFile(Dir.file("0.gfx1101.co")).size(), 619u);
}

// Windows has no KFD topology: without ROCM_KPACK_ARCH_OVERRIDE the shim
// says so and registers a bundle without device code, the runtime's own
// "no code object for this GPU" path.
TEST_F(ShimDll, WithoutTheOverrideNoGpuIsServed) {
  setenv("HIP_STANDIN_AGENTS", "gfx1100", 1);
  ChildResult R = runChild(Dir);
  SCOPED_TRACE(R.Stderr);
  EXPECT_TRUE(contains(R.Stderr,
                       "rocm_kpack_hip: error: cannot determine the GPU "
                       "targets: ROCM_KPACK_ARCH_OVERRIDE is not set"));
  EXPECT_TRUE(contains(R.Stderr, "hip-standin: binary 0 magic HIPF registered"));
  EXPECT_FALSE(std::filesystem::exists(
      std::filesystem::u8path(Dir.file("0.gfx1100.co"))));
  EXPECT_NE(R.Exit, 0u);
}

} // namespace

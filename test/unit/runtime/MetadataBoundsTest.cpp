//===- MetadataBoundsTest.cpp - The loader never reads past readable memory ===//
//
// kpack_load_code_object gets the metadata pointer without a size. These
// place metadata at the very end of a readable mapping, followed by a
// PROT_NONE page, and point it at memory that is not readable at all: every
// case is KPACK_ERROR_INVALID_METADATA (or a normal search), never a fault.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/SearchPaths.h"
#include "rocm_kpack/kpack.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace kpack_test;

namespace {

class MetadataBoundsTest : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *Var : kpack::KpackEnvironmentVariables)
      unsetenv(Var);
    Page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void *Map = mmap(nullptr, 3 * Page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(Map, MAP_FAILED);
    Region = static_cast<uint8_t *>(Map);
    // [readable][readable][PROT_NONE]
    ASSERT_EQ(mprotect(Region + 2 * Page, Page, PROT_NONE), 0);
    ASSERT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
  }
  void TearDown() override {
    kpack_cache_destroy(Cache);
    munmap(Region, 3 * Page);
  }

  /// Copies Bytes so that they end where the readable memory ends.
  const uint8_t *atEnd(const Bytes &B) {
    uint8_t *Start = Region + 2 * Page - B.size();
    std::memcpy(Start, B.data(), B.size());
    return Start;
  }

  kpack_error_t load(const void *Metadata) {
    const char *Arch = "gfx942";
    void *Data = nullptr;
    size_t Size = 0;
    kpack_error_t E = kpack_load_code_object(Cache, Metadata, "/nonexistent/app",
                                             0, &Arch, 1, &Data, &Size);
    kpack_free_code_object(Data);
    return E;
  }

  size_t Page = 0;
  uint8_t *Region = nullptr;
  kpack_cache_t Cache = nullptr;
};

TEST_F(MetadataBoundsTest, ValidMapEndingAtTheGuardPageIsRead) {
  Bytes Meta = hipkMetadata("app", {"app_@GFXARCH@.kpack"});
  EXPECT_EQ(load(atEnd(Meta)), KPACK_ERROR_ARCHIVE_NOT_FOUND);
}

// The mutation campaign's case: the map header 0x82 became array16 0xdc with
// a count of 0xab6b elements, far more than the bytes before the guard page.
TEST_F(MetadataBoundsTest, Array16HeaderRunningIntoTheGuardPage) {
  Bytes Meta = hipkMetadata("app", {"app_@GFXARCH@.kpack"});
  ASSERT_EQ(Meta[0], 0x82);
  Meta[0] = 0xdc;
  Meta.insert(Meta.begin() + 1, {0xab, 0x6b});
  EXPECT_EQ(load(atEnd(Meta)), KPACK_ERROR_INVALID_METADATA);
}

TEST_F(MetadataBoundsTest, StringRunningIntoTheGuardPage) {
  Bytes Meta = {0x81, 0xdb, 0x00, 0x01, 0x00, 0x00, 'k'}; // str32 of 64 KiB
  EXPECT_EQ(load(atEnd(Meta)), KPACK_ERROR_INVALID_METADATA);
}

TEST_F(MetadataBoundsTest, PointerAtTheGuardPageIsInvalidMetadata) {
  EXPECT_EQ(load(Region + 2 * Page), KPACK_ERROR_INVALID_METADATA);
}

TEST_F(MetadataBoundsTest, WildPointersAreInvalidMetadata) {
  EXPECT_EQ(load(reinterpret_cast<const void *>(uintptr_t(0x100000))),
            KPACK_ERROR_INVALID_METADATA);
  EXPECT_EQ(load(reinterpret_cast<const void *>(uintptr_t(1) << 63)),
            KPACK_ERROR_INVALID_METADATA);
  EXPECT_EQ(load(reinterpret_cast<const void *>(uintptr_t(8))),
            KPACK_ERROR_INVALID_METADATA);
}

TEST_F(MetadataBoundsTest, DebugSaysWhyThePointerWasRefused) {
  kpack_cache_destroy(Cache);
  setenv("ROCM_KPACK_DEBUG", "1", 1);
  ASSERT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
  unsetenv("ROCM_KPACK_DEBUG");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(load(Region + 2 * Page), KPACK_ERROR_INVALID_METADATA);
  std::string Log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(Log.find("kpack: invalid HIPK metadata: kpack metadata pointer "),
            std::string::npos)
      << Log;
  EXPECT_NE(Log.find("does not point into readable memory"), std::string::npos)
      << Log;
}

} // namespace

//===- LoaderLocateTest.cpp - Locating a code object without reading it --===//
//
// LoaderCache::locateCodeObject / readLocated (runtime/), which the shim's
// lazy bundles use: the same search as loadCodeObject, stopping at the TOC
// entry; the code object is read later, with the same bytes.
//
//===----------------------------------------------------------------------===//

#include "kpack/LoaderCache.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

using namespace kpack;

namespace {

KpackMetadata upstreamRef(const std::string &Archive) {
  KpackMetadata Ref;
  Ref.KernelName = "lib/libhip.so";
  Ref.SearchPaths = {std::string(KPACK_UPSTREAM_TESTDATA) + "/" + Archive};
  return Ref;
}

TEST(ShimLoaderLocate, LocatesWithoutReadingThenReadsTheSameBytes) {
  LoaderCache Cache{KpackEnvironment()};
  const KpackMetadata Ref = upstreamRef("test_zstd.kpack");
  LocatedCodeObject Located;
  ASSERT_FALSE(Cache.locateCodeObject(Ref, "/nonexistent/bin/app", 0,
                                      {"gfx1101", "gfx1100"}, Located));
  EXPECT_EQ(Located.Target, "gfx1101");
  EXPECT_EQ(Located.Size, 619u);

  std::vector<uint8_t> Lazy(Located.Size);
  ASSERT_FALSE(Cache.readLocated(Located, [&](size_t N) {
    EXPECT_EQ(N, Lazy.size());
    return static_cast<void *>(Lazy.data());
  }));

  void *Data = nullptr;
  size_t Size = 0;
  ASSERT_FALSE(Cache.loadCodeObject(Ref, "/nonexistent/bin/app", 0,
                                    {"gfx1101"}, Data, Size));
  ASSERT_EQ(Size, Lazy.size());
  EXPECT_EQ(std::memcmp(Data, Lazy.data(), Size), 0);
  std::free(Data);
}

// Locating reads no code object: with every zstd frame of the archive
// damaged (its magic number), the code object is still found, from the TOC
// alone; reading it, or loading it, fails.
TEST(ShimLoaderLocate, LocatingReadsNoFrame) {
  std::ifstream In(std::string(KPACK_UPSTREAM_TESTDATA) + "/test_zstd.kpack",
                   std::ios::binary);
  std::string Image((std::istreambuf_iterator<char>(In)),
                    std::istreambuf_iterator<char>());
  ASSERT_FALSE(Image.empty());
  const std::string FrameMagic = "\x28\xb5\x2f\xfd";
  size_t Damaged = 0;
  for (size_t At = Image.find(FrameMagic); At != std::string::npos;
       At = Image.find(FrameMagic, At + 1), ++Damaged)
    Image[At] = '\0';
  ASSERT_GT(Damaged, 0u);
  char Dir[] = "/tmp/kpack-locate-XXXXXX";
  ASSERT_NE(mkdtemp(Dir), nullptr);
  const std::string Path = std::string(Dir) + "/damaged.kpack";
  std::ofstream(Path, std::ios::binary) << Image;

  KpackMetadata Ref;
  Ref.KernelName = "lib/libhip.so";
  Ref.SearchPaths = {Path};
  LoaderCache Cache{KpackEnvironment()};
  LocatedCodeObject Located;
  EXPECT_FALSE(Cache.locateCodeObject(Ref, "/nonexistent/bin/app", 0,
                                      {"gfx1101"}, Located));
  EXPECT_EQ(Located.Target, "gfx1101");
  EXPECT_EQ(Located.Size, 619u);
  std::vector<uint8_t> Out(619);
  EXPECT_EQ(Cache.readLocated(Located, [&](size_t) {
                  return static_cast<void *>(Out.data());
                }).code(),
            KPACK_ERROR_DECOMPRESSION_FAILED);
  void *Data = nullptr;
  size_t Size = 0;
  EXPECT_EQ(Cache.loadCodeObject(Ref, "/nonexistent/bin/app", 0, {"gfx1101"},
                                 Data, Size)
                .code(),
            KPACK_ERROR_DECOMPRESSION_FAILED);
  EXPECT_EQ(Cache.stats().Loads, 0u);
  std::remove(Path.c_str());
  ::rmdir(Dir);
}

TEST(ShimLoaderLocate, ErrorsAsLoad) {
  LoaderCache Cache{KpackEnvironment()};
  const KpackMetadata Ref = upstreamRef("test_zstd.kpack");
  LocatedCodeObject Located;
  // The errors loadCodeObject gives for the same searches.
  EXPECT_EQ(Cache.locateCodeObject(Ref, "/x/app", 0, {"gfx1030"}, Located)
                .code(),
            KPACK_ERROR_ARCH_NOT_FOUND);
  EXPECT_EQ(Cache.locateCodeObject(Ref, "/x/app", 7, {"gfx1100"}, Located)
                .code(),
            KPACK_ERROR_KERNEL_NOT_FOUND);
  EXPECT_EQ(Cache.locateCodeObject(upstreamRef("no-such.kpack"), "/x/app", 0,
                                   {"gfx1100"}, Located)
                .code(),
            KPACK_ERROR_ARCHIVE_NOT_FOUND);
  EXPECT_EQ(Cache.readLocated(LocatedCodeObject(), [](size_t) {
                  return static_cast<void *>(nullptr);
                }).code(),
            KPACK_ERROR_INVALID_ARGUMENT);
}

} // namespace

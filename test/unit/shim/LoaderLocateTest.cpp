//===- LoaderLocateTest.cpp - Locating a code object without reading it --===//
//
// LoaderCache::locateCodeObject / readLocated (runtime/), which the shim's
// lazy bundles use: the same search as loadCodeObject, stopping at the TOC
// entry; the code object is read later, with the same bytes.
//
//===----------------------------------------------------------------------===//

#include "kpack/LoaderCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
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
  EXPECT_EQ(Cache.stats().Loads, 0u); // nothing decompressed

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

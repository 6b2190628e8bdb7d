//===- PosixRuntimeTest.cpp - librocm_kpack's Linux semantics -------------===//
//
// The OS-facing behaviour of the C API on Linux (kpack/Platform.h's POSIX
// implementation); WindowsRuntimeTest.cpp is its Windows counterpart.
//
//===----------------------------------------------------------------------===//

#include "rocm_kpack/kpack.h"

#include <gtest/gtest.h>

#include <climits>
#include <unistd.h>

namespace {

TEST(DiscoverBinaryPath, FindsTheExecutableAndOffset) {
  char Path[PATH_MAX];
  size_t Offset = 0;
  ASSERT_EQ(
      kpack_discover_binary_path(reinterpret_cast<const void *>(&kpack_open),
                                 Path, sizeof(Path), &Offset),
      KPACK_SUCCESS);
  char Self[PATH_MAX];
  ssize_t N = readlink("/proc/self/exe", Self, sizeof(Self) - 1);
  ASSERT_GT(N, 0);
  Self[N] = '\0';
  EXPECT_STREQ(Path, Self);
  EXPECT_GT(Offset, 0u);
  EXPECT_EQ(kpack_discover_binary_path(
                reinterpret_cast<const void *>(&kpack_open), Path, 4, &Offset),
            KPACK_ERROR_INVALID_ARGUMENT);
  int OnStack = 0;
  EXPECT_EQ(kpack_discover_binary_path(&OnStack, Path, sizeof(Path), nullptr),
            KPACK_ERROR_PATH_DISCOVERY_FAILED);
}

} // namespace

//===- CoreTest.cpp - kpack_core: subsets, search paths, readable memory --===//

#include "kpack/BundleWriter.h"
#include "kpack/Metadata.h"
#include "kpack/ReadableMemory.h"
#include "kpack/SearchPaths.h"
#include "kpack/TargetId.h"
#include "kpack/Wrapper.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

using namespace kpack;
using Strings = std::vector<std::string>;

namespace {

TEST(FeatureSubsets, PowerSetMostSpecificFirst) {
  EXPECT_EQ(featureSubsets("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"),
            (Strings{"gfx942:sramecc+:xnack-", "gfx942:sramecc+",
                     "gfx942:xnack-", "gfx942"}));
  EXPECT_EQ(featureSubsets("gfx900:xnack+"), (Strings{"gfx900:xnack+", "gfx900"}));
  EXPECT_EQ(featureSubsets("gfx1100"), (Strings{"gfx1100"}));
  EXPECT_EQ(featureSubsets("gfx9-4-generic:xnack-"),
            (Strings{"gfx9-4-generic:xnack-", "gfx9-4-generic"}));
}

TEST(FeatureSubsets, TextualOrderIsKept) {
  // The caller's feature order decides the bits; nothing is reordered.
  EXPECT_EQ(featureSubsets("gfx942:xnack-:sramecc+"),
            (Strings{"gfx942:xnack-:sramecc+", "gfx942:xnack-",
                     "gfx942:sramecc+", "gfx942"}));
}

TEST(FeatureSubsets, ThreeFeaturesGiveEightCandidates) {
  Strings S = featureSubsets("gfxX:a+:b+:c+");
  EXPECT_EQ(S, (Strings{"gfxX:a+:b+:c+", "gfxX:a+:b+", "gfxX:a+:c+", "gfxX:a+",
                        "gfxX:b+:c+", "gfxX:b+", "gfxX:c+", "gfxX"}));
}

TEST(FeatureSubsets, TooManyFeaturesYieldTheEntryOnly) {
  std::string Many = "gfxX";
  for (unsigned I = 0; I <= MaxSubsetFeatures; ++I)
    Many += ":f" + std::to_string(I) + "+";
  EXPECT_EQ(featureSubsets(Many), (Strings{Many}));
}

TEST(FeatureSubsets, ShimCandidatesUseTheSameExpansion) {
  std::optional<TargetId> Agent = parseTargetId("gfx942:sramecc+:xnack-");
  ASSERT_TRUE(Agent);
  Strings C = candidateTargetIds(*Agent);
  Strings Native = featureSubsets("gfx942:sramecc+:xnack-");
  Strings Generic = featureSubsets("gfx9-4-generic:sramecc+:xnack-");
  Strings Expected = Native;
  Expected.insert(Expected.end(), Generic.begin(), Generic.end());
  EXPECT_EQ(C, Expected);
}

TEST(TargetIdList, SplitsOnCommasAndColonsKeepingFeatures) {
  Strings Out;
  ASSERT_TRUE(splitTargetIdList("gfx942:sramecc+:xnack-,gfx1100", Out));
  EXPECT_EQ(Out, (Strings{"gfx942:sramecc+:xnack-", "gfx1100"}));
  ASSERT_TRUE(splitTargetIdList("gfx90a:xnack+:gfx1100", Out));
  EXPECT_EQ(Out, (Strings{"gfx90a:xnack+", "gfx1100"}));
  EXPECT_FALSE(splitTargetIdList("xnack+,gfx1100", Out));
}

TEST(SearchPaths, FirstPlaceholderOnly) {
  EXPECT_EQ(expandArchPlaceholder("a/@GFXARCH@/b_@GFXARCH@.kpack", "gfx942"),
            "a/gfx942/b_@GFXARCH@.kpack");
  EXPECT_EQ(expandArchPlaceholder("plain.kpack", "gfx942"), "plain.kpack");
}

TEST(SearchPaths, TemplatesFollowTheEnvironmentRules) {
  KpackEnvironment Env;
  Strings Embedded = {"../kp/x_@GFXARCH@.kpack", "/abs/y.kpack"};
  EXPECT_EQ(searchPathTemplates(Env, Embedded, "/opt/app/bin/app"),
            (Strings{"/opt/app/bin/../kp/x_@GFXARCH@.kpack", "/abs/y.kpack"}));
  EXPECT_EQ(searchPathTemplates(Env, Embedded, "app"),
            (Strings{"./../kp/x_@GFXARCH@.kpack", "/abs/y.kpack"}));
  Env.PathPrefix = {"/p.kpack"};
  EXPECT_EQ(searchPathTemplates(Env, Embedded, "/bin/app"),
            (Strings{"/p.kpack", "/bin/../kp/x_@GFXARCH@.kpack",
                     "/abs/y.kpack"}));
  Env.PathOverride = {"/o.kpack"};
  EXPECT_EQ(searchPathTemplates(Env, Embedded, "/bin/app"),
            (Strings{"/o.kpack"}));
}

TEST(SearchPaths, EnvironmentParsing) {
  setenv("ROCM_KPACK_PATH", ":/a.kpack::/b.kpack:", 1);
  setenv("ROCM_KPACK_PATH_PREFIX", "/p.kpack", 1);
  setenv("ROCM_KPACK_DISABLE", "0", 1);
  setenv("ROCM_KPACK_DEBUG", "yes", 1);
  setenv("ROCM_KPACK_ARCH_OVERRIDE", "gfx942:sramecc+:xnack-,gfx1100", 1);
  KpackEnvironment E = KpackEnvironment::fromProcess();
  EXPECT_EQ(E.PathOverride, (Strings{"/a.kpack", "/b.kpack"}));
  EXPECT_EQ(E.PathPrefix, (Strings{"/p.kpack"}));
  EXPECT_FALSE(E.Disabled);
  EXPECT_TRUE(E.Debug);
  EXPECT_EQ(E.ArchOverride, (Strings{"gfx942:sramecc+:xnack-", "gfx1100"}));
  setenv("ROCM_KPACK_ARCH_OVERRIDE", "xnack+", 1);
  E = KpackEnvironment::fromProcess();
  EXPECT_TRUE(E.ArchOverride.empty());
  EXPECT_TRUE(E.ArchOverrideMalformed);
  for (const char *V : kpack::KpackEnvironmentVariables)
    unsetenv(V);
  EXPECT_FALSE(envFlag("ROCM_KPACK_DEBUG"));
}

TEST(SearchPaths, FeatureTargetNamesKeepTheirColons) {
  // docs/runtime.md, "ROCM_KPACK_PATH": on ':' a piece starting with a
  // feature is the rest of the previous entry.
  EXPECT_EQ(splitPathList("/k/app_gfx90a:xnack+.kpack:/k/b.kpack", ':'),
            (Strings{"/k/app_gfx90a:xnack+.kpack", "/k/b.kpack"}));
  EXPECT_EQ(splitPathList("/k/a_gfx942:sramecc+:xnack-.kpack:/d", ':'),
            (Strings{"/k/a_gfx942:sramecc+:xnack-.kpack", "/d"}));
  EXPECT_EQ(splitPathList("/k/a_gfx90a:xnack-", ':'),
            (Strings{"/k/a_gfx90a:xnack-"}));
  EXPECT_EQ(splitPathList("/k/x_@GFXARCH@.kpack:/d/:", ':'),
            (Strings{"/k/x_@GFXARCH@.kpack", "/d/"}));
  // Only after a non-empty piece, and only the four features.
  EXPECT_EQ(splitPathList("::xnack+.kpack", ':'), (Strings{"xnack+.kpack"}));
  EXPECT_EQ(splitPathList("/a:xnackish:/b", ':'),
            (Strings{"/a", "xnackish", "/b"}));
  EXPECT_EQ(splitPathList("/a:sramecc-:xnack+", ':'),
            (Strings{"/a:sramecc-:xnack+"}));
  // ';' (Windows): ':' separates nothing.
  EXPECT_EQ(splitPathList("C:\\k\\a.kpack;;D:/b_gfx1100.kpack;", ';'),
            (Strings{"C:\\k\\a.kpack", "D:/b_gfx1100.kpack"}));
}

TEST(SearchPaths, DirectoryEntriesNameTheEmbeddedFileNames) {
  char Template[] = "/tmp/kpack-core-dir-XXXXXX";
  ASSERT_NE(mkdtemp(Template), nullptr);
  const std::string Dir = Template;
  KpackEnvironment Env;
  Strings Embedded = {"../.kpack/app_@GFXARCH@.kpack", "/abs/all.kpack",
                      "other/app_@GFXARCH@.kpack"};
  Env.PathOverride = {Dir, "/x/y_@GFXARCH@.kpack", "/not/there/",
                      "/file.kpack"};
  std::vector<SearchTemplate> T =
      searchTemplates(Env, Embedded, "/opt/bin/app");
  Strings Paths;
  for (const SearchTemplate &S : T) {
    Paths.push_back(S.Path);
    EXPECT_EQ(S.From, SearchTemplate::Origin::PathOverride);
  }
  EXPECT_EQ(Paths, (Strings{Dir + "/app_@GFXARCH@.kpack", Dir + "/all.kpack",
                            "/x/y_@GFXARCH@.kpack",
                            "/not/there/app_@GFXARCH@.kpack",
                            "/not/there/all.kpack", "/file.kpack"}));
  EXPECT_EQ(T[0].Entry, Dir);
  Env.PathOverride.clear();
  Env.PathPrefix = {Dir + "/"};
  Paths = searchPathTemplates(Env, Embedded, "/opt/bin/app");
  EXPECT_EQ(Paths, (Strings{Dir + "/app_@GFXARCH@.kpack", Dir + "/all.kpack",
                            "/opt/bin/../.kpack/app_@GFXARCH@.kpack",
                            "/abs/all.kpack",
                            "/opt/bin/other/app_@GFXARCH@.kpack"}));
  rmdir(Template);
}

TEST(SearchPaths, EnvironmentListsJoinFeatureTargets) {
  setenv("ROCM_KPACK_PATH", "/k/app_gfx90a:xnack+.kpack:/k/app_gfx1100.kpack",
         1);
  EXPECT_EQ(KpackEnvironment::fromProcess().PathOverride,
            (Strings{"/k/app_gfx90a:xnack+.kpack", "/k/app_gfx1100.kpack"}));
  unsetenv("ROCM_KPACK_PATH");
}

TEST(Metadata, LinkIdRoundTripsAndIsOptional) {
  KpackMetadata M{"app", {"app_@GFXARCH@.kpack"}};
  std::vector<uint8_t> Bytes;
  ASSERT_FALSE(encodeKpackMetadata(M, Bytes));
  KpackMetadata Out;
  ASSERT_FALSE(decodeKpackMetadata(Bytes.data(), Bytes.size(), Out));
  EXPECT_EQ(Out.LinkId, "");
  EXPECT_EQ(Bytes[0], 0x82); // two keys: what upstream writes
  M.LinkId = "0123456789abcdef0123456789abcdef";
  ASSERT_FALSE(encodeKpackMetadata(M, Bytes));
  EXPECT_EQ(Bytes[0], 0x83);
  ASSERT_FALSE(decodeKpackMetadata(Bytes.data(), Bytes.size(), Out));
  EXPECT_EQ(Out.LinkId, M.LinkId);
  EXPECT_EQ(Out.KernelName, "app");
}

TEST(Metadata, StaleOnlyWhenBothSidesHaveDifferentIds) {
  EXPECT_TRUE(isStaleEntry("aa", "bb"));
  EXPECT_FALSE(isStaleEntry("aa", "aa"));
  EXPECT_FALSE(isStaleEntry("", "bb"));
  EXPECT_FALSE(isStaleEntry("aa", ""));
}

TEST(AgentRequests, AgentThenItsGenericProcessor) {
  auto Requests = [](const char *Agent) {
    return agentRequests(*parseTargetId(Agent));
  };
  EXPECT_EQ(Requests("gfx942:sramecc+:xnack-"),
            (Strings{"gfx942:sramecc+:xnack-", "gfx9-4-generic:sramecc+:xnack-"}));
  EXPECT_EQ(Requests("gfx1101"), (Strings{"gfx1101", "gfx11-generic"}));
  EXPECT_EQ(Requests("gfx90a:xnack+"), (Strings{"gfx90a:xnack+"}));
  EXPECT_EQ(Requests("gfx906:sramecc-:xnack+"),
            (Strings{"gfx906:sramecc-:xnack+", "gfx9-generic:xnack+"}));
}

const char GlobalData[] = "in a loaded segment";

TEST(ReadableMemory, LoadedSegmentsHeapStackAndHoles) {
  // In this executable's read-only segment: readable up to its end.
  EXPECT_GE(readableBytesAt(GlobalData, 1 << 20), sizeof(GlobalData));
  EXPECT_EQ(readableBytesAt(GlobalData, 4), 4u);
  auto Heap = std::make_unique<char[]>(100);
  EXPECT_GE(readableBytesAt(Heap.get(), 1 << 20), 100u);
  int OnStack = 0;
  EXPECT_GE(readableBytesAt(&OnStack, 1 << 20), sizeof(OnStack));
  EXPECT_EQ(readableBytesAt(nullptr, 16), 0u);
  EXPECT_EQ(readableBytesAt(reinterpret_cast<void *>(uintptr_t(0x100000)), 16),
            0u);
  EXPECT_EQ(readableBytesAt(reinterpret_cast<void *>(uintptr_t(1) << 63), 16),
            0u);
}

TEST(ReadableMemory, StopsAtAGuardPage) {
  const size_t Page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void *Map = mmap(nullptr, 3 * Page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(Map, MAP_FAILED);
  auto *P = static_cast<uint8_t *>(Map);
  ASSERT_EQ(mprotect(P + 2 * Page, Page, PROT_NONE), 0);
  EXPECT_EQ(readableBytesAt(P, 1 << 20), 2 * Page);
  EXPECT_EQ(readableBytesAt(P + 2 * Page - 3, 1 << 20), 3u);
  EXPECT_EQ(readableBytesAt(P + 2 * Page, 1 << 20), 0u);
  EXPECT_TRUE(isReadable(P + Page, Page));
  EXPECT_FALSE(isReadable(P + Page, Page + 1));
  munmap(P, 3 * Page);
}

/// Waits for the child of fork() for at most Seconds; kills it then.
/// Returns whether it finished, and its status in Status.
bool childFinished(pid_t Child, int &Status, int Seconds) {
  pid_t Done = 0;
  for (int K = 0;
       K < Seconds * 100 && (Done = waitpid(Child, &Status, WNOHANG)) == 0; ++K)
    usleep(10000);
  if (Done != 0)
    return true;
  kill(Child, SIGKILL);
  waitpid(Child, &Status, 0);
  return false;
}

struct ForkCounts {
  int Hung = 0;   ///< children that did not finish within 10 s (killed)
  int Failed = 0; ///< children whose query went wrong, and failed forks
};

/// Forks Forks times (up to the first hung child) while another thread
/// asks about readable memory; each child asks once itself and exits.
ForkCounts forkWhileAnotherThreadQueries(int Forks) {
  static int Global = 1;
  std::atomic<bool> Stop{false};
  std::thread Querier([&] {
    while (!Stop.load())
      (void)readableBytesAt(&Global, sizeof(Global));
  });
  ForkCounts C;
  for (int I = 0; I < Forks && !C.Hung; ++I) {
    pid_t Child = fork();
    if (Child < 0) {
      ++C.Failed;
      continue;
    }
    if (Child == 0)
      _exit(readableBytesAt(&Global, sizeof(Global)) == sizeof(Global) ? 0 : 1);
    int Status = 0;
    if (!childFinished(Child, Status, 10))
      ++C.Hung;
    else if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0)
      ++C.Failed;
  }
  Stop = true;
  Querier.join();
  return C;
}

// fork() while another thread asks about readable memory: glibc 2.36
// leaves its loader lock held in the child when the fork lands inside
// dl_iterate_phdr, and the child's own query then waits for ever (the first
// fork already hung without the fork handlers in Posix.cpp).
TEST(ReadableMemoryThread, ForkWhileAnotherThreadQueries) {
  ForkCounts C = forkWhileAnotherThreadQueries(200);
  EXPECT_EQ(C.Hung, 0);
  EXPECT_EQ(C.Failed, 0);
}

// The same in 100 fresh processes, each forking once while its other
// thread makes the process's first query. Posix.cpp's fork handlers were
// once registered by the first query, under pthread_once; ThreadSanitizer's
// pthread_once (unlike glibc's) is not started anew in a child, so a child
// forked while the other thread was inside it waited for ever in its own
// first query (about 1 fresh process in 14 under the TSan step's load).
// Each process is a child of this one, so this one must not have queried
// yet (ctest runs each test in a process of its own).
TEST(ReadableMemoryThread, ForkWhileAnotherThreadMakesTheFirstQuery) {
  int Hung = 0, Failed = 0;
  for (int I = 0; I < 100 && !Hung; ++I) {
    pid_t Child = fork();
    ASSERT_GE(Child, 0);
    if (Child == 0) {
      ForkCounts C = forkWhileAnotherThreadQueries(1);
      _exit(C.Hung ? 2 : C.Failed ? 1 : 0);
    }
    int Status = 0;
    if (!childFinished(Child, Status, 20) ||
        (WIFEXITED(Status) && WEXITSTATUS(Status) == 2))
      ++Hung;
    else if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0)
      ++Failed;
  }
  EXPECT_EQ(Hung, 0);
  EXPECT_EQ(Failed, 0);
}

TEST(MetadataInMemory, BoundedByReadableBytes) {
  const size_t Page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void *Map = mmap(nullptr, 2 * Page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(Map, MAP_FAILED);
  auto *P = static_cast<uint8_t *>(Map);
  ASSERT_EQ(mprotect(P + Page, Page, PROT_NONE), 0);
  std::vector<uint8_t> Bytes;
  ASSERT_FALSE(encodeKpackMetadata({"app", {"app_@GFXARCH@.kpack"}}, Bytes));
  uint8_t *At = P + Page - Bytes.size();
  std::memcpy(At, Bytes.data(), Bytes.size());
  KpackMetadata M;
  ASSERT_FALSE(decodeKpackMetadataInMemory(At, M));
  EXPECT_EQ(M.KernelName, "app");
  At[0] = 0xdc; // array16 with a huge count: runs into the guard page
  Status S = decodeKpackMetadataInMemory(At, M);
  EXPECT_EQ(S.code(), KPACK_ERROR_INVALID_METADATA) << S.message();
  S = decodeKpackMetadataInMemory(P + Page, M);
  EXPECT_EQ(S.code(), KPACK_ERROR_INVALID_METADATA);
  EXPECT_NE(S.message().find("not point into readable memory"),
            std::string::npos)
      << S.message();
  munmap(P, 2 * Page);
}

TEST(MetadataModes, LoaderAndStrictDiffer) {
  // {"kernel_name": "", "kpack_search_paths": ["x"]}
  std::vector<uint8_t> B;
  ASSERT_FALSE(encodeKpackMetadata({"", {"x"}}, B));
  KpackMetadata M;
  EXPECT_FALSE(decodeKpackMetadata(B.data(), B.size(), M, MetadataMode::Strict));
  EXPECT_EQ(decodeKpackMetadata(B.data(), B.size(), M, MetadataMode::Loader)
                .code(),
            KPACK_ERROR_INVALID_METADATA);
}

TEST(Wrapper, LayoutAndNames) {
  EXPECT_EQ(sizeof(FatbinWrapper), WrapperSize);
  EXPECT_EQ(HipkMagic, 0x4B504948u);
  EXPECT_EQ(HipfMagic, 0x48495046u);
  EXPECT_EQ(std::memcmp(&HipkMagic, "HIPK", 4), 0);
  EXPECT_STREQ(HipFatbinSection, ".hip_fatbin");
  EXPECT_STREQ(FatbinWrapperSection, ".hipFatBinSegment");
  EXPECT_STREQ(KpackRefSection, ".rocm_kpack_ref");
  FatbinWrapper W{HipkMagic, 1, nullptr, 0x700000003ull};
  EXPECT_EQ(hipkCodeObjectIndex(W), 3u);
}

TEST(BundleWriter, HeaderAndAlignedPayloads) {
  const uint8_t Code[] = {1, 2, 3};
  std::vector<uint8_t> B = encodeBundle(
      {{HostEntryId, nullptr, 0},
       {std::string(HipDeviceEntryPrefix) + "gfx942", Code, sizeof(Code)}});
  ASSERT_GE(B.size(), 4096u + 3);
  EXPECT_EQ(std::memcmp(B.data(), OffloadBundleMagic, OffloadBundleMagicSize),
            0);
  EXPECT_EQ(B.size(), 4096u + 3);
  EXPECT_EQ(B[4096], 1);
}

} // namespace

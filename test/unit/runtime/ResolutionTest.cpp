//===- ResolutionTest.cpp - The account of the loader's search ------------===//
//
// LoaderCache's account of a search (kpack/Resolution.h): every path tried,
// the archives opened, the candidate found and why others were refused, the
// archives beside an @GFXARCH@ path, and the one-line diagnosis that the
// ROCM_KPACK_DEBUG trace ends with and `kpack doctor` prints.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "kpack/LoaderCache.h"
#include "kpack/Metadata.h"
#include "kpack/Resolution.h"
#include "kpack/SearchPaths.h"
#include "rocm_kpack/kpack.h"

#include <gtest/gtest.h>

using namespace kpack_test;
using kpack::Diagnosis;
using kpack::KpackEnvironment;
using kpack::KpackMetadata;
using kpack::LoaderCache;
using kpack::ProbeRecord;
using kpack::ResolutionAccount;

namespace {

const char *const LinkA = "0123456789abcdef0123456789abcdef";
const char *const LinkB = "fedcba9876543210fedcba9876543210";

/// An install: <root>/lib/libfoo.so with per-target archives
/// <root>/.kpack/foo_<target>.kpack.
class Resolution : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *Var : kpack::KpackEnvironmentVariables)
      unsetenv(Var);
    Binary = Dir.write("lib/libfoo.so", Bytes{0x7f, 'E', 'L', 'F'});
    Ref.KernelName = "lib/libfoo.so";
    Ref.SearchPaths = {"../.kpack/foo_@GFXARCH@.kpack"};
  }

  /// foo_<Target>.kpack offering Target with "lib/libfoo.so#0" (unless
  /// WithKey is false), its entry's link_id EntryLink if given.
  void archive(const std::string &Target, bool WithKey = true,
               const std::string &EntryLink = "") {
    ArchiveSpec Spec;
    Spec.Family = Target;
    Spec.Arches = {Target};
    Spec.Entries.push_back({WithKey ? "lib/libfoo.so#0" : "lib/other#0",
                            Target, payload("co:" + Target, 300)});
    ArchiveParts Parts = buildParts(Spec);
    if (!EntryLink.empty())
      Parts.Toc["toc"][Spec.Entries[0].Key][Target]["metadata"]["link_id"] =
          EntryLink;
    Dir.write(".kpack/foo_" + Target + ".kpack", serialize(Parts));
  }

  ResolutionAccount resolve(const std::vector<std::string> &Requests,
                            KpackEnvironment Env = KpackEnvironment()) {
    LoaderCache Cache(std::move(Env));
    ResolutionAccount A;
    kpack::LocatedCodeObject Located;
    (void)Cache.locateCodeObject(Ref, Binary, 0, Requests, Located, &A);
    Cache.explain(A);
    return A;
  }

  std::string path(const std::string &Rel) const {
    return Dir.path() + "/lib/../" + Rel;
  }

  TempDir Dir;
  std::string Binary;
  KpackMetadata Ref;
};

TEST_F(Resolution, ExactMatch) {
  archive("gfx942:sramecc+:xnack-");
  ResolutionAccount A = resolve({"gfx942:sramecc+:xnack-", "gfx9-4-generic"});
  ASSERT_EQ(A.Verdict, Diagnosis::Loaded) << A.line();
  EXPECT_EQ(A.Match, kpack::MatchKind::Exact);
  ASSERT_TRUE(A.found());
  EXPECT_EQ(A.found()->Path, path(".kpack/foo_gfx942:sramecc+:xnack-.kpack"));
  EXPECT_EQ(A.Probes.size(), 1u);
  EXPECT_EQ(A.line(), "loaded: 'lib/libfoo.so#0' for gfx942:sramecc+:xnack- "
                      "from '" +
                          path(".kpack/foo_gfx942:sramecc+:xnack-.kpack") +
                          "' (exact)");
}

TEST_F(Resolution, FeatureSubsetMatchRecordsEveryPathTried) {
  archive("gfx942");
  ResolutionAccount A = resolve({"gfx942:sramecc+:xnack-"});
  ASSERT_EQ(A.Verdict, Diagnosis::Loaded) << A.line();
  EXPECT_EQ(A.Match, kpack::MatchKind::FeatureSubset);
  ASSERT_EQ(A.Probes.size(), 4u);
  const char *Expected[] = {"gfx942:sramecc+:xnack-", "gfx942:sramecc+",
                            "gfx942:xnack-", "gfx942"};
  for (size_t I = 0; I < 4; ++I) {
    EXPECT_EQ(A.Probes[I].Candidate, Expected[I]);
    EXPECT_EQ(A.Probes[I].Path,
              path(std::string(".kpack/foo_") + Expected[I] + ".kpack"));
    EXPECT_EQ(A.Probes[I].What, I < 3 ? ProbeRecord::Outcome::Unusable
                                      : ProbeRecord::Outcome::Found);
  }
  EXPECT_EQ(A.Probes[0].Failure.code(), KPACK_ERROR_FILE_NOT_FOUND);
  EXPECT_NE(A.Message.find("(feature-subset for gfx942:sramecc+:xnack-)"),
            std::string::npos)
      << A.Message;
}

TEST_F(Resolution, GenericFallback) {
  archive("gfx11-generic");
  ResolutionAccount A = resolve({"gfx1101", "gfx11-generic"});
  ASSERT_EQ(A.Verdict, Diagnosis::Loaded) << A.line();
  EXPECT_EQ(A.Match, kpack::MatchKind::Generic);
  EXPECT_EQ(A.found()->Request, "gfx11-generic");
}

TEST_F(Resolution, NoArchiveListsEveryPathAbsolute) {
  ResolutionAccount A = resolve({"gfx90a:xnack+"});
  EXPECT_EQ(A.Verdict, Diagnosis::NoArchive);
  EXPECT_EQ(A.Result.code(), KPACK_ERROR_ARCHIVE_NOT_FOUND);
  EXPECT_EQ(A.line(),
            "no-archive: no archive for 'lib/libfoo.so#0' at any searched "
            "path: '" + path(".kpack/foo_gfx90a:xnack+.kpack") + "', '" +
                path(".kpack/foo_gfx90a.kpack") + "'");
}

TEST_F(Resolution, SiblingArchivesNameTheirTargetsAndTheMismatch) {
  archive("gfx90a:xnack-");
  archive("gfx1100");
  ResolutionAccount A = resolve({"gfx90a:xnack+"});
  EXPECT_EQ(A.Verdict, Diagnosis::OtherTargets);
  ASSERT_EQ(A.Siblings.size(), 2u);
  EXPECT_EQ(A.Siblings[0].NameTarget, "gfx1100");
  EXPECT_EQ(A.Siblings[1].NameTarget, "gfx90a:xnack-");
  EXPECT_EQ(A.Siblings[1].Offered, std::vector<std::string>{"gfx90a:xnack-"});
  EXPECT_EQ(A.line(),
            "other-targets: no archive offers 'lib/libfoo.so#0' for "
            "gfx90a:xnack+ (tried gfx90a:xnack+, gfx90a); found: '" +
                Dir.path() + "/lib/../.kpack/foo_gfx1100.kpack' (gfx1100), '" +
                Dir.path() +
                "/lib/../.kpack/foo_gfx90a:xnack-.kpack' (gfx90a:xnack-: this "
                "GPU runs xnack+)");
}

TEST_F(Resolution, ArchiveOpenedForOtherTargets) {
  // One multi-target archive without a pattern.
  ArchiveSpec Spec;
  Spec.Arches = {"gfx1100", "gfx90a:xnack-"};
  Spec.Entries = {{"lib/libfoo.so#0", "gfx1100", payload("a", 100)},
                  {"lib/libfoo.so#0", "gfx90a:xnack-", payload("b", 100)}};
  Dir.write("all.kpack", buildArchive(Spec));
  Ref.SearchPaths = {"../all.kpack"};
  ResolutionAccount A = resolve({"gfx90a:xnack+"});
  EXPECT_EQ(A.Verdict, Diagnosis::OtherTargets);
  EXPECT_EQ(A.Result.code(), KPACK_ERROR_ARCH_NOT_FOUND);
  EXPECT_NE(A.Message.find("(gfx1100, gfx90a:xnack-: this GPU runs xnack+)"),
            std::string::npos)
      << A.Message;
}

TEST_F(Resolution, MissingEntry) {
  archive("gfx1100", /*WithKey=*/false);
  ResolutionAccount A = resolve({"gfx1100"});
  EXPECT_EQ(A.Verdict, Diagnosis::MissingEntry);
  EXPECT_EQ(A.Result.code(), KPACK_ERROR_KERNEL_NOT_FOUND);
  EXPECT_EQ(A.line(), "missing-entry: '" + path(".kpack/foo_gfx1100.kpack") +
                          "' offers gfx1100 but has no 'lib/libfoo.so#0' (an "
                          "archive of another build of the binary, or a "
                          "partial one)");
}

TEST_F(Resolution, StaleEntryIsRefusedAndTheSearchGoesOn) {
  Ref.LinkId = LinkA;
  archive("gfx942:xnack-", true, LinkB);
  ResolutionAccount A = resolve({"gfx942:xnack-"});
  EXPECT_EQ(A.Verdict, Diagnosis::Stale);
  EXPECT_EQ(A.Result.code(), KPACK_ERROR_KERNEL_NOT_FOUND);
  ASSERT_FALSE(A.Probes.empty());
  EXPECT_EQ(A.Probes[0].What, ProbeRecord::Outcome::Stale);
  EXPECT_EQ(A.Probes[0].EntryLinkId, LinkB);
  EXPECT_EQ(A.line(), "stale: '" + path(".kpack/foo_gfx942:xnack-.kpack") +
                          "' was written by another link of '" + Binary +
                          "' (stale archive): rebuild or reinstall both "
                          "together");
  // The next candidate of this link loads.
  archive("gfx942", true, LinkA);
  ResolutionAccount B = resolve({"gfx942:xnack-"});
  EXPECT_EQ(B.Verdict, Diagnosis::Loaded) << B.line();
  EXPECT_EQ(B.found()->Candidate, "gfx942");
}

TEST_F(Resolution, LinkIdMissingOnEitherSideIsNoCheck) {
  archive("gfx1100", true, LinkB); // the binary has none
  EXPECT_EQ(resolve({"gfx1100"}).Verdict, Diagnosis::Loaded);
  Ref.LinkId = LinkA;
  archive("gfx1100"); // the entry has none
  EXPECT_EQ(resolve({"gfx1100"}).Verdict, Diagnosis::Loaded);
  archive("gfx1100", true, LinkA); // equal
  EXPECT_EQ(resolve({"gfx1100"}).Verdict, Diagnosis::Loaded);
}

TEST_F(Resolution, CorruptArchive) {
  Dir.write(".kpack/foo_gfx1100.kpack", Bytes{'K', 'P', 'A', 'K', 1});
  ResolutionAccount A = resolve({"gfx1100"});
  EXPECT_EQ(A.Verdict, Diagnosis::Corrupt);
  EXPECT_NE(A.line().find("corrupt: '" + path(".kpack/foo_gfx1100.kpack") +
                          "' is not a usable archive: "),
            std::string::npos)
      << A.line();
  EXPECT_NE(A.line().find("(KPACK_ERROR_INVALID_FORMAT)"), std::string::npos);
}

TEST_F(Resolution, ReadFailureOfALoadIsCorrupt) {
  ArchiveSpec Spec;
  Spec.Arches = {"gfx1100"};
  Spec.Entries = {{"lib/libfoo.so#0", "gfx1100", payload("a", 4000)}};
  Bytes Data = buildArchive(Spec);
  Data[BlobStart + 8] ^= 0xff; // the zstd frame's magic (after the count
                               // and the frame's size word)
  Dir.write(".kpack/foo_gfx1100.kpack", Data);
  LoaderCache Cache{KpackEnvironment()};
  ResolutionAccount A;
  void *Out = nullptr;
  size_t Size = 0;
  EXPECT_TRUE(Cache.loadCodeObject(Ref, Binary, 0, {"gfx1100"}, Out, Size, &A));
  Cache.explain(A);
  EXPECT_EQ(A.Verdict, Diagnosis::Corrupt);
  ASSERT_FALSE(A.Probes.empty());
  EXPECT_EQ(A.Probes.back().What, ProbeRecord::Outcome::ReadFailed);
  EXPECT_NE(A.line().find("reading 'lib/libfoo.so#0' for gfx1100 from"),
            std::string::npos)
      << A.line();
}

TEST_F(Resolution, MostSpecificDiagnosisWins) {
  // A stale entry for one candidate outranks a missing archive for another.
  Ref.LinkId = LinkA;
  archive("gfx90a", true, LinkB);
  ResolutionAccount A = resolve({"gfx90a:xnack+"});
  EXPECT_EQ(A.Verdict, Diagnosis::Stale) << A.line();
}

TEST_F(Resolution, TemplatesRecordTheirOrigin) {
  archive("gfx1100");
  KpackEnvironment Env;
  Env.PathPrefix = {Dir.path() + "/.kpack/"};
  ResolutionAccount A = resolve({"gfx1100"}, Env);
  ASSERT_EQ(A.Templates.size(), 2u);
  EXPECT_EQ(A.Templates[0].From, kpack::SearchTemplate::Origin::PathPrefix);
  EXPECT_EQ(A.Templates[0].Path, Dir.path() + "/.kpack/foo_@GFXARCH@.kpack");
  EXPECT_EQ(A.Templates[1].From, kpack::SearchTemplate::Origin::Embedded);
  EXPECT_EQ(A.found()->Path, Dir.path() + "/.kpack/foo_gfx1100.kpack");
}

TEST_F(Resolution, SearchesAppendToOneAccount) {
  // The shim's way: the agent's target, then its generic one.
  archive("gfx11-generic");
  LoaderCache Cache{KpackEnvironment()};
  ResolutionAccount A;
  kpack::LocatedCodeObject L;
  EXPECT_TRUE(Cache.locateCodeObject(Ref, Binary, 0, {"gfx1101"}, L, &A));
  EXPECT_FALSE(Cache.locateCodeObject(Ref, Binary, 0, {"gfx11-generic"}, L, &A));
  Cache.explain(A);
  EXPECT_EQ(A.Requested, (std::vector<std::string>{"gfx1101", "gfx11-generic"}));
  EXPECT_EQ(A.Verdict, Diagnosis::Loaded);
  EXPECT_EQ(A.Match, kpack::MatchKind::Generic);
}

TEST_F(Resolution, DebugTraceEndsWithTheDiagnosis) {
  archive("gfx90a:xnack-");
  setenv("ROCM_KPACK_DEBUG", "1", 1);
  kpack_cache_t Cache = nullptr;
  ASSERT_EQ(kpack_cache_create(&Cache), KPACK_SUCCESS);
  Bytes Meta = hipkMetadata(Ref.KernelName, Ref.SearchPaths);
  const char *Arches[] = {"amdgcn-amd-amdhsa--gfx90a:xnack+"};
  void *Data = nullptr;
  size_t Size = 0;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(kpack_load_code_object(Cache, Meta.data(), Binary.c_str(), 0,
                                   Arches, 1, &Data, &Size),
            KPACK_ERROR_ARCHIVE_NOT_FOUND);
  std::string Log = ::testing::internal::GetCapturedStderr();
  kpack_cache_destroy(Cache);
  unsetenv("ROCM_KPACK_DEBUG");
  // What the account says, computed apart, is the trace's last line.
  ResolutionAccount A = resolve({"amdgcn-amd-amdhsa--gfx90a:xnack+"});
  const std::string Last = "kpack: diagnosis: " + A.line() + "\n";
  ASSERT_GE(Log.size(), Last.size());
  EXPECT_EQ(Log.substr(Log.size() - Last.size()), Last) << Log;
  EXPECT_NE(Last.find("(gfx90a:xnack-: this GPU runs xnack+)"),
            std::string::npos)
      << Last;
  EXPECT_NE(Log.find("kpack: failed: no archive could be opened\n"),
            std::string::npos);
}

TEST(FeatureMismatch, NamesWhatTheGpuRuns) {
  EXPECT_EQ(kpack::featureMismatch("gfx90a:xnack-", "gfx90a:xnack+"),
            "this GPU runs xnack+");
  EXPECT_EQ(kpack::featureMismatch("gfx942:sramecc-:xnack-",
                                   "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack+"),
            "this GPU runs sramecc+, xnack+");
  EXPECT_EQ(kpack::featureMismatch("gfx1100", "gfx90a:xnack+"), "");
  EXPECT_EQ(kpack::featureMismatch("gfx90a", "gfx90a:xnack+"), "");
  EXPECT_EQ(kpack::featureMismatch("gfx90a:xnack+", "gfx90a"),
            "the requested target gfx90a names no xnack setting");
}

} // namespace

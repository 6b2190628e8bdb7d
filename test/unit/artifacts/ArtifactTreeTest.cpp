//===- ArtifactTreeTest.cpp - kpack/ArtifactTree.h ------------------------===//

#include "kpack/ArtifactTree.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace kpack;

namespace {

std::string errorText(llvm::Error E) { return llvm::toString(std::move(E)); }

/// "" on success, else the message (gtest cannot take an llvm::Error).
std::string err(llvm::Error E) { return E ? llvm::toString(std::move(E)) : ""; }

template <typename T> T check(llvm::Expected<T> V) {
  if (!V) {
    ADD_FAILURE() << llvm::toString(V.takeError());
    return T();
  }
  return std::move(*V);
}

std::optional<StagedOutputs> stage(const std::string &Parent) {
  llvm::Expected<StagedOutputs> S = StagedOutputs::create(Parent);
  if (!S) {
    ADD_FAILURE() << llvm::toString(S.takeError());
    return std::nullopt;
  }
  return std::move(*S);
}

class ArtifactTreeTest : public ::testing::Test {
protected:
  void SetUp() override {
    char T[] = "/tmp/kpack-artifacttree-XXXXXX";
    ASSERT_NE(::mkdtemp(T), nullptr);
    Dir = T;
  }
  void TearDown() override {
    (void)std::system(("rm -rf '" + Dir + "'").c_str());
  }
  void write(const std::string &Rel, const std::string &Text,
             mode_t Mode = 0644) {
    std::string P = Dir + "/" + Rel;
    (void)std::system(("mkdir -p \"$(dirname '" + P + "')\"").c_str());
    std::ofstream(P, std::ios::binary) << Text;
    ASSERT_EQ(::chmod(P.c_str(), Mode), 0);
  }
  std::string read(const std::string &Rel) {
    std::ifstream In(Dir + "/" + Rel, std::ios::binary);
    std::stringstream SS;
    SS << In.rdbuf();
    return SS.str();
  }
  struct stat lstatOf(const std::string &Rel) {
    struct stat St{};
    EXPECT_EQ(::lstat((Dir + "/" + Rel).c_str(), &St), 0) << Rel;
    return St;
  }
  bool exists(const std::string &Rel) {
    struct stat St;
    return ::lstat((Dir + "/" + Rel).c_str(), &St) == 0;
  }
  void setTimes(const std::string &Rel, long Sec, long Nsec, bool Follow = true) {
    struct timespec Ts[2] = {{Sec, Nsec}, {Sec, Nsec}};
    ASSERT_EQ(::utimensat(AT_FDCWD, (Dir + "/" + Rel).c_str(), Ts,
                          Follow ? 0 : AT_SYMLINK_NOFOLLOW),
              0);
  }
  std::vector<std::string> namesIn(const std::string &Rel) {
    std::vector<std::string> Dirs;
    std::vector<std::string> Out;
    for (const TreeEntry &E : check(listTree(Dir + "/" + Rel, &Dirs)))
      Out.push_back(E.RelPath);
    for (const std::string &D : Dirs)
      Out.push_back(D + "/");
    return Out;
  }
  /// Copies every entry and directory of Dir/Src to Dir/Dst.
  void copyTree(const std::string &Src, const std::string &Dst, CopyMode M) {
    std::vector<std::string> Dirs;
    std::vector<TreeEntry> Entries = check(listTree(Dir + "/" + Src, &Dirs));
    TreeCopier C(M);
    for (const std::string &D : Dirs)
      ASSERT_EQ(err(C.makeDir(Dir + "/" + Src + "/" + D, Dir + "/" + Dst + "/" + D)), "");
    for (const TreeEntry &E : Entries)
      ASSERT_EQ(err(C.copy(Dir + "/" + Src + "/" + E.RelPath, E,
                          Dir + "/" + Dst + "/" + E.RelPath)), "");
    ASSERT_EQ(err(C.finish()), "");
  }
  std::string Dir;
};

TEST_F(ArtifactTreeTest, ManifestRoundTrip) {
  write("a/math-libs/BLAS/stage/lib/x", "x");
  write("a/core/stage/bin/y", "y");
  ASSERT_EQ(err(writeArtifactManifest(Dir + "/a", {"math-libs/BLAS/stage", "core/stage"})), "");
  EXPECT_EQ(read("a/artifact_manifest.txt"), "math-libs/BLAS/stage\ncore/stage\n");
  EXPECT_EQ(check(readArtifactManifest(Dir + "/a")),
            (std::vector<std::string>{"math-libs/BLAS/stage", "core/stage"}));
}

TEST_F(ArtifactTreeTest, ManifestSkipsBlankLinesAndSpaces) {
  write("a/p/f", "");
  write("a/q/f", "");
  write("a/artifact_manifest.txt", "\n  p \r\n\nq");
  EXPECT_EQ(check(readArtifactManifest(Dir + "/a")),
            (std::vector<std::string>{"p", "q"}));
}

TEST_F(ArtifactTreeTest, ManifestSkipsMissingPrefixesOnRequest) {
  write("a/p/f", "");
  write("a/q", "");
  write("a/artifact_manifest.txt", "missing\np\n");
  EXPECT_EQ(check(readArtifactManifest(Dir + "/a", MissingPrefix::Skip)),
            (std::vector<std::string>{"p"}));
  // Something that exists but is no directory is still an error.
  write("a/artifact_manifest.txt", "p\nq\n");
  EXPECT_NE(errorText(readArtifactManifest(Dir + "/a", MissingPrefix::Skip)
                          .takeError())
                .find("'q' is not a directory"),
            std::string::npos);
}

TEST_F(ArtifactTreeTest, ManifestErrors) {
  EXPECT_NE(errorText(readArtifactManifest(Dir).takeError())
                .find("artifact_manifest.txt"),
            std::string::npos);
  write("a/p/f", "");
  write("a/artifact_manifest.txt", "/p\n");
  EXPECT_NE(errorText(readArtifactManifest(Dir + "/a").takeError()).find("absolute"),
            std::string::npos);
  write("a/artifact_manifest.txt", "p/../../x\n");
  EXPECT_NE(errorText(readArtifactManifest(Dir + "/a").takeError())
                .find("leaves the artifact"),
            std::string::npos);
  write("a/artifact_manifest.txt", "p\nmissing\n");
  EXPECT_NE(errorText(readArtifactManifest(Dir + "/a").takeError())
                .find("'missing' is not a directory"),
            std::string::npos);
  write("a/artifact_manifest.txt", "p/f\n");
  EXPECT_NE(errorText(readArtifactManifest(Dir + "/a").takeError())
                .find("is not a directory"),
            std::string::npos);
}

TEST_F(ArtifactTreeTest, SplitArtifactName) {
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(splitArtifactName("blas_lib_gfx90a:xnack+"), P("blas_lib", "gfx90a:xnack+"));
  EXPECT_EQ(splitArtifactName("blas_lib_generic"), P("blas_lib", "generic"));
  EXPECT_EQ(splitArtifactName("x_gfx9-4-generic"), P("x", "gfx9-4-generic"));
  EXPECT_EQ(splitArtifactName("nounderscore"), std::nullopt);
  EXPECT_EQ(splitArtifactName("trailing_"), std::nullopt);
  EXPECT_EQ(splitArtifactName("_leading"), std::nullopt);
}

TEST_F(ArtifactTreeTest, ListTreeIsSortedBytewiseAndDoesNotFollowSymlinks) {
  write("t/b", "bb");
  write("t/a/x", "x");
  write("t/a-b", "");
  write("t/B", "");
  ASSERT_EQ(::mkdir((Dir + "/t/empty").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("a", (Dir + "/t/link-to-dir").c_str()), 0);
  ASSERT_EQ(::mkfifo((Dir + "/t/fifo").c_str(), 0600), 0);
  ASSERT_EQ(::link((Dir + "/t/b").c_str(), (Dir + "/t/a/hard").c_str()), 0);

  std::vector<std::string> Dirs;
  std::vector<TreeEntry> Entries = check(listTree(Dir + "/t", &Dirs));
  std::vector<std::string> Names;
  for (const TreeEntry &E : Entries)
    Names.push_back(E.RelPath);
  // '-' (0x2d) sorts before '/' (0x2f), 'B' before 'a'.
  EXPECT_EQ(Names, (std::vector<std::string>{"B", "a-b", "a/hard", "a/x", "b",
                                             "fifo", "link-to-dir"}));
  EXPECT_EQ(Dirs, (std::vector<std::string>{"a", "empty"}));
  EXPECT_EQ(Entries[6].K, TreeEntry::Symlink);
  EXPECT_EQ(Entries[5].K, TreeEntry::Other);
  EXPECT_EQ(Entries[4].K, TreeEntry::File);
  EXPECT_EQ(Entries[4].Size, 2u);
  EXPECT_EQ(Entries[4].LinkCount, 2u);
  EXPECT_EQ(Entries[2].Inode, Entries[4].Inode);
  EXPECT_EQ(Entries[2].Device, Entries[4].Device);

  EXPECT_NE(errorText(listTree(Dir + "/t/b").takeError()).find("not a directory"),
            std::string::npos);
  EXPECT_NE(errorText(listTree(Dir + "/nope").takeError()).find("nope"),
            std::string::npos);
}

TEST_F(ArtifactTreeTest, CopyKeepsSymlinksModesTimesAndHardLinks) {
  write("s/bin/tool", "#!/bin/sh\n", 04751);
  write("s/lib/libx.so.1.2", "library");
  ASSERT_EQ(::symlink("libx.so.1.2", (Dir + "/s/lib/libx.so.1").c_str()), 0);
  ASSERT_EQ(::symlink("../nowhere", (Dir + "/s/lib/dangling").c_str()), 0);
  ASSERT_EQ(::link((Dir + "/s/lib/libx.so.1.2").c_str(),
                   (Dir + "/s/bin/libx-hard").c_str()),
            0);
  ASSERT_EQ(::mkdir((Dir + "/s/empty").c_str(), 0700), 0);
  setTimes("s/bin/tool", 1000000000, 123456789);
  setTimes("s/lib/libx.so.1", 1100000000, 42, /*Follow=*/false);
  ASSERT_EQ(::chmod((Dir + "/s/lib").c_str(), 0555), 0);
  setTimes("s/lib", 1200000000, 987654321);
  setTimes("s/empty", 1300000000, 5);

  copyTree("s", "d", CopyMode::Copy);

  EXPECT_EQ(namesIn("d"), namesIn("s"));
  EXPECT_EQ(read("d/bin/tool"), "#!/bin/sh\n");
  struct stat Tool = lstatOf("d/bin/tool");
  EXPECT_EQ(Tool.st_mode & 07777, 04751u);
  EXPECT_EQ(Tool.st_mtim.tv_sec, 1000000000);
  EXPECT_EQ(Tool.st_mtim.tv_nsec, 123456789);
  EXPECT_NE(Tool.st_ino, lstatOf("s/bin/tool").st_ino);

  struct stat Link = lstatOf("d/lib/libx.so.1");
  ASSERT_TRUE(S_ISLNK(Link.st_mode));
  EXPECT_EQ(Link.st_mtim.tv_sec, 1100000000);
  EXPECT_EQ(Link.st_mtim.tv_nsec, 42);
  char Target[64] = {};
  ASSERT_GT(::readlink((Dir + "/d/lib/libx.so.1").c_str(), Target, 63), 0);
  EXPECT_STREQ(Target, "libx.so.1.2");
  EXPECT_TRUE(S_ISLNK(lstatOf("d/lib/dangling").st_mode));

  // The two names of one source inode share one new inode.
  struct stat Lib = lstatOf("d/lib/libx.so.1.2"), Hard = lstatOf("d/bin/libx-hard");
  EXPECT_EQ(Lib.st_ino, Hard.st_ino);
  EXPECT_EQ(Lib.st_nlink, 2u);
  EXPECT_NE(Lib.st_ino, lstatOf("s/lib/libx.so.1.2").st_ino);

  struct stat LibDir = lstatOf("d/lib");
  EXPECT_EQ(LibDir.st_mode & 07777, 0555u);
  EXPECT_EQ(LibDir.st_mtim.tv_sec, 1200000000);
  EXPECT_EQ(LibDir.st_mtim.tv_nsec, 987654321);
  struct stat Empty = lstatOf("d/empty");
  EXPECT_TRUE(S_ISDIR(Empty.st_mode));
  EXPECT_EQ(Empty.st_mode & 07777, 0700u);
  EXPECT_EQ(Empty.st_mtim.tv_sec, 1300000000);
  ASSERT_EQ(::chmod((Dir + "/s/lib").c_str(), 0755), 0);
  ASSERT_EQ(::chmod((Dir + "/d/lib").c_str(), 0755), 0);
}

TEST_F(ArtifactTreeTest, CopyDoesNotStampDirectoriesThatExisted) {
  write("s/p/f", "f");
  ASSERT_EQ(::mkdir((Dir + "/d").c_str(), 0750), 0);
  ASSERT_EQ(::chmod((Dir + "/s").c_str(), 0700), 0);
  copyTree("s", "d", CopyMode::Copy);
  EXPECT_EQ(lstatOf("d").st_mode & 07777, 0750u);
  EXPECT_EQ(read("d/p/f"), "f");
}

TEST_F(ArtifactTreeTest, HardLinkFirstLinksOnOneFilesystem) {
  write("s/lib/big", std::string(100000, 'x'), 0640);
  ASSERT_EQ(::symlink("big", (Dir + "/s/lib/alias").c_str()), 0);
  copyTree("s", "d", CopyMode::HardLinkFirst);
  EXPECT_EQ(lstatOf("d/lib/big").st_ino, lstatOf("s/lib/big").st_ino);
  EXPECT_EQ(lstatOf("s/lib/big").st_nlink, 2u);
  // Symlinks are recreated, never hard-linked.
  EXPECT_NE(lstatOf("d/lib/alias").st_ino, lstatOf("s/lib/alias").st_ino);
  EXPECT_TRUE(S_ISLNK(lstatOf("d/lib/alias").st_mode));
}

TEST_F(ArtifactTreeTest, HardLinkFirstCopiesAcrossFilesystems) {
  // /dev/shm is the second filesystem (tmpfs); the test needs it to differ
  // from the temporary directory's.
  char T[] = "/dev/shm/kpack-artifacttree-XXXXXX";
  ASSERT_NE(::mkdtemp(T), nullptr) << "the test needs a writable /dev/shm";
  std::string Shm = T;
  struct stat ShmSt, TmpSt;
  ASSERT_EQ(::stat(Shm.c_str(), &ShmSt), 0);
  ASSERT_EQ(::stat(Dir.c_str(), &TmpSt), 0);
  ASSERT_NE(ShmSt.st_dev, TmpSt.st_dev)
      << "the test needs /dev/shm and " << Dir << " on different filesystems";

  write("s/a", "shared", 0600);
  ASSERT_EQ(::link((Dir + "/s/a").c_str(), (Dir + "/s/b").c_str()), 0);
  setTimes("s/a", 1500000000, 7);
  std::vector<TreeEntry> Entries = check(listTree(Dir + "/s"));
  TreeCopier C(CopyMode::HardLinkFirst);
  for (const TreeEntry &E : Entries)
    ASSERT_EQ(err(C.copy(Dir + "/s/" + E.RelPath, E, Shm + "/d/" + E.RelPath)), "");
  ASSERT_EQ(err(C.finish()), "");
  struct stat A, B;
  ASSERT_EQ(::lstat((Shm + "/d/a").c_str(), &A), 0);
  ASSERT_EQ(::lstat((Shm + "/d/b").c_str(), &B), 0);
  (void)std::system(("rm -rf '" + Shm + "'").c_str());
  EXPECT_EQ(A.st_dev, ShmSt.st_dev);
  EXPECT_EQ(A.st_ino, B.st_ino); // the link between the copies is kept
  EXPECT_EQ(A.st_size, 6);
  EXPECT_EQ(A.st_mode & 07777, 0600u);
  EXPECT_EQ(A.st_mtim.tv_sec, 1500000000);
  EXPECT_EQ(A.st_mtim.tv_nsec, 7);
}

TEST_F(ArtifactTreeTest, CopyRefusesToOverwrite) {
  write("s/f", "new");
  write("d/f", "old");
  std::vector<TreeEntry> Entries = check(listTree(Dir + "/s"));
  TreeCopier C(CopyMode::Copy);
  std::string Msg = errorText(C.copy(Dir + "/s/f", Entries[0], Dir + "/d/f"));
  EXPECT_NE(Msg.find(Dir + "/d/f"), std::string::npos) << Msg;
  EXPECT_EQ(read("d/f"), "old");
}

TEST_F(ArtifactTreeTest, StagedOutputsCommitTogether) {
  write("out/b_generic/stale", "old");
  {
    std::optional<StagedOutputs> SO = stage(Dir + "/out");
    ASSERT_TRUE(SO);
    StagedOutputs &S = *SO;
    std::string A = check(S.dir("a_gfx1100"));
    std::string B = check(S.dir("b_generic"));
    EXPECT_EQ(check(S.dir("a_gfx1100")), A);
    std::ofstream(A + "/f") << "a";
    std::ofstream(B + "/g") << "b";
    EXPECT_FALSE(exists("out/a_gfx1100"));
    EXPECT_EQ(read("out/b_generic/stale"), "old");
    ASSERT_EQ(err(S.commit()), "");
    EXPECT_NE(err(S.commit()), "") << "a second commit is an error";
  }
  EXPECT_EQ(namesIn("out"), (std::vector<std::string>{
                                "a_gfx1100/f", "b_generic/g", "a_gfx1100/",
                                "b_generic/"}));
}

TEST_F(ArtifactTreeTest, StagedOutputsWithoutCommitLeaveNothing) {
  write("out/keep/x", "x");
  {
    std::optional<StagedOutputs> SO = stage(Dir + "/out");
    ASSERT_TRUE(SO);
    StagedOutputs &S = *SO;
    std::string A = check(S.dir("keep"));
    std::string B = check(S.dir("new"));
    std::ofstream(A + "/y") << "y";
    ASSERT_EQ(::mkdir((B + "/ro").c_str(), 0555), 0);
    StagedOutputs Moved = std::move(S); // ownership moves, nothing removed yet
    EXPECT_GT(namesIn("out").size(), 2u); // the staging directory is there
  }
  EXPECT_EQ(namesIn("out"), (std::vector<std::string>{"keep/x", "keep/"}));
}

TEST_F(ArtifactTreeTest, StagedOutputsRejectBadNames) {
  std::optional<StagedOutputs> SO = stage(Dir + "/new/parent");
  ASSERT_TRUE(SO);
  StagedOutputs &S = *SO;
  EXPECT_TRUE(exists("new/parent"));
  for (const char *Bad : {"", ".", "..", "a/b", ".kpack-staging-x"})
    EXPECT_NE(errorText(S.dir(Bad).takeError()).find("invalid output name"),
              std::string::npos)
        << Bad;
}

} // namespace

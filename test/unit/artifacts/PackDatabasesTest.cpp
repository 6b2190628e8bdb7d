//===- PackDatabasesTest.cpp - kpack pack-db's plan -----------------------===//
//
// The plan of a database tree: which files are packed, in which order, with
// which metadata; index files beside; host libraries left out; errors that
// name the file.
//
//===----------------------------------------------------------------------===//

#include "kpack/PackDatabases.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

using namespace kpack;

namespace {

class PackDatabasesTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> Dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("pack-db", Dir));
    Root = std::string(Dir);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Root); }

  void write(const std::string &Rel, const std::string &Bytes) {
    std::string Path = Root + "/tree/" + Rel;
    ASSERT_FALSE(llvm::sys::fs::create_directories(
        llvm::sys::path::parent_path(Path)));
    std::ofstream(Path, std::ios::binary) << Bytes;
  }

  std::vector<const DatabaseHandler *> handlers(
      std::vector<std::string> Names) {
    auto H = databaseHandlersNamed(Names);
    EXPECT_TRUE(bool(H));
    return H ? *H : std::vector<const DatabaseHandler *>{};
  }

  std::string tree() const { return Root + "/tree"; }

  std::string Root;
};

std::string keys(const std::vector<DatabaseEntry> &Entries) {
  std::string Out;
  for (const DatabaseEntry &E : Entries)
    Out += E.File.TargetId + " " + E.File.Key + "\n";
  return Out;
}

TEST_F(PackDatabasesTest, OrderedByTargetThenKey) {
  write("lib/rocblas/library/TensileLibrary_lazy_gfx942.dat", "i942");
  write("lib/rocblas/library/TensileLibrary_Type_HH_gfx942.co", "c942");
  write("lib/rocblas/library/TensileLibrary_lazy_gfx90a:xnack+.dat", "i90a");
  write("lib/rocblas/library/TensileLibrary_Type_HH_fallback.dat", "generic");
  write("lib/librocblas.so", "host");
  auto Plan = planDatabaseArchives(tree(), handlers({"rocblas"}));
  ASSERT_TRUE(bool(Plan)) << llvm::toString(Plan.takeError());
  EXPECT_EQ(keys(Plan->Packed),
            "gfx90a:xnack+ rocblas/gfx90a:xnack+/TensileLibrary_lazy.dat\n"
            "gfx942 rocblas/gfx942/TensileLibrary_Type_HH.co\n"
            "gfx942 rocblas/gfx942/TensileLibrary_lazy.dat\n");
  EXPECT_EQ(Plan->Unrecognised, 2u);
  EXPECT_EQ(Plan->targets(),
            (std::vector<std::string>{"gfx90a:xnack+", "gfx942"}));
  EXPECT_EQ(Plan->Packed[1].Size, 4u);
  EXPECT_EQ(Plan->Packed[1].Path,
            tree() + "/lib/rocblas/library/TensileLibrary_Type_HH_gfx942.co");
  auto Meta = entryMetadata(Plan->Packed[1]);
  ASSERT_EQ(Meta.size(), 2u);
  EXPECT_EQ(Meta[0], std::make_pair(std::string("kind"),
                                    std::string("code-object")));
  EXPECT_EQ(Meta[1],
            std::make_pair(std::string("path"),
                           std::string("lib/rocblas/library/"
                                       "TensileLibrary_Type_HH_gfx942.co")));
}

TEST_F(PackDatabasesTest, IndexesBeside) {
  write("lib/rocblas/library/TensileLibrary_lazy_gfx942.dat", "index");
  write("lib/rocblas/library/TensileLibrary_Type_HH_gfx942.co", "code");
  auto Plan = planDatabaseArchives(tree(), handlers({"rocblas"}),
                                   IndexPlacement::Beside);
  ASSERT_TRUE(bool(Plan)) << llvm::toString(Plan.takeError());
  EXPECT_EQ(keys(Plan->Packed), "gfx942 rocblas/gfx942/TensileLibrary_Type_HH.co\n");
  EXPECT_EQ(keys(Plan->Beside), "gfx942 rocblas/gfx942/TensileLibrary_lazy.dat\n");
  auto Written = writeIndexesBeside(*Plan, Root + "/out");
  ASSERT_TRUE(bool(Written)) << llvm::toString(Written.takeError());
  ASSERT_EQ(Written->size(), 1u);
  EXPECT_EQ((*Written)[0], Root + "/out/rocblas/gfx942/TensileLibrary_lazy.dat");
  std::ifstream In((*Written)[0]);
  std::string Bytes((std::istreambuf_iterator<char>(In)), {});
  EXPECT_EQ(Bytes, "index");
}

TEST_F(PackDatabasesTest, HostLibrariesNotPacked) {
  write("share/miopen/db/gfx942130.kdb", "kdb");
  write("lib/libMIOpenCKConv_gfx942.so", "so");
  auto Plan = planDatabaseArchives(tree(), handlers({"miopen"}));
  ASSERT_TRUE(bool(Plan)) << llvm::toString(Plan.takeError());
  EXPECT_EQ(keys(Plan->Packed), "gfx942 miopen/gfx942/130.kdb\n");
  ASSERT_EQ(Plan->NotPacked.size(), 1u);
  EXPECT_EQ(Plan->NotPacked[0].RelPath, "lib/libMIOpenCKConv_gfx942.so");
}

TEST_F(PackDatabasesTest, SameKeyIsAnError) {
  // The flat and the per-target layout give the same key.
  write("lib/rocblas/library/TensileLibrary_gfx942.co", "a");
  write("lib/rocblas/library/gfx942/TensileLibrary.co", "b");
  auto Plan = planDatabaseArchives(tree(), handlers({"rocblas"}));
  ASSERT_FALSE(bool(Plan));
  EXPECT_EQ(llvm::toString(Plan.takeError()),
            "'" + tree() + "/lib/rocblas/library/TensileLibrary_gfx942.co' and '" +
                tree() + "/lib/rocblas/library/gfx942/TensileLibrary.co' have "
                "the same key 'rocblas/gfx942/TensileLibrary.co'");
}

TEST_F(PackDatabasesTest, UnreadableFileIsNamed) {
  write("lib/rocblas/library/TensileLibrary_gfx942.co", "a");
  std::string Link = tree() + "/lib/rocblas/library/TensileLibrary_gfx90a.co";
  ASSERT_EQ(::symlink("missing", Link.c_str()), 0);
  auto Plan = planDatabaseArchives(tree(), handlers({"rocblas"}));
  ASSERT_FALSE(bool(Plan));
  EXPECT_EQ(llvm::toString(Plan.takeError()),
            "cannot read '" + Link + "': No such file or directory");
}

TEST_F(PackDatabasesTest, NothingToPackIsAnError) {
  write("lib/librocblas.so", "host");
  auto Plan = planDatabaseArchives(tree(), handlers({"rocblas", "hipblaslt"}));
  ASSERT_FALSE(bool(Plan));
  EXPECT_EQ(llvm::toString(Plan.takeError()),
            "no database files of rocblas, hipblaslt to pack in '" + tree() +
                "'");
}

TEST_F(PackDatabasesTest, MissingTreeIsAnError) {
  auto Plan = planDatabaseArchives(Root + "/nope", handlers({"rocblas"}));
  ASSERT_FALSE(bool(Plan));
  EXPECT_NE(llvm::toString(Plan.takeError()).find(Root + "/nope"),
            std::string::npos);
}

} // namespace

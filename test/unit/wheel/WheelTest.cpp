//===- WheelTest.cpp - kpack/Wheel.h --------------------------------------===//

#include "kpack/Wheel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace llvm;
using namespace kpack;

namespace {

TEST(WheelName, Parse) {
  Expected<WheelName> N =
      WheelName::parse("/some/dir/my_pkg-1.0.post1-cp311-cp311-linux_x86_64.whl");
  ASSERT_TRUE(bool(N)) << toString(N.takeError());
  EXPECT_EQ(N->Distribution, "my_pkg");
  EXPECT_EQ(N->Version, "1.0.post1");
  EXPECT_EQ(N->Build, "");
  EXPECT_EQ(N->tags(), "cp311-cp311-linux_x86_64");
  EXPECT_EQ(N->distInfoDir(), "my_pkg-1.0.post1.dist-info");
  EXPECT_EQ(N->dataDir(), "my_pkg-1.0.post1.data");
  EXPECT_EQ(N->fileName(), "my_pkg-1.0.post1-cp311-cp311-linux_x86_64.whl");

  N = WheelName::parse("pkg-2.0-7rocm-py3-none-any.whl");
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(N->Build, "7rocm");
  EXPECT_EQ(N->Python, "py3");
  EXPECT_EQ(N->fileName(), "pkg-2.0-7rocm-py3-none-any.whl");

  auto Err = [](StringRef Name) {
    Expected<WheelName> N = WheelName::parse(Name);
    return N ? std::string() : toString(N.takeError());
  };
  EXPECT_NE(Err("pkg-1.0-py3-none-any.zip").find("no .whl suffix"),
            std::string::npos);
  EXPECT_NE(Err("pkg-1.0-py3-none.whl").find("4 '-'-separated parts"),
            std::string::npos);
  EXPECT_NE(Err("pkg-1.0-x1-py3-none-any.whl").find("does not start with a digit"),
            std::string::npos);
  EXPECT_NE(Err("_pkg-1.0-py3-none-any.whl").find("invalid distribution name"),
            std::string::npos);
}

TEST(WheelName, Normalisation) {
  EXPECT_EQ(normalizeDistributionName("My.Pkg__x"), "my-pkg-x");
  EXPECT_EQ(normalizeDistributionName("a-_.b"), "a-b");
  EXPECT_EQ(wheelFileDistributionName("My.Pkg-x"), "my_pkg_x");
  EXPECT_TRUE(isValidDistributionName("torch_rocm"));
  EXPECT_TRUE(isValidDistributionName("a"));
  EXPECT_FALSE(isValidDistributionName("a-"));
  EXPECT_FALSE(isValidDistributionName("a b"));
  EXPECT_FALSE(isValidDistributionName(""));
}

TEST(WheelName, TargetIdNamePart) {
  EXPECT_EQ(targetIdNamePart("gfx90a:xnack+", '_'), "gfx90a_xnack_plus");
  EXPECT_EQ(targetIdNamePart("gfx90a:xnack+", '-'), "gfx90a-xnack-plus");
  EXPECT_EQ(targetIdNamePart("gfx942:sramecc+:xnack-", '_'),
            "gfx942_sramecc_plus_xnack_minus");
  EXPECT_EQ(targetIdNamePart("gfx11-generic", '_'), "gfx11_generic");
  EXPECT_EQ(targetIdNamePart("gfx11-generic", '-'), "gfx11-generic");
  EXPECT_EQ(targetIdNamePart("gfx9-4-generic:xnack-", '-'),
            "gfx9-4-generic-xnack-minus");
  EXPECT_EQ(targetIdNamePart("gfx942", '_'), "gfx942");
  // Every form is a valid distribution name part and unchanged by both
  // normalisations of extras pip has used.
  for (StringRef T : {"gfx90a:xnack+", "gfx11-generic", "gfx942:sramecc-"}) {
    std::string Extra = targetIdNamePart(T, '-');
    EXPECT_TRUE(isValidDistributionName("p_device_" + targetIdNamePart(T, '_')));
    EXPECT_EQ(normalizeDistributionName(Extra), Extra);
    EXPECT_EQ(Extra.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-."),
              std::string::npos);
  }
}

constexpr const char *MetadataText =
    "Metadata-Version: 2.1\n"
    "Name: My.Pkg\n"
    "Version: 1.0\n"
    "License: line one\n"
    "        line two\n"
    "Requires-Dist: numpy\n"
    "\n"
    "Long description\n"
    "with: colons\n";

TEST(WheelHeaderFile, RoundTripAndEdits) {
  Expected<WheelHeaderFile> F = WheelHeaderFile::parse(MetadataText, "M");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  EXPECT_EQ(F->str(), MetadataText);
  EXPECT_EQ(F->get("name"), std::optional<std::string>("My.Pkg"));
  EXPECT_EQ(F->get("License"), std::optional<std::string>("line one\nline two"));
  EXPECT_EQ(F->getAll("Requires-Dist"), std::vector<std::string>{"numpy"});
  EXPECT_EQ(F->get("Summary"), std::nullopt);

  F->append("Provides-Extra", "gfx942");
  F->set("Metadata-Version", "2.2");
  F->removeIf([](StringRef Field, StringRef Value) {
    return Field == "Requires-Dist" && Value == "numpy";
  });
  EXPECT_EQ(F->str(), "Metadata-Version: 2.2\n"
                      "Name: My.Pkg\n"
                      "Version: 1.0\n"
                      "License: line one\n"
                      "        line two\n"
                      "Provides-Extra: gfx942\n"
                      "\n"
                      "Long description\n"
                      "with: colons\n");
}

TEST(WheelHeaderFile, NoBodyNoFinalNewlineAndCrLf) {
  Expected<WheelHeaderFile> F =
      WheelHeaderFile::parse("Wheel-Version: 1.0\nTag: a\nTag: b", "W");
  ASSERT_TRUE(bool(F));
  EXPECT_EQ(F->getAll("tag"), (std::vector<std::string>{"a", "b"}));
  F->append("Build", "1");
  EXPECT_EQ(F->str(), "Wheel-Version: 1.0\nTag: a\nTag: b\nBuild: 1\n");

  F = WheelHeaderFile::parse("A: 1\r\nB: 2\r\n\r\nbody\r\n", "W");
  ASSERT_TRUE(bool(F));
  EXPECT_EQ(F->get("B"), std::optional<std::string>("2"));
  F->append("C", "3");
  EXPECT_EQ(F->str(), "A: 1\r\nB: 2\r\nC: 3\r\n\r\nbody\r\n");
}

TEST(WheelHeaderFile, Errors) {
  auto Err = [](StringRef Text) {
    Expected<WheelHeaderFile> F = WheelHeaderFile::parse(Text, "'w.whl': WHEEL");
    return F ? std::string() : toString(F.takeError());
  };
  EXPECT_EQ(Err(" continued\n"), "'w.whl': WHEEL: line 1 continues no header");
  EXPECT_EQ(Err("A: 1\nno colon here\n"),
            "'w.whl': WHEEL: line 2 is not a 'Field: value' header: "
            "'no colon here'");
  EXPECT_NE(Err("A: 1\n: empty field\n").find("line 2"), std::string::npos);
}

TEST(Record, ParseAndWrite) {
  std::vector<RecordEntry> Rows = {
      {"pkg/a.py", "sha256=abc", "10"},
      {"pkg/with,comma \"q\".py", "sha256=def", "3"},
      {"pkg-1.0.dist-info/RECORD", "", ""}};
  std::string Text = writeRecord(Rows);
  EXPECT_EQ(Text, "pkg/a.py,sha256=abc,10\n"
                  "\"pkg/with,comma \"\"q\"\".py\",sha256=def,3\n"
                  "pkg-1.0.dist-info/RECORD,,\n");
  Expected<std::vector<RecordEntry>> Back = parseRecord(Text, "R");
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  ASSERT_EQ(Back->size(), 3u);
  EXPECT_EQ((*Back)[1].Path, "pkg/with,comma \"q\".py");
  EXPECT_EQ((*Back)[2].Hash, "");
  // CRLF rows and blank lines are accepted, as csv.reader does.
  Back = parseRecord("a,sha256=x,1\r\n\r\nb,,\r\n", "R");
  ASSERT_TRUE(bool(Back));
  EXPECT_EQ(Back->size(), 2u);

  auto Err = [](StringRef Text) {
    Expected<std::vector<RecordEntry>> R = parseRecord(Text, "R");
    return R ? std::string() : toString(R.takeError());
  };
  EXPECT_EQ(Err("a,b\n"), "R: line 1 has 2 fields, expected 3 (path, hash, size)");
  EXPECT_EQ(Err("a,b,c\n\"x,y,z\n"), "R: unterminated quoted field");
  EXPECT_EQ(Err("\"a\"b,c,d\n"), "R: line 1: text after a closing quote");
  EXPECT_EQ(Err(",h,1\n"), "R: line 1: empty path");
}

TEST(Record, Hashes) {
  // sha256("") and sha256("abc"), urlsafe base64 without padding.
  EXPECT_EQ(recordEntryFor("e", {}).Hash,
            "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
  EXPECT_EQ(recordEntryFor("e", {}).Size, "0");
  std::string Abc = "abc";
  RecordEntry R = recordEntryFor("p", arrayRefFromStringRef(Abc));
  EXPECT_EQ(R.Hash, "sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
  EXPECT_EQ(R.Size, "3");
  RecordHasher H;
  H.update(arrayRefFromStringRef(StringRef("a")));
  H.update(arrayRefFromStringRef(StringRef("bc")));
  EXPECT_EQ(H.finish("p").Hash, R.Hash);
  EXPECT_EQ(urlsafeBase64NoPad({0xfb, 0xff}), "-_8");
}

TEST(WheelOrder, LikeWheel) {
  std::vector<std::string> Names = {
      "pkg-1.0.dist-info/RECORD", "pkg/sub/x.py", "pkg-1.0.dist-info/WHEEL",
      "top.py", "pkg/z.py", "_pkg_kpack/pkg_gfx942.kpack", "pkg/a.py",
      "pkg-1.0.data/scripts/tool", "pkg-1.0.dist-info/METADATA",
      "pkg/sub/deeper/y.py", "pkg/sub/b.py", "pkg-1.0.dist-info/licenses/L"};
  llvm::sort(Names, [](StringRef A, StringRef B) {
    return wheelEntryLess(A, B, "pkg-1.0.dist-info");
  });
  EXPECT_EQ(Names, (std::vector<std::string>{
                       "top.py", "_pkg_kpack/pkg_gfx942.kpack",
                       "pkg/a.py", "pkg/z.py", "pkg/sub/b.py", "pkg/sub/x.py",
                       "pkg/sub/deeper/y.py", "pkg-1.0.data/scripts/tool",
                       "pkg-1.0.dist-info/METADATA", "pkg-1.0.dist-info/WHEEL",
                       "pkg-1.0.dist-info/licenses/L",
                       "pkg-1.0.dist-info/RECORD"}));
}

class WheelFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    SmallString<128> P;
    ASSERT_FALSE(sys::fs::createUniqueDirectory("kpack-wheel-test", P));
    Dir = P.str().str();
  }
  void TearDown() override { sys::fs::remove_directories(Dir); }

  /// Writes a wheel of Files (name, contents); RECORD computed unless given.
  std::string make(StringRef FileName,
                   std::vector<std::pair<std::string, std::string>> Files,
                   std::optional<std::string> Record = std::nullopt,
                   StringRef DistInfo = "pkg-1.0.dist-info") {
    std::string P = Dir + "/" + FileName.str();
    Expected<ZipWriter> W = ZipWriter::create(P);
    EXPECT_TRUE(bool(W));
    std::vector<RecordEntry> Rows;
    for (auto &[Name, Data] : Files) {
      EXPECT_FALSE(bool(W->add(Name, arrayRefFromStringRef(Data),
                               ZipMethod::Deflated)));
      Rows.push_back(recordEntryFor(Name, arrayRefFromStringRef(Data)));
    }
    std::string RecordName = DistInfo.str() + "/RECORD";
    Rows.push_back({RecordName, "", ""});
    std::string R = Record ? *Record : writeRecord(Rows);
    EXPECT_FALSE(bool(W->add(RecordName, arrayRefFromStringRef(R),
                             ZipMethod::Deflated)));
    EXPECT_FALSE(bool(W->commit()));
    return P;
  }
  std::vector<std::pair<std::string, std::string>> basic() {
    return {{"pkg/__init__.py", "x = 1\n"},
            {"pkg-1.0.dist-info/WHEEL",
             "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-any\n"},
            {"pkg-1.0.dist-info/METADATA",
             "Metadata-Version: 2.1\nName: Pkg\nVersion: 1.0\n"}};
  }
  std::string openError(const std::string &P) {
    Expected<WheelFile> W = WheelFile::open(P);
    return W ? std::string() : toString(W.takeError());
  }

  std::string Dir;
};

TEST_F(WheelFileTest, OpenAndVerify) {
  std::string P = make("pkg-1.0-py3-none-any.whl", basic());
  Expected<WheelFile> W = WheelFile::open(P);
  ASSERT_TRUE(bool(W)) << toString(W.takeError());
  EXPECT_EQ(W->distInfoDir(), "pkg-1.0.dist-info");
  EXPECT_EQ(W->dataDir(), "pkg-1.0.data");
  EXPECT_EQ(W->projectName(), "Pkg");
  EXPECT_EQ(W->version(), "1.0");
  EXPECT_FALSE(W->rootIsPurelib());
  EXPECT_EQ(W->tags(), std::vector<std::string>{"py3-none-any"});
  EXPECT_TRUE(W->isRecordFile("pkg-1.0.dist-info/RECORD"));
  EXPECT_TRUE(W->isRecordFile("pkg-1.0.dist-info/RECORD.jws"));
  EXPECT_FALSE(W->isRecordFile("pkg-1.0.dist-info/WHEEL"));
  std::string Got;
  Expected<RecordEntry> Row = W->readVerified(
      *W->zip().find("pkg/__init__.py"), [&](ArrayRef<uint8_t> C) {
        Got += toStringRef(C);
        return Error::success();
      });
  ASSERT_TRUE(bool(Row)) << toString(Row.takeError());
  EXPECT_EQ(Got, "x = 1\n");
  EXPECT_EQ(Row->Size, "6");
}

/// RECORD rows of Files, each hashed, then Extra.
std::string
recordOf(const std::vector<std::pair<std::string, std::string>> &Files,
         StringRef Extra = "") {
  std::vector<RecordEntry> Rows;
  for (const auto &[Name, Data] : Files)
    Rows.push_back(recordEntryFor(Name, arrayRefFromStringRef(Data)));
  return writeRecord(Rows) + Extra.str();
}

TEST_F(WheelFileTest, OpenBuffer) {
  std::string P = make("pkg-1.0-py3-none-any.whl", basic());
  auto Buf = MemoryBuffer::getFile(P);
  ASSERT_TRUE(bool(Buf));
  Expected<WheelFile> W = WheelFile::openBuffer(std::move(*Buf));
  ASSERT_TRUE(bool(W)) << toString(W.takeError());
  EXPECT_EQ(W->path(), P);
  EXPECT_EQ(W->distInfoDir(), "pkg-1.0.dist-info");
  Expected<WheelFile> Bad =
      WheelFile::openBuffer(MemoryBuffer::getMemBufferCopy("PK", "x.zip"));
  EXPECT_NE(toString(Bad.takeError()).find("not a wheel file name"),
            std::string::npos);
}

// Every file's RECORD row has a hash (the wheel format's rule); RECORD and
// its signatures have none.
TEST_F(WheelFileTest, RecordRowsWithoutHash) {
  auto Files = basic();
  std::string NoHash =
      "pkg/__init__.py,,6\n" + recordOf({Files.begin() + 1, Files.end()},
                                        "pkg-1.0.dist-info/RECORD,,\n");
  EXPECT_NE(openError(make("pkg-1.0-py3-none-any.whl", Files, NoHash))
                .find("RECORD has no hash for 'pkg/__init__.py' (only RECORD "
                      "and its signatures may have none)"),
            std::string::npos);
  Files.push_back({"pkg-1.0.dist-info/RECORD.jws", "{}"});
  Files.push_back({"pkg-1.0.dist-info/RECORD.p7s", "sig"});
  std::string Signed = recordOf({Files.begin(), Files.end() - 2},
                                "pkg-1.0.dist-info/RECORD.jws,,\n"
                                "pkg-1.0.dist-info/RECORD.p7s,,\n"
                                "pkg-1.0.dist-info/RECORD,,\n");
  EXPECT_EQ(openError(make("pkg-1.0-py3-none-any.whl", Files, Signed)), "");
}

TEST_F(WheelFileTest, RecordMismatches) {
  auto Files = basic();
  std::string Bad = "pkg/__init__.py,sha256=" + std::string(43, 'A') + ",6\n" +
                    recordOf({Files.begin() + 1, Files.end()},
                             "pkg-1.0.dist-info/RECORD,,\n");
  std::string P = make("pkg-1.0-py3-none-any.whl", Files, Bad);
  Expected<WheelFile> W = WheelFile::open(P);
  ASSERT_TRUE(bool(W)) << toString(W.takeError());
  Expected<RecordEntry> Row =
      W->readVerified(*W->zip().find("pkg/__init__.py"), nullptr);
  EXPECT_NE(toString(Row.takeError()).find("contents do not match RECORD"),
            std::string::npos);

  std::string Unlisted = recordOf({Files.begin() + 1, Files.end()});
  P = make("pkg-1.0-py3-none-any.whl", Files, Unlisted);
  EXPECT_NE(openError(P).find("RECORD does not list 'pkg/__init__.py'"),
            std::string::npos);
  P = make("pkg-1.0-py3-none-any.whl", Files,
           Bad + "pkg/missing.py,sha256=x,1\n");
  EXPECT_NE(openError(P).find("RECORD lists 'pkg/missing.py', which the wheel "
                              "does not contain"),
            std::string::npos);
}

TEST_F(WheelFileTest, NameAndMetadataErrors) {
  auto Files = basic();
  EXPECT_NE(openError(make("other-1.0-py3-none-any.whl", Files))
                .find("does not match the file name (expected "
                      "'other-1.0.dist-info')"),
            std::string::npos);
  Files[2].second = "Metadata-Version: 2.1\nName: Pkg\nVersion: 2.0\n";
  EXPECT_NE(openError(make("pkg-1.0-py3-none-any.whl", Files))
                .find("METADATA has version '2.0'"),
            std::string::npos);
  Files = basic();
  Files[1].second = "Wheel-Version: 2.0\n";
  EXPECT_NE(openError(make("pkg-1.0-py3-none-any.whl", Files))
                .find("unsupported Wheel-Version '2.0'"),
            std::string::npos);
  Files = basic();
  Files.push_back({"other-1.0.dist-info/METADATA", "x"});
  EXPECT_NE(openError(make("pkg-1.0-py3-none-any.whl", Files))
                .find("several .dist-info directories: other-1.0.dist-info, "
                      "pkg-1.0.dist-info"),
            std::string::npos);
  Files = basic();
  Files.erase(Files.begin() + 1);
  EXPECT_NE(openError(make("pkg-1.0-py3-none-any.whl", Files))
                .find("no pkg-1.0.dist-info/WHEEL"),
            std::string::npos);
}

} // namespace

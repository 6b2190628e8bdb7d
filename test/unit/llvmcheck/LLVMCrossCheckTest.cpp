//===- LLVMCrossCheckTest.cpp - kpack's bundle codec against libLLVM's ----===//
//
// kpack_format decodes offload bundles without LLVM; libLLVM has its own
// reader (llvm::object::extractOffloadBundleFatBinary and
// CompressedOffloadBundle::decompress/compress). Both must find the same
// bundles, the same entries at the same offsets and the same payload bytes in
// objects clang-22 compiles here (uncompressed, CCOB v2 and v3, a linked
// library with two bundles) and in Debian's librocrand (ROCm 5 output).
//
//===----------------------------------------------------------------------===//

#include "kpack/BundleCodec.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Object/OffloadBundle.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace llvm;

namespace {

// Absolute paths found at configure time (cmake/KpackPrograms.cmake).
const std::string Clangxx = KPACK_PROGRAM_CLANGXX;
const char *const Rocrand = KPACK_FILE_LIBROCRAND;

int run(const std::string &Cmd) {
  int Rc = std::system(Cmd.c_str());
  if (Rc != 0)
    ADD_FAILURE() << "command failed: " << Cmd;
  return Rc;
}

std::unique_ptr<MemoryBuffer> readFile(const std::string &Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> B =
      MemoryBuffer::getFile(Path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!B) {
    ADD_FAILURE() << Path << ": " << B.getError().message();
    return nullptr;
  }
  return std::move(*B);
}

// Entries and payloads of one bundle as libLLVM reads them.
struct LlvmBundle {
  SmallVector<object::OffloadBundleEntry> Entries;
  StringRef Base; ///< the buffer Entries' offsets point into
  std::unique_ptr<MemoryBuffer> Decompressed;
};

// Decodes every bundle of File with both readers and compares them: bundle
// count, and per entry the ID, the size, the offset and the payload bytes.
// Returns the number of device code objects compared.
size_t crossCheck(const std::string &File) {
  std::unique_ptr<MemoryBuffer> Buf = readFile(File);
  if (!Buf)
    return 0;
  Expected<std::unique_ptr<object::ObjectFile>> Obj =
      object::ObjectFile::createObjectFile(Buf->getMemBufferRef());
  if (!Obj) {
    ADD_FAILURE() << File << ": " << toString(Obj.takeError());
    return 0;
  }

  // The project's codec, on the .hip_fatbin contents (located with LLVM's
  // ELF reader, which is not what is under test).
  std::vector<kpack::Bundle> Mine;
  StringRef Section;
  uint64_t SectionFileOffset = 0;
  for (const object::SectionRef &Sec : (*Obj)->sections()) {
    Expected<StringRef> Name = Sec.getName();
    if (!Name || *Name != ".hip_fatbin")
      continue;
    Expected<StringRef> Contents = Sec.getContents();
    if (!Contents) {
      ADD_FAILURE() << toString(Contents.takeError());
      return 0;
    }
    Section = *Contents;
    SectionFileOffset = object::ELFSectionRef(Sec).getOffset();
    kpack::Status S = kpack::decodeBundleSection(
        reinterpret_cast<const uint8_t *>(Section.data()), Section.size(),
        Mine);
    EXPECT_FALSE(S) << S.message();
  }

  SmallVector<object::OffloadBundleFatBin> Theirs;
  if (Error E = object::extractOffloadBundleFatBinary(**Obj, Theirs)) {
    ADD_FAILURE() << File << ": " << toString(std::move(E));
    return 0;
  }

  size_t Compared = 0;
  EXPECT_EQ(Mine.size(), Theirs.size()) << File;
  for (size_t I = 0; I < Mine.size() && I < Theirs.size(); ++I) {
    const kpack::Bundle &M = Mine[I];
    const std::string Where = File + " bundle " + std::to_string(I);
    // Uncompressed: LLVM's offsets are file offsets. CCOB: LLVM's extraction
    // keeps no decompressed bytes, so the bundle is decompressed and read
    // with LLVM here, offsets then being into the decompressed bundle.
    LlvmBundle L;
    L.Entries = Theirs[I].getEntries();
    L.Base = Buf->getBuffer();
    uint64_t BundleOffset = SectionFileOffset + M.SectionOffset;
    if (M.Compression != kpack::BundleCompression::None) {
      std::unique_ptr<MemoryBuffer> In = MemoryBuffer::getMemBuffer(
          Section.substr(M.SectionOffset, M.EncodedSize), "", false);
      Expected<std::unique_ptr<MemoryBuffer>> Out =
          object::CompressedOffloadBundle::decompress(*In);
      if (!Out) {
        ADD_FAILURE() << Where << ": " << toString(Out.takeError());
        continue;
      }
      L.Decompressed = std::move(*Out);
      Expected<std::unique_ptr<object::OffloadBundleFatBin>> Read =
          object::OffloadBundleFatBin::create(L.Decompressed->getMemBufferRef(),
                                              0, File);
      if (!Read) {
        ADD_FAILURE() << Where << ": " << toString(Read.takeError());
        continue;
      }
      // Same IDs and sizes as the extraction from the file found.
      SmallVector<object::OffloadBundleEntry> Entries = (*Read)->getEntries();
      EXPECT_EQ(Entries.size(), L.Entries.size()) << Where;
      for (size_t J = 0; J < Entries.size() && J < L.Entries.size(); ++J) {
        EXPECT_EQ(Entries[J].ID, L.Entries[J].ID) << Where;
        EXPECT_EQ(Entries[J].Size, L.Entries[J].Size) << Where;
      }
      L.Entries = std::move(Entries);
      L.Base = L.Decompressed->getBuffer();
      BundleOffset = 0;
    }
    if (M.Entries.size() != L.Entries.size()) {
      ADD_FAILURE() << Where << ": " << M.Entries.size()
                    << " entries against LLVM's " << L.Entries.size();
      continue;
    }
    for (size_t J = 0; J < L.Entries.size(); ++J) {
      const kpack::BundleEntry &ME = M.Entries[J];
      const object::OffloadBundleEntry &TE = L.Entries[J];
      EXPECT_EQ(ME.Id, TE.ID) << Where;
      EXPECT_EQ(ME.Size, TE.Size) << Where << " " << TE.ID;
      EXPECT_EQ(BundleOffset + ME.Offset, TE.Offset) << Where << " " << TE.ID;
      if (TE.Offset + TE.Size > L.Base.size()) {
        ADD_FAILURE() << Where << " " << TE.ID << ": outside LLVM's buffer";
        continue;
      }
      EXPECT_TRUE(StringRef(reinterpret_cast<const char *>(M.payload(ME)),
                            ME.Size) == L.Base.substr(TE.Offset, TE.Size))
          << Where << " " << TE.ID << ": payloads differ";
      if (ME.isDevice())
        ++Compared;
    }
  }
  return Compared;
}

class LLVMCrossCheckTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    SmallString<128> Path;
    if (sys::fs::createUniqueDirectory("kpack-llvmcheck", Path)) {
      ADD_FAILURE() << "cannot create a temporary directory";
      return;
    }
    Dir = std::string(Path);
    std::string Src = Dir + "/k.hip";
    {
      std::FILE *F = std::fopen(Src.c_str(), "w");
      ASSERT_NE(F, nullptr);
      std::fputs("#include \"hip_min.h\"\n"
                 "#ifndef SECOND\n"
                 "__global__ void kern(int *p) { p[0] = 42; }\n"
                 "__device__ int devvar;\n"
                 "#else\n"
                 "__global__ void kern2(float *p) { p[1] = 1.5f; }\n"
                 "#endif\n",
                 F);
      std::fclose(F);
    }
    const std::string Hip =
        Clangxx +
        " -x hip -nogpuinc -nogpulib -I" KPACK_SOURCE_DIR "/test/inputs"
        " --offload-arch=gfx90a:xnack+ --offload-arch=gfx1100"
        " --offload-arch=gfx11-generic -c '" +
        Src + "'";
    auto Q = [](const char *Name) { return "'" + Dir + "/" + Name + "'"; };
    const std::string Objcopy =
        std::string(KPACK_PROGRAM_LLVM_OBJCOPY) + " --dump-section .hip_fatbin=";
    if (run(Hip + " -o " + Q("plain.o")) ||
        run(Hip + " -DSECOND -o " + Q("plain2.o")) ||
        run(Hip + " --offload-compress -o " + Q("ccob.o")) ||
        run("env COMPRESSED_BUNDLE_FORMAT_VERSION=2 " + Hip +
            " --offload-compress -o " + Q("ccob2.o")) ||
        run(Clangxx + " -shared -fuse-ld=lld -nostdlib -o " +
            Q("linked.so") + " " + Q("plain.o") + " " + Q("plain2.o")) ||
        run(Objcopy + Q("plain.fb") + " " + Q("plain.o")) ||
        run(Objcopy + Q("ccob.fb") + " " + Q("ccob.o")) ||
        run(Objcopy + Q("ccob2.fb") + " " + Q("ccob2.o")))
      Dir.clear();
  }
  static void TearDownTestSuite() {
    if (!Dir.empty())
      (void)sys::fs::remove_directories(Dir);
  }
  void SetUp() override {
    if (Dir.empty())
      FAIL() << "test inputs could not be generated with " << Clangxx
             << " (see the failed command above)";
  }
  static std::string Dir;
};
std::string LLVMCrossCheckTest::Dir;

TEST_F(LLVMCrossCheckTest, UncompressedHipObject) {
  EXPECT_EQ(crossCheck(Dir + "/plain.o"), 3u);
}

TEST_F(LLVMCrossCheckTest, CompressedHipObject) {
  EXPECT_EQ(crossCheck(Dir + "/ccob.o"), 3u);
}

// Two bundles in one linked section: positions must agree as well.
TEST_F(LLVMCrossCheckTest, LinkedSharedLibrary) {
  EXPECT_EQ(crossCheck(Dir + "/linked.so"), 6u);
}

TEST_F(LLVMCrossCheckTest, CompressedHipObjectV2) {
  EXPECT_EQ(crossCheck(Dir + "/ccob2.o"), 3u);
}

// clang's CCOB (v3 by default, v2 on request): LLVM's decompress and the
// project's decoder yield the same uncompressed bundle.
TEST_F(LLVMCrossCheckTest, ClangCcobDecompressesAlike) {
  for (const auto &[File, Version] :
       {std::pair<const char *, unsigned>{"ccob.fb", 3}, {"ccob2.fb", 2}}) {
    std::unique_ptr<MemoryBuffer> Ccob = readFile(Dir + "/" + File);
    ASSERT_TRUE(Ccob);
    Expected<std::unique_ptr<MemoryBuffer>> Theirs =
        object::CompressedOffloadBundle::decompress(*Ccob);
    ASSERT_TRUE(bool(Theirs)) << toString(Theirs.takeError());
    kpack::Bundle Mine;
    kpack::Status S = kpack::decodeBundle(
        reinterpret_cast<const uint8_t *>(Ccob->getBufferStart()),
        Ccob->getBufferSize(), Mine);
    ASSERT_FALSE(S) << S.message();
    EXPECT_EQ(Mine.CcobVersion, Version) << File;
    EXPECT_EQ(Mine.EncodedSize, Ccob->getBufferSize()) << File;
    EXPECT_TRUE(StringRef(reinterpret_cast<const char *>(Mine.Data.data()),
                          Mine.Data.size()) == (*Theirs)->getBuffer())
        << File;
  }
}

// LLVM's compressor, zlib and zstd, CCOB v2 and v3: the project's decoder
// recovers the input bundle and reports the method and version.
TEST_F(LLVMCrossCheckTest, DecodesLlvmCompressedBundles) {
  std::unique_ptr<MemoryBuffer> Plain = readFile(Dir + "/plain.fb");
  ASSERT_TRUE(Plain);
  for (compression::Format F :
       {compression::Format::Zlib, compression::Format::Zstd}) {
    if (!(F == compression::Format::Zlib ? compression::zlib::isAvailable()
                                         : compression::zstd::isAvailable()))
      continue;
    for (uint16_t Version : {2, 3}) {
      Expected<std::unique_ptr<MemoryBuffer>> Ccob =
          object::CompressedOffloadBundle::compress(compression::Params(F),
                                                    *Plain, Version);
      ASSERT_TRUE(bool(Ccob)) << toString(Ccob.takeError());
      kpack::Bundle Mine;
      kpack::Status S = kpack::decodeBundle(
          reinterpret_cast<const uint8_t *>((*Ccob)->getBufferStart()),
          (*Ccob)->getBufferSize(), Mine);
      ASSERT_FALSE(S) << S.message();
      EXPECT_EQ(Mine.Compression, F == compression::Format::Zlib
                                      ? kpack::BundleCompression::Zlib
                                      : kpack::BundleCompression::Zstd);
      EXPECT_EQ(Mine.CcobVersion, Version);
      EXPECT_TRUE(StringRef(reinterpret_cast<const char *>(Mine.Data.data()),
                            Mine.Data.size()) == Plain->getBuffer());
      EXPECT_EQ(Mine.Entries.size(), 4u);
    }
  }
}

TEST_F(LLVMCrossCheckTest, DebianRocrand) {
  if (!sys::fs::exists(Rocrand))
    FAIL() << Rocrand << " is missing (Debian package librocrand1)";
  EXPECT_EQ(crossCheck(Rocrand), 7u);
}

} // namespace

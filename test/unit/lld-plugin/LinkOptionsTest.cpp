//===- LinkOptionsTest.cpp - ld.kpack command-line splitting --------------===//

#include "LinkOptions.h"

#include "gtest/gtest.h"

using namespace kpack::link;

namespace {

ParsedCommandLine parseOk(const std::vector<std::string> &Args) {
  auto P = parseCommandLine(Args);
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  return std::move(*P);
}

std::string parseError(const std::vector<std::string> &Args) {
  auto P = parseCommandLine(Args);
  if (P)
    return "";
  return llvm::toString(P.takeError());
}

TEST(LinkOptions, KpackOptionsAreStrippedInBothSpellings) {
  ParsedCommandLine P = parseOk(
      {"-pie", "a.o", "--kpack-output=x.kpack", "--kpack-name", "lib",
       "-o", "out", "--kpack-search-path=p1", "--kpack-search-path", "p2",
       "--kpack-compression-level=0", "--kpack-compression", "zstd-shared",
       "-lc"});
  EXPECT_EQ(P.Kpack.OutputArchive, "x.kpack");
  EXPECT_EQ(P.Kpack.KernelName, "lib");
  EXPECT_EQ(P.Kpack.SearchPaths, (std::vector<std::string>{"p1", "p2"}));
  EXPECT_EQ(P.Kpack.CompressionLevel, 0);
  EXPECT_EQ(P.Kpack.Compression, "zstd-shared");
  EXPECT_EQ(P.Linker.Args,
            (std::vector<std::string>{"-pie", "a.o", "-o", "out", "-lc"}));
  EXPECT_EQ(P.Linker.Output, "out");
  EXPECT_FALSE(P.Linker.Relocatable);
}

TEST(LinkOptions, OutputSpellings) {
  EXPECT_EQ(parseOk({"-ofoo"}).Linker.Output, "foo");
  EXPECT_EQ(parseOk({"--output=bar"}).Linker.Output, "bar");
  EXPECT_EQ(parseOk({"--output", "baz"}).Linker.Output, "baz");
  EXPECT_EQ(parseOk({"a.o"}).Linker.Output, "a.out");
  // Long options that start with 'o' are not -o.
  EXPECT_EQ(parseOk({"-oformat=elf64-x86-64", "-o", "x"}).Linker.Output, "x");
  EXPECT_EQ(parseOk({"-orphan-handling=warn", "-o", "y"}).Linker.Output, "y");
}

TEST(LinkOptions, OutputIsNormalizedAndRedirectable) {
  ParsedCommandLine P = parseOk({"a.o", "--output=out", "-lc"});
  EXPECT_EQ(P.Linker.Args,
            (std::vector<std::string>{"a.o", "-o", "out", "-lc"}));
  LinkerArgs T = P.Linker.withOutput("/tmp/x");
  EXPECT_EQ(T.Args, (std::vector<std::string>{"a.o", "-o", "/tmp/x", "-lc"}));
  EXPECT_EQ(T.Output, "/tmp/x");
  // No -o: one is appended.
  EXPECT_EQ(parseOk({"a.o"}).Linker.withOutput("y").Args,
            (std::vector<std::string>{"a.o", "-o", "y"}));
}

TEST(LinkOptions, Relocatable) {
  EXPECT_TRUE(parseOk({"-r", "a.o", "-o", "b.o"}).Linker.Relocatable);
  EXPECT_TRUE(parseOk({"--relocatable", "a.o"}).Linker.Relocatable);
}

TEST(LinkOptions, Errors) {
  EXPECT_NE(parseError({"--kpack-outptu=x"}).find("unknown option"),
            std::string::npos);
  EXPECT_NE(parseError({"--kpack-output=a", "--kpack-dir=d"})
                .find("mutually exclusive"),
            std::string::npos);
  EXPECT_NE(parseError({"--kpack-output"}).find("missing value"),
            std::string::npos);
  EXPECT_NE(parseError({"--kpack-output="}).find("empty value"),
            std::string::npos);
  EXPECT_NE(parseError({"--kpack-output=a", "--kpack-compression-level=x"})
                .find("invalid --kpack-compression-level"),
            std::string::npos);
  EXPECT_NE(parseError({"--kpack-name=n"}).find("need --kpack-output"),
            std::string::npos);
}

TEST(LinkOptions, MetadataRoom) {
  EXPECT_EQ(parseOk({"--kpack-dir=d", "--kpack-metadata-room=1024"})
                .Kpack.MetadataRoom,
            1024u);
  EXPECT_EQ(parseOk({"--kpack-dir=d", "--kpack-metadata-room", "64"})
                .Kpack.MetadataRoom,
            64u);
  EXPECT_FALSE(parseOk({"--kpack-dir=d"}).Kpack.MetadataRoom.has_value());
  EXPECT_NE(parseError({"--kpack-dir=d", "--kpack-metadata-room=1k"})
                .find("invalid --kpack-metadata-room '1k'"),
            std::string::npos);
  // More than a loader reads (64 KiB) is no use.
  EXPECT_NE(parseError({"--kpack-dir=d", "--kpack-metadata-room=65537"})
                .find("up to 65536"),
            std::string::npos);
  EXPECT_NE(parseError({"--kpack-metadata-room=1024"})
                .find("need --kpack-output or --kpack-dir"),
            std::string::npos);
}

// The frame cache: its directory and a policy in lld's
// --thinlto-cache-policy syntax, checked here; a link without archives
// ignores them (lld never sees them).
TEST(LinkOptions, FrameCache) {
  ParsedCommandLine P =
      parseOk({"a.o", "--kpack-dir=d", "--kpack-cache-dir", "c",
               "--kpack-cache-policy=prune_after=1h:cache_size_bytes=1g"});
  EXPECT_EQ(P.Kpack.CacheDir, "c");
  EXPECT_EQ(P.Kpack.CachePolicy, "prune_after=1h:cache_size_bytes=1g");
  EXPECT_EQ(P.Linker.Args, (std::vector<std::string>{"a.o"}));
  P = parseOk({"a.o", "--kpack-cache-dir=c"});
  EXPECT_EQ(P.Linker.Args, (std::vector<std::string>{"a.o"}));
  std::string E = parseError(
      {"--kpack-dir=d", "--kpack-cache-dir=c", "--kpack-cache-policy=x=1"});
  EXPECT_NE(E.find("--kpack-cache-policy: invalid cache policy 'x=1'"),
            std::string::npos)
      << E;
  EXPECT_EQ(E.find('\n'), std::string::npos) << E;
  EXPECT_NE(parseError({"--kpack-dir=d", "--kpack-cache-policy=prune_after=1h"})
                .find("needs --kpack-cache-dir"),
            std::string::npos);
}

// lld's --time-trace options: ld.kpack records the trace of a link that
// emits archives itself (lld never sees them); an lld link gets them as
// they are.
TEST(LinkOptions, TimeTrace) {
  ParsedCommandLine P =
      parseOk({"a.o", "--kpack-dir=d", "--time-trace", "-o", "out",
               "--time-trace-granularity", "50"});
  ASSERT_TRUE(P.Kpack.TimeTrace.has_value());
  EXPECT_EQ(*P.Kpack.TimeTrace, "");
  EXPECT_EQ(P.Kpack.TimeTraceGranularity, 50u);
  EXPECT_EQ(P.Linker.Args, (std::vector<std::string>{"a.o", "-o", "out"}));
  P = parseOk({"-time-trace=t.json", "--kpack-output=x.kpack",
               "-time-trace-granularity=7"});
  EXPECT_EQ(P.Kpack.TimeTrace, std::optional<std::string>("t.json"));
  EXPECT_EQ(P.Kpack.TimeTraceGranularity, 7u);
  EXPECT_TRUE(P.Linker.Args.empty());
  P = parseOk({"a.o", "--time-trace=t.json", "--time-trace-granularity=7"});
  EXPECT_FALSE(P.Kpack.TimeTrace.has_value());
  EXPECT_EQ(P.Linker.Args,
            (std::vector<std::string>{"a.o", "--time-trace=t.json",
                                      "--time-trace-granularity=7"}));
  EXPECT_NE(parseError({"--kpack-dir=d", "--time-trace-granularity=x"})
                .find("invalid --time-trace-granularity 'x'"),
            std::string::npos);
  EXPECT_NE(parseError({"--kpack-dir=d", "--time-trace-granularity"})
                .find("missing value for --time-trace-granularity"),
            std::string::npos);
}

TEST(LinkOptions, ClassifiesInputsAndValues) {
  EXPECT_EQ(classifyLinkerArg("a.o"), ArgKind::Input);
  EXPECT_EQ(classifyLinkerArg("/x/libfoo.a"), ArgKind::Input);
  EXPECT_EQ(classifyLinkerArg("-o"), ArgKind::WithValue);
  EXPECT_EQ(classifyLinkerArg("-L"), ArgKind::WithValue);
  EXPECT_EQ(classifyLinkerArg("-soname"), ArgKind::WithValue);
  EXPECT_EQ(classifyLinkerArg("--version-script"), ArgKind::WithValue);
  EXPECT_EQ(classifyLinkerArg("--version-script=v.map"), ArgKind::Flag);
  EXPECT_EQ(classifyLinkerArg("-Lfoo"), ArgKind::Flag);
  EXPECT_EQ(classifyLinkerArg("--whole-archive"), ArgKind::Flag);
  EXPECT_EQ(classifyLinkerArg("-pie"), ArgKind::Flag);
  EXPECT_EQ(classifyLinkerArg("-"), ArgKind::Input);
}

} // namespace

namespace {

// ld.kpack run as lld-link (MSVC style): kpack options in lld-link's
// spelling (and the GNU one), the rest verbatim, the output normalized to
// "-out:PATH".
TEST(LldLinkOptions, KpackOptionsAndOutput) {
  auto P = parseLldLinkCommandLine(
      {"/nologo", "/OUT:app.exe", "a.obj", "/kpack-output:app.kpack",
       "-kpack-name:lib", "--kpack-search-path=p1", "/release"});
  ASSERT_TRUE(static_cast<bool>(P)) << llvm::toString(P.takeError());
  EXPECT_TRUE(P->Linker.LldLink);
  EXPECT_EQ(P->Kpack.OutputArchive, "app.kpack");
  EXPECT_EQ(P->Kpack.KernelName, "lib");
  EXPECT_EQ(P->Kpack.SearchPaths, (std::vector<std::string>{"p1"}));
  EXPECT_EQ(P->Linker.Output, "app.exe");
  EXPECT_EQ(P->Linker.Args,
            (std::vector<std::string>{"/nologo", "-out:app.exe", "a.obj",
                                      "/release"}));
  LinkerArgs T = P->Linker.withOutput("/tmp/x/app.exe");
  EXPECT_EQ(T.Args[1], "-out:/tmp/x/app.exe");
  EXPECT_EQ(T.Output, "/tmp/x/app.exe");
}

TEST(LldLinkOptions, WithoutKpackOptionsEverythingPasses) {
  auto P = parseLldLinkCommandLine({"/dll", "a.obj", "/out:x.dll"});
  ASSERT_TRUE(static_cast<bool>(P)) << llvm::toString(P.takeError());
  EXPECT_FALSE(P->Kpack.emitsArchives());
  EXPECT_EQ(P->Linker.Args,
            (std::vector<std::string>{"/dll", "a.obj", "-out:x.dll"}));
}

TEST(LldLinkOptions, Errors) {
  auto Err = [](const std::vector<std::string> &Args) {
    auto P = parseLldLinkCommandLine(Args);
    return P ? std::string() : llvm::toString(P.takeError());
  };
  EXPECT_NE(Err({"a.obj", "/kpack-output:x.kpack"}).find("/out:"),
            std::string::npos);
  EXPECT_NE(Err({"/out:a.exe", "/kpack-bogus:1"}).find("unknown option"),
            std::string::npos);
  EXPECT_NE(Err({"/out:a.exe", "/kpack-output"}).find("missing value"),
            std::string::npos);
  EXPECT_NE(Err({"/out:a.exe", "/kpack-output:a", "/kpack-dir:d"})
                .find("mutually exclusive"),
            std::string::npos);
}

} // namespace

//===- MetadataTest.cpp - HIPK kpack metadata -----------------------------===//

#include "kpack/Metadata.h"

#include <gtest/gtest.h>
#include <msgpack.hpp>

using namespace kpack;

namespace {

std::vector<uint8_t> pack(const std::function<void(msgpack::packer<msgpack::sbuffer> &)> &F) {
  msgpack::sbuffer Buf;
  msgpack::packer<msgpack::sbuffer> P(Buf);
  F(P);
  return std::vector<uint8_t>(Buf.data(), Buf.data() + Buf.size());
}

std::string decodeError(const std::vector<uint8_t> &B) {
  KpackMetadata M;
  Status S = decodeKpackMetadata(B.data(), B.size(), M);
  return S ? S.message() : "";
}

TEST(MetadataTest, EncodesFixedKeyOrder) {
  std::vector<uint8_t> B;
  ASSERT_FALSE(encodeKpackMetadata({"lib/libx.so", {"../.kpack/x_@GFXARCH@.kpack"}}, B));
  // fixmap(2), "kernel_name", str, "kpack_search_paths", fixarray(1), str
  std::vector<uint8_t> Want = pack([](auto &P) {
    P.pack_map(2);
    P.pack(std::string("kernel_name"));
    P.pack(std::string("lib/libx.so"));
    P.pack(std::string("kpack_search_paths"));
    P.pack_array(1);
    P.pack(std::string("../.kpack/x_@GFXARCH@.kpack"));
  });
  EXPECT_EQ(B, Want);
  EXPECT_EQ(B[0], 0x82);
  EXPECT_EQ(B[1], 0xa0 | 11);
}

TEST(MetadataTest, RoundTripsWithTrailingBytes) {
  KpackMetadata In{"bin/app", {"a.kpack", "/abs/b_@GFXARCH@.kpack", ""}};
  std::vector<uint8_t> B;
  ASSERT_FALSE(encodeKpackMetadata(In, B));
  size_t Encoded = B.size();
  B.resize(B.size() + 50, 0xcc); // whatever follows in the host binary
  KpackMetadata Out;
  size_t Consumed = 0;
  ASSERT_FALSE(decodeKpackMetadata(B.data(), B.size(), Out, MetadataMode::Strict, &Consumed));
  EXPECT_EQ(Consumed, Encoded);
  EXPECT_EQ(Out.KernelName, In.KernelName);
  EXPECT_EQ(Out.SearchPaths, In.SearchPaths);
}

TEST(MetadataTest, AcceptsOtherKeyOrderAndUnknownKeys) {
  std::vector<uint8_t> B = pack([](auto &P) {
    P.pack_map(3);
    P.pack(std::string("kpack_search_paths"));
    P.pack_array(1);
    P.pack(std::string("p"));
    P.pack(std::string("future"));
    P.pack(42);
    P.pack(std::string("kernel_name"));
    P.pack(std::string("k"));
  });
  EXPECT_EQ(decodeError(B), "");
}

TEST(MetadataTest, RejectsMalformed) {
  EXPECT_NE(decodeError({}).find("truncated"), std::string::npos);
  EXPECT_NE(decodeError({0xc1}).find("not valid msgpack"), std::string::npos);
  EXPECT_NE(decodeError(pack([](auto &P) { P.pack(7); })).find("not a msgpack map"),
            std::string::npos);
  EXPECT_NE(decodeError(pack([](auto &P) {
              P.pack_map(1);
              P.pack(std::string("kernel_name"));
              P.pack(std::string("k"));
            })).find("lacks 'kpack_search_paths'"),
            std::string::npos);
  EXPECT_NE(decodeError(pack([](auto &P) {
              P.pack_map(2);
              P.pack(std::string("kernel_name"));
              P.pack(5);
              P.pack(std::string("kpack_search_paths"));
              P.pack_array(0);
            })).find("'kernel_name' is not a string"),
            std::string::npos);
  EXPECT_NE(decodeError(pack([](auto &P) {
              P.pack_map(2);
              P.pack(std::string("kernel_name"));
              P.pack(std::string("k"));
              P.pack(std::string("kpack_search_paths"));
              P.pack_array(0);
            })).find("no search path"),
            std::string::npos);
  EXPECT_NE(decodeError(pack([](auto &P) {
              P.pack_map(2);
              P.pack(std::string("kernel_name"));
              P.pack(std::string("k"));
              P.pack(std::string("kpack_search_paths"));
              P.pack_array(1);
              P.pack(1.5);
            })).find("non-string"),
            std::string::npos);
  // Every truncation of a valid record fails cleanly.
  std::vector<uint8_t> Good;
  ASSERT_FALSE(encodeKpackMetadata({"kernel", {"x", "y"}}, Good));
  for (size_t Len = 0; Len < Good.size(); ++Len)
    EXPECT_NE(decodeError(std::vector<uint8_t>(Good.begin(), Good.begin() + Len)), "") << Len;
}

TEST(MetadataTest, SizeIsBounded) {
  std::vector<uint8_t> B;
  KpackMetadata Big{"k", {std::string(MaxKpackMetadataSize, 'p')}};
  EXPECT_TRUE(encodeKpackMetadata(Big, B));
  EXPECT_TRUE(encodeKpackMetadata({"k", {}}, B));
  // A record longer than the read limit is reported as truncated, even if
  // the buffer holds all of it.
  std::vector<uint8_t> Long = pack([](auto &P) {
    P.pack_map(2);
    P.pack(std::string("kernel_name"));
    P.pack(std::string(MaxKpackMetadataSize, 'k'));
    P.pack(std::string("kpack_search_paths"));
    P.pack_array(1);
    P.pack(std::string("p"));
  });
  EXPECT_NE(decodeError(Long).find("truncated"), std::string::npos);
}

} // namespace

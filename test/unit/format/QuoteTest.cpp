//===- QuoteTest.cpp - kpack::quoteInput / escapeInput --------------------===//

#include "kpack/Quote.h"

#include <gtest/gtest.h>

#include <string>

using namespace kpack;

TEST(Quote, PrintableTextIsKeptWhole) {
  EXPECT_EQ(quoteInput("hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"),
            "'hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-'");
  EXPECT_EQ(quoteInput(""), "''");
}

TEST(Quote, OtherBytesAreEscaped) {
  EXPECT_EQ(quoteInput(std::string("a\0\xff\n'\\", 6)),
            "'a\\x00\\xff\\x0a\\'\\\\'");
  EXPECT_EQ(escapeInput(std::string("\x7f", 1)), "\\x7f");
}

TEST(Quote, LongInputIsCutAtAWholeCharacter) {
  // 14 escapes of 4 characters fit in 56, a 15th does not.
  std::string Fourteen;
  for (int I = 0; I < 14; ++I)
    Fourteen += "\\x00";
  EXPECT_EQ(quoteInput(std::string(8000, '\0')), "'" + Fourteen + "'...");
  EXPECT_EQ(escapeInput(std::string(1000, 'x')),
            std::string(MaxExcerptChars, 'x') + "...");
  EXPECT_EQ(escapeInput("abcdef", 4), "abcd...");
}

//===- kpack/TargetIdList.h - Lists of target IDs in one string -*- C++ -*-===//
//
// ROCM_KPACK_ARCH_OVERRIDE names one or more target IDs, separated by ',' or
// ':'. Since ':' also separates a target ID's features, a token that does not
// start a processor ("gfx...", or a triple "amdgcn-...") is a feature of the
// previous ID: "gfx942:sramecc+:xnack-,gfx1100" is two IDs. Header-only so
// that the loader and the registration shim share it without sharing a link.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_TARGETIDLIST_H
#define KPACK_TARGETIDLIST_H

#include <string>
#include <string_view>
#include <vector>

namespace kpack {

/// Splits Text into target-ID strings. Returns false (Out unspecified) when a
/// feature comes before any processor.
inline bool splitTargetIdList(std::string_view Text,
                              std::vector<std::string> &Out) {
  Out.clear();
  size_t Start = 0;
  for (size_t I = 0; I <= Text.size(); ++I) {
    if (I != Text.size() && Text[I] != ',' && Text[I] != ':')
      continue;
    std::string_view Token = Text.substr(Start, I - Start);
    Start = I + 1;
    while (!Token.empty() && (Token.front() == ' ' || Token.front() == '\t'))
      Token.remove_prefix(1);
    while (!Token.empty() && (Token.back() == ' ' || Token.back() == '\t'))
      Token.remove_suffix(1);
    if (Token.empty())
      continue;
    // The triple prefix "amdgcn-amd-amdhsa--" holds no separator.
    bool StartsId = Token.substr(0, 3) == "gfx" || Token.substr(0, 7) == "amdgcn-";
    if (StartsId)
      Out.emplace_back(Token);
    else if (Out.empty())
      return false;
    else
      Out.back().append(":").append(Token);
  }
  return true;
}

} // namespace kpack

#endif

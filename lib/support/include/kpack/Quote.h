//===- kpack/Quote.h - Quoting input bytes in messages ----------*- C++ -*-===//
//
// Every message that repeats bytes read from an input file (a bundle entry
// ID, a section name, an archive key) quotes them through quoteInput, so that
// a corrupt input yields a short, printable line instead of kilobytes of
// binary. No LLVM dependency.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_QUOTE_H
#define KPACK_QUOTE_H

#include <cstddef>
#include <string>
#include <string_view>

namespace kpack {

/// The longest excerpt, in output characters: every real bundle entry ID
/// fits ("hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-" has 47).
constexpr size_t MaxExcerptChars = 56;

/// Bytes as printable text of at most MaxChars characters: printable ASCII
/// as is, backslash and single quote escaped with a backslash, every other
/// byte as \xNN; cut at a whole character and followed by "..." if longer.
std::string escapeInput(std::string_view Bytes,
                        size_t MaxChars = MaxExcerptChars);

/// escapeInput in single quotes ("..." after the closing quote when cut).
std::string quoteInput(std::string_view Bytes,
                       size_t MaxChars = MaxExcerptChars);

} // namespace kpack

#endif

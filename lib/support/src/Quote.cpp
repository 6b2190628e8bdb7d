//===- Quote.cpp - Quoting input bytes in messages ------------------------===//

#include "kpack/Quote.h"

namespace {

/// Appends Bytes escaped to Out, at most MaxChars characters; returns false
/// if some bytes did not fit.
bool appendEscaped(std::string &Out, std::string_view Bytes, size_t MaxChars) {
  static const char Hex[] = "0123456789abcdef";
  size_t Used = 0;
  for (char Ch : Bytes) {
    unsigned char C = static_cast<unsigned char>(Ch);
    char Buf[4];
    size_t N = 0;
    if (C == '\\' || C == '\'') {
      Buf[N++] = '\\';
      Buf[N++] = Ch;
    } else if (C >= 0x20 && C < 0x7f) {
      Buf[N++] = Ch;
    } else {
      Buf[N++] = '\\';
      Buf[N++] = 'x';
      Buf[N++] = Hex[C >> 4];
      Buf[N++] = Hex[C & 15];
    }
    if (Used + N > MaxChars)
      return false;
    Out.append(Buf, N);
    Used += N;
  }
  return true;
}

} // namespace

std::string kpack::escapeInput(std::string_view Bytes, size_t MaxChars) {
  std::string Out;
  if (!appendEscaped(Out, Bytes, MaxChars))
    Out += "...";
  return Out;
}

std::string kpack::quoteInput(std::string_view Bytes, size_t MaxChars) {
  std::string Out = "'";
  bool Whole = appendEscaped(Out, Bytes, MaxChars);
  Out += '\'';
  if (!Whole)
    Out += "...";
  return Out;
}

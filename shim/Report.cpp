//===- Report.cpp - The shim's stderr lines -------------------------------===//

#include "Report.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>

namespace kpack {
namespace shim {

void reportLine(const char *Format, ...) {
  char Line[8192];
  int N = std::snprintf(Line, sizeof(Line), "rocm_kpack_hip: ");
  va_list Args;
  va_start(Args, Format);
  int M = std::vsnprintf(Line + N, sizeof(Line) - N - 1, Format, Args);
  va_end(Args);
  size_t Len = std::min<size_t>(N + (M > 0 ? M : 0), sizeof(Line) - 2);
  Line[Len++] = '\n';
  for (size_t Done = 0; Done < Len;) {
    ssize_t W = ::write(STDERR_FILENO, Line + Done, Len - Done);
    if (W < 0 && errno == EINTR)
      continue;
    if (W <= 0)
      return;
    Done += size_t(W);
  }
}

} // namespace shim
} // namespace kpack

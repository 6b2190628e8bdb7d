//===- CompressionSettings.cpp - One check of --compression/--level -------===//

#include "kpack/Emission.h"
#include "kpack/LLVMError.h"

#include <iterator>

using namespace llvm;
using namespace kpack;

namespace {

/// The schemes every writer offers, as the command lines spell them.
struct SchemeOption {
  const char *Name;
  ArchiveCompression Scheme;
  const char *Help;
};
const SchemeOption SchemeOptions[] = {
    {"none", ArchiveCompression::None, "code objects stored as they are"},
    {"zstd", ArchiveCompression::ZstdPerKernel,
     "one zstd frame per code object (zstd-per-kernel; the default)"},
    {"zstd-long", ArchiveCompression::ZstdPerKernelLong,
     "release grade, read by upstream too: zstd-per-kernel with a window "
     "over the whole code object (up to 128 MiB), long matches"},
    {"zstd-shared", ArchiveCompression::ZstdSharedSegments,
     "each code object against the content it shares with others, stored "
     "once (zstd-shared-segments; archive version 2, which upstream readers "
     "refuse)"},
};

} // namespace

Expected<CompressionSettings>
CompressionSettings::parse(StringRef Scheme, std::optional<int> Level) {
  CompressionSettings S;
  const SchemeOption *Found = nullptr;
  for (const SchemeOption &O : SchemeOptions)
    // The TOC's names too, except "zstd-per-kernel" for the release grade.
    if (Scheme == O.Name ||
        (Scheme == compressionSchemeName(O.Scheme) &&
         O.Scheme != ArchiveCompression::ZstdPerKernelLong))
      Found = &O;
  if (!Found) {
    std::string Names;
    for (const SchemeOption &O : SchemeOptions)
      Names += std::string(Names.empty() ? "" : ", ") + O.Name;
    return makeError("unknown compression '" + Scheme + "' (expected one of " +
                     Names + ")");
  }
  S.Scheme = Found->Scheme;
  S.Level = defaultZstdLevel(S.Scheme);
  if (Level) {
    if (S.Scheme == ArchiveCompression::None)
      return makeError("a compression level needs --compression zstd, "
                       "zstd-long or zstd-shared");
    if (*Level < 1 || *Level > 22)
      return makeError("zstd level " + Twine(*Level) + " is not in 1..22");
    S.Level = *Level;
  }
  return S;
}

StringRef CompressionSettings::optionName(ArchiveCompression Scheme) {
  for (const SchemeOption &O : SchemeOptions)
    if (O.Scheme == Scheme)
      return O.Name;
  return "zstd";
}

const char *CompressionSettings::optionHelp() {
  static const std::string Help = [] {
    std::string H = "Archive compression:";
    for (const SchemeOption &O : SchemeOptions)
      H += std::string(" ") + O.Name +
           (O.Scheme == ArchiveCompression::ZstdPerKernel ? " (default)" : "") +
           (&O == &SchemeOptions[std::size(SchemeOptions) - 1] ? "" : ",");
    return H + " (docs/format-extensions.md)";
  }();
  return Help.c_str();
}

const char *CompressionSettings::levelHelp() {
  static const std::string Help =
      "zstd level (default: " +
      std::to_string(defaultZstdLevel(ArchiveCompression::ZstdPerKernel)) +
      ", zstd-long " +
      std::to_string(defaultZstdLevel(ArchiveCompression::ZstdPerKernelLong)) +
      ", zstd-shared " +
      std::to_string(
          defaultZstdLevel(ArchiveCompression::ZstdSharedSegments)) +
      ")";
  return Help.c_str();
}

cl::ValuesClass CompressionSettings::optionValues() {
  // Each scheme's help with its default level, from defaultZstdLevel().
  static const std::vector<std::string> Helps = [] {
    std::vector<std::string> H;
    for (const SchemeOption &O : SchemeOptions) {
      int Level = defaultZstdLevel(O.Scheme);
      H.push_back(std::string(O.Help) +
                  (Level ? ", level " + std::to_string(Level) : ""));
    }
    return H;
  }();
  auto Value = [](const SchemeOption &O) {
    return cl::OptionEnumValue{O.Name, static_cast<int>(O.Scheme),
                               Helps[&O - SchemeOptions]};
  };
  static_assert(std::size(SchemeOptions) == 4, "list every scheme below");
  return cl::ValuesClass({Value(SchemeOptions[0]), Value(SchemeOptions[1]),
                          Value(SchemeOptions[2]), Value(SchemeOptions[3])});
}

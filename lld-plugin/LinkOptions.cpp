//===- LinkOptions.cpp - ld.kpack command line ----------------------------===//

#include "LinkOptions.h"

#include "kpack/FrameCache.h"
#include "kpack/Metadata.h"

#include "llvm/ADT/STLExtras.h"

#include <cstring>

using namespace llvm;

namespace kpack {
namespace link {

namespace {

/// lld's GNU options (long names) whose value may be the next argument. Each
/// is accepted with one or two dashes, like lld does.
bool isLongOptionWithSeparateValue(StringRef Name) {
  static const StringRef Names[] = {
      "Map", "Tbss", "Tdata", "Ttext", "auxiliary", "call-graph-ordering-file",
      "compress-debug-sections", "defsym", "dependency-file", "dynamic-linker",
      "dynamic-list", "emulation", "entry", "error-limit",
      "exclude-libs", "export-dynamic-symbol", "export-dynamic-symbol-list",
      "filter", "fini", "format", "hash-style", "icf", "image-base", "init",
      "just-symbols", "library", "library-path", "lto-CGO", "lto-O", "mllvm",
      "oformat", "orphan-handling", "output", "pack-dyn-relocs",
      "package-metadata", "plugin", "plugin-opt", "remap-inputs",
      "remap-inputs-file", "reproduce", "require-defined",
      "retain-symbols-file", "rpath", "script", "section-start", "soname",
      "sort-section", "symbol-ordering-file", "sysroot", "target",
      "trace-symbol", "undefined", "undefined-glob", "unresolved-symbols",
      "version-script", "why-extract", "wrap"};
  return llvm::is_contained(Names, Name);
}

/// Single-letter options whose value is joined ("-ofile") or the next
/// argument ("-o file").
bool isShortOptionWithValue(char C) {
  return StringRef("oLlTmzeuyhRFfbO").contains(C);
}

} // namespace

ArgKind classifyLinkerArg(StringRef Arg) {
  if (Arg.size() < 2 || Arg[0] != '-')
    return ArgKind::Input;
  StringRef Name = Arg.drop_front(Arg.starts_with("--") ? 2 : 1);
  if (Name.contains('='))
    return ArgKind::Flag;
  if (Name.size() == 1)
    return isShortOptionWithValue(Name[0]) ? ArgKind::WithValue
                                           : ArgKind::Flag;
  if (isLongOptionWithSeparateValue(Name))
    return ArgKind::WithValue;
  return ArgKind::Flag;
}

namespace {

/// Matches "--kpack-NAME=VALUE" or "--kpack-NAME VALUE" at Argv[I], advancing
/// I past the value.
Expected<std::optional<std::string>>
matchKpackOption(const std::vector<std::string> &Argv, size_t &I,
                 StringRef Name) {
  StringRef Arg = Argv[I];
  if (!Arg.consume_front("--kpack-") && !Arg.consume_front("-kpack-"))
    return std::nullopt;
  if (!Arg.consume_front(Name))
    return std::nullopt;
  if (Arg.consume_front("="))
    return std::optional<std::string>(Arg.str());
  if (!Arg.empty())
    return std::nullopt;
  if (I + 1 >= Argv.size())
    return createStringError("missing value for --kpack-%s", Name.data());
  return std::optional<std::string>(Argv[++I]);
}

} // namespace

bool LinkerArgs::isMinGW() const {
  auto IsPe = [](StringRef M) { return M.ends_with("pe") || M.ends_with("pep"); };
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef A = Args[I];
    if (A == "-m" && I + 1 < Args.size())
      return IsPe(Args[I + 1]);
    if (A.starts_with("-m") && A.size() > 2 && !A.starts_with("-m=") &&
        IsPe(A.drop_front(2)))
      return true;
  }
  return false;
}

LinkerArgs LinkerArgs::withOutput(StringRef Path) const {
  LinkerArgs Copy = *this;
  Copy.Output = Path.str();
  if (LldLink) {
    if (OutputIndex) {
      Copy.Args[*OutputIndex] = "-out:" + Path.str();
    } else {
      Copy.OutputIndex = Copy.Args.size();
      Copy.Args.push_back("-out:" + Path.str());
    }
    return Copy;
  }
  if (OutputIndex) {
    Copy.Args[*OutputIndex] = Path.str();
  } else {
    Copy.Args.push_back("-o");
    Copy.OutputIndex = Copy.Args.size();
    Copy.Args.push_back(Path.str());
  }
  return Copy;
}

Expected<ParsedCommandLine>
parseCommandLine(const std::vector<std::string> &Argv) {
  ParsedCommandLine Result;
  KpackOptions &K = Result.Kpack;
  LinkerArgs &L = Result.Linker;

  // lld's --time-trace options, kept for lld unless the link emits
  // archives (then ld.kpack records the trace itself).
  std::vector<std::string> TimeTraceArgs;
  for (size_t I = 0; I < Argv.size(); ++I) {
    StringRef Arg = Argv[I];
    StringRef Name = Arg.drop_front(Arg.starts_with("--") ? 2 : 1);
    if (Arg.starts_with("-") &&
        (Name == "time-trace" || Name.starts_with("time-trace="))) {
      K.TimeTrace = Name.consume_front("time-trace=") ? Name.str() : "";
      TimeTraceArgs.push_back(Argv[I]);
      continue;
    }
    if (Arg.starts_with("-") && Name.starts_with("time-trace-granularity")) {
      StringRef Value = Name.drop_front(strlen("time-trace-granularity"));
      TimeTraceArgs.push_back(Argv[I]);
      if (Value.empty()) {
        if (I + 1 >= Argv.size())
          return createStringError("missing value for --time-trace-granularity");
        Value = Argv[++I];
        TimeTraceArgs.push_back(Argv[I]);
      } else if (!Value.consume_front("=")) {
        return createStringError("unknown option '%s'", Argv[I].c_str());
      }
      if (Value.getAsInteger(10, K.TimeTraceGranularity))
        return createStringError("invalid --time-trace-granularity '%s' "
                                 "(expected microseconds)",
                                 Value.str().c_str());
      continue;
    }
    if (Arg.starts_with("--kpack-") || Arg.starts_with("-kpack-")) {
      struct Known {
        StringRef Name;
        std::string *Dest;
      } Strings[] = {{"output", &K.OutputArchive}, {"dir", &K.OutputDir},
                     {"name", &K.KernelName},      {"group", &K.Group},
                     {"family", &K.Family},
                     {"compression", &K.Compression},
                     {"cache-dir", &K.CacheDir},
                     {"cache-policy", &K.CachePolicy}};
      bool Matched = false;
      for (const Known &O : Strings) {
        auto V = matchKpackOption(Argv, I, O.Name);
        if (!V)
          return V.takeError();
        if (*V) {
          if (V->value().empty())
            return createStringError("empty value for --kpack-%s",
                                     O.Name.data());
          *O.Dest = std::move(**V);
          Matched = true;
          break;
        }
      }
      if (Matched)
        continue;
      auto Search = matchKpackOption(Argv, I, "search-path");
      if (!Search)
        return Search.takeError();
      if (*Search) {
        if (Search->value().empty())
          return createStringError("empty value for --kpack-search-path");
        K.SearchPaths.push_back(std::move(**Search));
        continue;
      }
      auto Level = matchKpackOption(Argv, I, "compression-level");
      if (!Level)
        return Level.takeError();
      if (*Level) {
        int N;
        if (StringRef(**Level).getAsInteger(10, N))
          return createStringError("invalid --kpack-compression-level '%s' "
                                   "(expected a zstd level, 0 for none)",
                                   Level->value().c_str());
        K.CompressionLevel = N;
        continue;
      }
      auto Jobs = matchKpackOption(Argv, I, "jobs");
      if (!Jobs)
        return Jobs.takeError();
      if (*Jobs) {
        unsigned N;
        if (StringRef(**Jobs).getAsInteger(10, N))
          return createStringError("invalid --kpack-jobs '%s' (expected a "
                                   "number of threads, 0 for all cores)",
                                   Jobs->value().c_str());
        K.Jobs = N;
        continue;
      }
      auto Room = matchKpackOption(Argv, I, "metadata-room");
      if (!Room)
        return Room.takeError();
      if (*Room) {
        uint64_t N;
        if (StringRef(**Room).getAsInteger(10, N) || N > MaxKpackMetadataSize)
          return createStringError(
              "invalid --kpack-metadata-room '%s' (expected a number of bytes "
              "up to %zu, what a loader reads)",
              Room->value().c_str(), MaxKpackMetadataSize);
        K.MetadataRoom = N;
        continue;
      }
      return createStringError("unknown option '%s'", Argv[I].c_str());
    }

    // Every spelling of -o becomes "-o PATH", located by OutputIndex so that
    // the link can be redirected to a temporary file.
    std::optional<std::string> Out;
    if (Arg == "-o" || Arg == "--output" || Arg == "-output") {
      if (I + 1 >= Argv.size())
        return createStringError("missing value for -o");
      Out = Argv[++I];
    } else if (Arg.consume_front("--output=")) {
      Out = Arg.str();
    } else if (Arg.starts_with("-o") && Arg.size() > 2 &&
               !Arg.starts_with("-oformat") && !Arg.starts_with("-orphan") &&
               !Arg.starts_with("-omagic")) {
      Out = Arg.drop_front(2).str(); // "-ofile"
    }
    if (Out) {
      L.Output = *Out;
      L.Args.push_back("-o");
      L.OutputIndex = L.Args.size();
      L.Args.push_back(*Out);
      continue;
    }

    L.Args.push_back(Argv[I]);
    if (Arg == "-r" || Arg == "--relocatable" || Arg == "-relocatable" ||
        Arg == "-i")
      L.Relocatable = true;
    if (classifyLinkerArg(Arg) == ArgKind::WithValue && I + 1 < Argv.size())
      L.Args.push_back(Argv[++I]);
  }

  if (!K.OutputArchive.empty() && !K.OutputDir.empty())
    return createStringError(
        "--kpack-output and --kpack-dir are mutually exclusive");
  if (!K.CachePolicy.empty()) {
    if (K.CacheDir.empty())
      return createStringError("--kpack-cache-policy needs --kpack-cache-dir");
    CachePruningPolicy Policy;
    if (Status S = FrameCache::parsePolicy(K.CachePolicy, Policy))
      return createStringError("--kpack-cache-policy: %s",
                               S.message().c_str());
  }
  if (!K.emitsArchives()) {
    // An lld link: lld records the trace.
    L.Args.insert(L.Args.end(), TimeTraceArgs.begin(), TimeTraceArgs.end());
    K.TimeTrace.reset();
    for (StringRef Dependent : {K.KernelName, K.Group, K.Family})
      if (!Dependent.empty())
        return createStringError("--kpack-name/--kpack-group/--kpack-family "
                                 "need --kpack-output or --kpack-dir");
    if (!K.SearchPaths.empty() || !K.Compression.empty() ||
        K.CompressionLevel || K.Jobs || K.MetadataRoom)
      return createStringError("--kpack-search-path/--kpack-compression/"
                               "--kpack-compression-level/--kpack-jobs/"
                               "--kpack-metadata-room need --kpack-output or "
                               "--kpack-dir");
  }
  return Result;
}

Expected<ParsedCommandLine>
parseLldLinkCommandLine(const std::vector<std::string> &Argv) {
  // The kpack options, in the GNU spelling parseCommandLine checks.
  std::vector<std::string> KpackArgs;
  ParsedCommandLine Result;
  LinkerArgs &L = Result.Linker;
  L.LldLink = true;
  for (size_t I = 0; I < Argv.size(); ++I) {
    StringRef Arg = Argv[I];
    if (Arg.starts_with("--kpack-") ||
        (Arg.starts_with("-kpack-") && Arg.contains('='))) {
      KpackArgs.push_back(Argv[I]);
      // "--kpack-NAME VALUE": the value follows.
      if (!Arg.contains('=') && I + 1 < Argv.size())
        KpackArgs.push_back(Argv[++I]);
      continue;
    }
    StringRef Name = Arg;
    if (Name.consume_front("/kpack-") || Name.consume_front("-kpack-")) {
      auto [Opt, Value] = Name.split(':');
      if (!Name.contains(':'))
        return createStringError("missing value for /kpack-%s (lld-link "
                                 "style: /kpack-%s:VALUE)",
                                 Opt.str().c_str(), Opt.str().c_str());
      KpackArgs.push_back(("--kpack-" + Opt + "=" + Value).str());
      continue;
    }
    StringRef Out = Arg;
    if ((Out.starts_with("/") || Out.starts_with("-")) &&
        Out.drop_front().starts_with_insensitive("out:")) {
      L.Output = Out.drop_front(5).str();
      L.OutputIndex = L.Args.size();
      L.Args.push_back("-out:" + L.Output);
      continue;
    }
    L.Args.push_back(Argv[I]);
  }
  auto Kpack = parseCommandLine(KpackArgs);
  if (!Kpack)
    return Kpack.takeError();
  Result.Kpack = std::move(Kpack->Kpack);
  if (Result.Kpack.emitsArchives() && !L.OutputIndex)
    return createStringError("/kpack-output and /kpack-dir need the output "
                             "named with /out:");
  return Result;
}

} // namespace link
} // namespace kpack

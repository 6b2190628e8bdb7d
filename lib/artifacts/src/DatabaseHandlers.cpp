//===- DatabaseHandlers.cpp - Kernel-database file rules ------------------===//
//
// Each handler is a table of rules over a file's path relative to its prefix:
// where the database starts (an anchor of consecutive directory names), where
// the target ID is spelled (a directory below the anchor, the file name, ...)
// and which file suffixes belong to it. The names, anchors and suffixes are
// upstream's (rocm-kpack's database_handlers.py, the version TheRock runs from
// rocm-systems/shared/kpack); the target IDs are parsed with the core's parser
// instead of upstream's regular expressions (docs/kernel-databases.md lists
// every difference).
//
//===----------------------------------------------------------------------===//

#include "kpack/DatabaseHandlers.h"

#include "kpack/LLVMError.h"
#include "kpack/TargetId.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace llvm;
using namespace kpack;

DatabaseHandler::~DatabaseHandler() = default;

namespace {

bool isAlnum(char C) { return isAlpha(C) || isDigit(C); }

/// A target ID spelled in a name: Name[Begin, End) and its canonical text.
struct TargetSpan {
  size_t Begin = 0, End = 0;
  std::string Id;
};

/// "gfx<N>-generic" or "gfx<N>-<M>-generic" at Pos; the length or 0.
size_t genericProcessorAt(StringRef Name, size_t Pos) {
  StringRef S = Name.substr(Pos + 3);
  size_t Digits = S.find_if_not(isDigit);
  if (Digits == 0 || Digits == StringRef::npos)
    return 0;
  S = S.drop_front(Digits);
  size_t Len = 3 + Digits;
  if (S.size() > 1 && S[0] == '-' && isDigit(S[1])) {
    size_t Minor = S.drop_front(1).find_if_not(isDigit);
    if (Minor == StringRef::npos)
      return 0;
    S = S.drop_front(1 + Minor);
    Len += 1 + Minor;
  }
  if (!S.starts_with("-generic"))
    return 0;
  Len += 8;
  return Pos + Len < Name.size() && isAlnum(Name[Pos + Len]) ? 0 : Len;
}

/// A processor name as LLVM spells specific processors: "gfx", two or three
/// digits, then a hex digit ("gfx90a", "gfx1100"). What the core's table does
/// not know yet (a newer processor) is accepted in this shape only, so that
/// "gfx9" or "gfx11xx" are never taken for targets.
bool looksLikeProcessor(StringRef P) {
  if (!P.consume_front("gfx") || P.size() < 3 || P.size() > 4)
    return false;
  return all_of(P.drop_back(), isDigit) && isHexDigit(P.back()) &&
         !isUpper(P.back());
}

bool isKnownProcessor(StringRef P) {
  return supportedFeatures(P.str()).has_value();
}

/// The target ID whose processor starts at Pos ("gfx..." after a non-
/// alphanumeric character), with features written clang's way
/// (":xnack+") or Tensile's way ("-xnack+"), validated by parseTargetId.
std::optional<TargetSpan> targetIdAt(StringRef Name, size_t Pos) {
  size_t ProcLen = genericProcessorAt(Name, Pos);
  if (ProcLen == 0) {
    size_t End = Pos + 3;
    while (End < Name.size() && isAlnum(Name[End]) && !isUpper(Name[End]))
      ++End;
    StringRef P = Name.slice(Pos, End);
    if (End < Name.size() && isAlnum(Name[End]))
      return std::nullopt; // "gfx942Foo": part of a longer word
    if (!isKnownProcessor(P) && !looksLikeProcessor(P))
      return std::nullopt;
    ProcLen = End - Pos;
  }
  std::string Text = Name.substr(Pos, ProcLen).str();
  size_t End = Pos + ProcLen;
  for (;;) {
    StringRef Rest = Name.substr(End);
    if (Rest.empty() || (Rest[0] != ':' && Rest[0] != '-'))
      break;
    StringRef Feature = Rest.drop_front(1);
    size_t NameLen = Feature.starts_with("xnack")     ? 5
                     : Feature.starts_with("sramecc") ? 7
                                                      : 0;
    if (NameLen == 0 || Feature.size() <= NameLen ||
        (Feature[NameLen] != '+' && Feature[NameLen] != '-'))
      break;
    Text += ':';
    Text += Feature.take_front(NameLen + 1).str();
    End += 1 + NameLen + 1;
  }
  // "gfx1250-strict", "gfx1250-b0-a0": a longer name this parser does not
  // know, not gfx1250.
  if (End + 1 < Name.size() && Name[End] == '-' && isAlnum(Name[End + 1]))
    return std::nullopt;
  std::optional<TargetId> Id = parseTargetId(Text);
  if (!Id)
    return std::nullopt; // e.g. "gfx1100-xnack+": no such target
  return TargetSpan{Pos, End, Id->str()};
}

/// The first target ID in Name.
std::optional<TargetSpan> findTargetId(StringRef Name) {
  for (size_t Pos = Name.find("gfx"); Pos != StringRef::npos;
       Pos = Name.find("gfx", Pos + 1)) {
    if (Pos > 0 && isAlnum(Name[Pos - 1]))
      continue; // "libgfx9..." or "xgfx942": not where a target starts
    if (std::optional<TargetSpan> T = targetIdAt(Name, Pos))
      return T;
  }
  return std::nullopt;
}

/// The target ID that Name is, whole ("gfx942", "gfx942-xnack+").
std::optional<std::string> wholeTargetId(StringRef Name) {
  std::optional<TargetSpan> T = findTargetId(Name);
  if (!T || T->Begin != 0 || T->End != Name.size())
    return std::nullopt;
  return T->Id;
}

bool isSeparator(char C) { return C == '_' || C == '-' || C == '.'; }

/// Name without Name[Begin, End) and one separator next to it, the one
/// before if there is one ("TensileLibrary_lazy_gfx90a.dat" ->
/// "TensileLibrary_lazy.dat", "gfx1030_36.db.txt" -> "36.db.txt").
std::string removeSpan(StringRef Name, size_t Begin, size_t End) {
  StringRef Pre = Name.take_front(Begin), Post = Name.drop_front(End);
  if (!Pre.empty() && isSeparator(Pre.back()))
    Pre = Pre.drop_back();
  else if (Pre.empty() && !Post.empty() && isSeparator(Post.front()))
    Post = Post.drop_front();
  return (Pre + Post).str();
}

/// Name with the target ID Id removed where it is spelled; Name unchanged if
/// it spells no target or another one.
std::string withoutTarget(StringRef Name, StringRef Id) {
  std::optional<TargetSpan> T = findTargetId(Name);
  if (!T || T->Id != Id)
    return Name.str();
  return removeSpan(Name, T->Begin, T->End);
}

/// The longest processor of the core's table that Name starts with. MIOpen
/// writes the compute-unit count (hex) right after the processor:
/// "gfx942130" is gfx942 with 0x130 CUs, "gfx90a6e" gfx90a with 0x6e.
std::optional<TargetSpan> knownProcessorPrefix(StringRef Name) {
  if (!Name.starts_with("gfx"))
    return std::nullopt;
  size_t Run = 3;
  while (Run < Name.size() && isAlnum(Name[Run]))
    ++Run;
  for (size_t Len = Run; Len > 3; --Len)
    if (isKnownProcessor(Name.take_front(Len)))
      return TargetSpan{0, Len, Name.take_front(Len).str()};
  return std::nullopt;
}

/// Composable Kernel's sanitized target ID (":" -> "_", "+" -> "p",
/// "-" -> "_"): "gfx950_xnackp" -> "gfx950:xnack+", "gfx942_srameccp_xnack_"
/// -> "gfx942:sramecc+:xnack-".
std::optional<std::string> unsanitizeTarget(StringRef Token) {
  // Features follow the processor, each after a '_'; a feature's '-' is
  // itself a '_' ("xnack_").
  size_t Feature = Token.find('_');
  std::string Text = Token.take_front(Feature).str();
  StringRef Rest = Feature == StringRef::npos ? "" : Token.drop_front(Feature);
  while (!Rest.empty()) {
    Rest = Rest.drop_front(); // the '_' before a feature
    size_t NameLen = Rest.starts_with("xnack")     ? 5
                     : Rest.starts_with("sramecc") ? 7
                                                   : 0;
    if (NameLen == 0 || Rest.size() <= NameLen ||
        (Rest[NameLen] != 'p' && Rest[NameLen] != '_'))
      return std::nullopt;
    Text += ":" + Rest.take_front(NameLen).str() +
            (Rest[NameLen] == 'p' ? "+" : "-");
    Rest = Rest.drop_front(NameLen + 1);
    if (!Rest.empty() && Rest.front() != '_')
      return std::nullopt;
  }
  if (!isKnownProcessor(Token.take_front(Feature)) &&
      !looksLikeProcessor(Token.take_front(Feature)))
    return std::nullopt;
  std::optional<TargetId> Id = parseTargetId(Text);
  if (!Id)
    return std::nullopt;
  return Id->str();
}

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

/// Where a rule reads the target ID.
enum class TargetPlace {
  /// The first directory below the anchor (after DirPrefix) is a target ID:
  /// Tensile's per-target layout "library/gfx942/...", AOTriton.
  DirBelowAnchor,
  /// The first directory at any depth below the anchor that is a target ID
  /// (hipKernelProvider's "arch_content/<producer>/gfx942/...").
  AnyDirBelowAnchor,
  /// A target ID in the file name (Tensile's flat layout).
  FileName,
  /// The file name starts with a processor of the core's table followed by
  /// MIOpen's compute-unit count.
  ProcessorPrefix,
  /// The file name is Stem + Composable Kernel's sanitized target + suffix.
  SanitizedName,
  /// RocJitsu's translation domain directory, mapped by a fixed table.
  TranslationDomain,
};

/// A file suffix a rule accepts and the entry kind it records.
struct SuffixKind {
  StringRef Suffix; ///< "" accepts any file
  StringRef Kind;
};

/// How the "operation" metadata of AOTriton is derived.
enum class Operation { None, DirsBelowTarget, FileStem };

struct Rule {
  /// Consecutive directory names where the database starts, anywhere in the
  /// path ("rocblas/library"); empty: any directory.
  StringRef Anchor;
  /// The anchor must be the path's first directories.
  bool AnchorAtRoot = false;
  TargetPlace Place;
  ArrayRef<SuffixKind> Suffixes;
  /// DirBelowAnchor: the directory is DirPrefix + target ("amd-gfx942").
  StringRef DirPrefix = "";
  /// SanitizedName: the file name starts with one of these stems.
  ArrayRef<StringRef> Stems = {};
  /// Files this rule owns are moved by split but not packed by pack-db.
  bool Packed = true;
  Operation Op = Operation::None;
};

/// A rule's match before the key is built.
struct RuleMatch {
  std::string TargetId;
  StringRef Kind;
  /// The path below the anchor with the target removed: the key's tail.
  std::string KeyTail;
  std::string Operation;
};

/// The index of the first component of Anchor within Dirs, or npos.
size_t findAnchor(ArrayRef<StringRef> Dirs, StringRef Anchor,
                  bool AtRoot) {
  SmallVector<StringRef, 4> A;
  Anchor.split(A, '/');
  if (Dirs.size() < A.size())
    return StringRef::npos;
  size_t Last = AtRoot ? 0 : Dirs.size() - A.size();
  for (size_t I = 0; I <= Last; ++I)
    if (std::equal(A.begin(), A.end(), Dirs.begin() + I))
      return I;
  return StringRef::npos;
}

std::optional<StringRef> suffixKind(const Rule &R, StringRef FileName) {
  for (const SuffixKind &S : R.Suffixes)
    if (S.Suffix.empty() ||
        (FileName.size() > S.Suffix.size() && FileName.ends_with(S.Suffix)))
      return S.Kind;
  return std::nullopt;
}

std::string joinPath(ArrayRef<StringRef> Parts) { return join(Parts, "/"); }

std::optional<RuleMatch> applyRule(const Rule &R, StringRef RelPath) {
  SmallVector<StringRef, 8> Parts;
  RelPath.split(Parts, '/');
  if (any_of(Parts, [](StringRef P) { return P.empty(); }))
    return std::nullopt;
  StringRef FileName = Parts.back();
  ArrayRef<StringRef> Dirs = ArrayRef(Parts).drop_back();
  size_t Anchor = 0, AnchorLen = 0;
  if (!R.Anchor.empty()) {
    Anchor = findAnchor(Dirs, R.Anchor, R.AnchorAtRoot);
    if (Anchor == StringRef::npos)
      return std::nullopt;
    AnchorLen = R.Anchor.count('/') + 1;
  }
  // Everything below the anchor, file name last.
  ArrayRef<StringRef> Below = ArrayRef(Parts).drop_front(Anchor + AnchorLen);
  std::optional<StringRef> Kind = suffixKind(R, FileName);
  if (!Kind)
    return std::nullopt;

  RuleMatch M;
  M.Kind = *Kind;
  switch (R.Place) {
  case TargetPlace::DirBelowAnchor:
  case TargetPlace::AnyDirBelowAnchor: {
    size_t Limit = R.Place == TargetPlace::DirBelowAnchor
                       ? std::min<size_t>(1, Below.size() - 1)
                       : Below.size() - 1;
    for (size_t I = 0; I < Limit; ++I) {
      StringRef Dir = Below[I];
      if (!Dir.consume_front(R.DirPrefix))
        continue;
      std::optional<std::string> Id = wholeTargetId(Dir);
      if (!Id)
        continue;
      M.TargetId = *Id;
      SmallVector<StringRef, 8> Tail(Below.begin(), Below.end());
      Tail.erase(Tail.begin() + I);
      std::string File = withoutTarget(FileName, *Id);
      Tail.back() = File;
      M.KeyTail = joinPath(Tail);
      if (R.Op == Operation::DirsBelowTarget)
        M.Operation = joinPath(Below.slice(I + 1, Below.size() - I - 2));
      else if (R.Op == Operation::FileStem)
        M.Operation = FileName.take_front(FileName.find('.')).str();
      return M;
    }
    return std::nullopt;
  }
  case TargetPlace::FileName: {
    if (!R.Stems.empty() && none_of(R.Stems, [&](StringRef Stem) {
          return FileName.starts_with(Stem);
        }))
      return std::nullopt;
    std::optional<TargetSpan> T = findTargetId(FileName);
    if (!T)
      return std::nullopt;
    M.TargetId = T->Id;
    SmallVector<StringRef, 8> Tail(Below.begin(), Below.end());
    std::string File = removeSpan(FileName, T->Begin, T->End);
    Tail.back() = File;
    M.KeyTail = joinPath(Tail);
    return M;
  }
  case TargetPlace::ProcessorPrefix: {
    std::optional<TargetSpan> T = knownProcessorPrefix(FileName);
    if (!T)
      return std::nullopt;
    M.TargetId = T->Id;
    SmallVector<StringRef, 8> Tail(Below.begin(), Below.end());
    std::string File = removeSpan(FileName, T->Begin, T->End);
    Tail.back() = File;
    M.KeyTail = joinPath(Tail);
    return M;
  }
  case TargetPlace::SanitizedName: {
    for (StringRef Stem : R.Stems) {
      StringRef Name = FileName;
      if (!Name.consume_front(Stem))
        continue;
      for (const SuffixKind &S : R.Suffixes) {
        StringRef Token = Name;
        if (!Token.consume_back(S.Suffix))
          continue;
        if (std::optional<std::string> Id = unsanitizeTarget(Token)) {
          M.TargetId = *Id;
          M.Kind = S.Kind;
          return M;
        }
      }
    }
    return std::nullopt;
  }
  case TargetPlace::TranslationDomain: {
    // <anchor>/<domain>/v1/<64 hex digits>.{man,obj}, nothing deeper.
    static const std::pair<StringRef, StringRef> Domains[] = {
        {"gfx1250-b0-a0", "gfx1250"}};
    if (Below.size() != 3 || Below[1] != "v1")
      return std::nullopt;
    StringRef Hash = FileName.take_front(FileName.find('.'));
    if (Hash.size() != 64 ||
        !all_of(Hash, [](char C) { return isHexDigit(C) && !isUpper(C); }) ||
        FileName.size() != 68)
      return std::nullopt;
    for (const auto &[Domain, Target] : Domains)
      if (Below[0] == Domain) {
        M.TargetId = Target.str();
        M.KeyTail = joinPath(Below.drop_front());
        return M;
      }
    return std::nullopt;
  }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The handlers
//===----------------------------------------------------------------------===//

class RuleHandler final : public DatabaseHandler {
public:
  RuleHandler(StringRef Name, ArrayRef<Rule> Rules)
      : HandlerName(Name), Rules(Rules) {}
  StringRef name() const override { return HandlerName; }

  std::optional<DatabaseFile> match(StringRef RelPath) const override {
    for (const Rule &R : Rules) {
      std::optional<RuleMatch> M = applyRule(R, RelPath);
      if (!M)
        continue;
      DatabaseFile F;
      F.Handler = this;
      F.TargetId = M->TargetId;
      if (R.Packed)
        F.Key = (HandlerName + "/" + M->TargetId + "/" + M->KeyTail).str();
      F.Metadata.emplace_back("kind", M->Kind.str());
      if (!M->Operation.empty())
        F.Metadata.emplace_back("operation", M->Operation);
      return F;
    }
    return std::nullopt;
  }

private:
  StringRef HandlerName;
  ArrayRef<Rule> Rules;
};

// Tensile (rocBLAS, hipBLASLt, hipSPARSELt): "<lib>/library/", either one
// directory per target (every file below it belongs to the target) or flat
// with the target in the names of code objects and index files.
const SuffixKind TensileAnyFile[] = {{".co", "code-object"},
                                     {".hsaco", "code-object"},
                                     {".dat", "index"},
                                     {"", "data"}};
const SuffixKind TensileFlat[] = {{".co", "code-object"},
                                  {".hsaco", "code-object"},
                                  {".dat", "index"}};
#define TENSILE_RULES(Lib)                                                     \
  const Rule Lib##Rules[] = {                                                  \
      {#Lib "/library", false, TargetPlace::DirBelowAnchor, TensileAnyFile},   \
      {#Lib "/library", false, TargetPlace::FileName, TensileFlat},            \
  };
TENSILE_RULES(rocblas)
TENSILE_RULES(hipblaslt)
TENSILE_RULES(hipsparselt)
#undef TENSILE_RULES

// AOTriton: "aotriton.images/amd-<target>/<family>/<operation>/<image>"
// (current) and "aotriton/kernels/<target>/<operation>.hsaco" (seed 000).
const SuffixKind AnyKernelImage[] = {{"", "kernel-image"}};
const Rule AotritonRules[] = {
    {"aotriton.images", false, TargetPlace::DirBelowAnchor, AnyKernelImage,
     "amd-", {}, true, Operation::DirsBelowTarget},
    {"aotriton/kernels", false, TargetPlace::DirBelowAnchor, AnyKernelImage,
     "", {}, true, Operation::FileStem},
};

// MIOpen: "miopen/db/<processor><CUs>.<kind>" and its Composable Kernel
// plugins, host libraries named for their target.
const SuffixKind MIOpenDb[] = {{".kdb", "kernel-db"},
                               {".fdb.txt", "find-db"},
                               {".db.txt", "perf-db"},
                               {".model", "model"}};
const SuffixKind CkPlugin[] = {{".so", "host-library"},
                               {".dll", "host-library"}};
const StringRef CkPluginStems[] = {"libMIOpenCK", "MIOpenCK"};
const Rule MIOpenRules[] = {
    {"miopen/db", false, TargetPlace::ProcessorPrefix, MIOpenDb},
    {"", false, TargetPlace::FileName, CkPlugin, "", CkPluginStems,
     /*Packed=*/false},
};

// Composable Kernel: one static archive per target,
// "libdevice_conv_operations_<sanitized target>.a".
const SuffixKind CkArchive[] = {{".a", "host-archive"},
                                {".lib", "host-archive"}};
const StringRef CkArchiveStems[] = {"libdevice_conv_operations_",
                                    "device_conv_operations_"};
const Rule ComposableKernelRules[] = {
    {"", false, TargetPlace::SanitizedName, CkArchive, "", CkArchiveStems,
     /*Packed=*/false},
};

// hipKernelProvider: "engines/arch_content/[<producer>/...]<target>/..."
// and the same under "engines/test_arch_content".
const SuffixKind AnyContent[] = {{"", "content"}};
const Rule HipKernelProviderRules[] = {
    {"engines/arch_content", false, TargetPlace::AnyDirBelowAnchor,
     AnyContent},
    {"engines/test_arch_content", false, TargetPlace::AnyDirBelowAnchor,
     AnyContent},
};

// RocJitsu's ahead-of-time translations (rccl):
// "share/rocjitsu/translations/<domain>/v1/<sha256>.{man,obj}".
const SuffixKind Translations[] = {{".man", "translation-manifest"},
                                   {".obj", "translation"}};
const Rule HotswapCacheRules[] = {
    {"share/rocjitsu/translations", true, TargetPlace::TranslationDomain,
     Translations},
};

const RuleHandler RocBLAS("rocblas", rocblasRules);
const RuleHandler HipBLASLt("hipblaslt", hipblasltRules);
const RuleHandler HipSPARSELt("hipsparselt", hipsparseltRules);
const RuleHandler Aotriton("aotriton", AotritonRules);
const RuleHandler MIOpen("miopen", MIOpenRules);
const RuleHandler ComposableKernel("composablekernel", ComposableKernelRules);
const RuleHandler HipKernelProvider("hipkernelprovider",
                                    HipKernelProviderRules);
const RuleHandler HotswapCache("hotswap_cache", HotswapCacheRules);

const DatabaseHandler *const AllHandlers[] = {
    &RocBLAS,          &HipBLASLt,         &HipSPARSELt,
    &Aotriton,         &MIOpen,            &ComposableKernel,
    &HipKernelProvider, &HotswapCache};

} // namespace

ArrayRef<const DatabaseHandler *> kpack::allDatabaseHandlers() {
  return AllHandlers;
}

Expected<std::vector<const DatabaseHandler *>>
kpack::databaseHandlersNamed(ArrayRef<std::string> Names) {
  std::vector<const DatabaseHandler *> Out;
  for (const std::string &Name : Names) {
    const DatabaseHandler *const *H = find_if(
        AllHandlers, [&](const DatabaseHandler *D) { return D->name() == Name; });
    if (H == std::end(AllHandlers)) {
      SmallVector<StringRef, 8> Known;
      for (const DatabaseHandler *D : AllHandlers)
        Known.push_back(D->name());
      sort(Known);
      return makeError("unknown database handler '" + Name +
                       "' (known: " + join(Known, ", ") + ")");
    }
    Out.push_back(*H);
  }
  return Out;
}

std::optional<DatabaseFile>
kpack::matchDatabaseFile(ArrayRef<const DatabaseHandler *> Handlers,
                         StringRef RelPath) {
  for (const DatabaseHandler *H : Handlers)
    if (std::optional<DatabaseFile> F = H->match(RelPath))
      return F;
  return std::nullopt;
}

std::optional<std::string> kpack::targetIdInName(StringRef Name) {
  if (std::optional<TargetSpan> T = findTargetId(Name))
    return T->Id;
  return std::nullopt;
}

//===- DatabaseHandlers.cpp - Kernel-database file rules ------------------===//
//
// Each handler recognises exactly the paths upstream's handler of the same
// name recognises (rocm-systems shared/kpack/python/rocm_kpack/
// database_handlers.py, the version TheRock runs) and reports upstream's
// bundle key, which decides the artifact `kpack split` moves the file to.
// Upstream's regular expressions are restated as small scanners below. On
// top of the bundle key, each match carries what `kpack pack-db` needs and
// upstream has not: the full target ID the path spells (clang's ":xnack+"
// and generic processors kept) and the structured archive key
// (docs/kernel-databases.md).
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

bool isLowerAlpha(char C) { return C >= 'a' && C <= 'z'; }

/// Length of upstream's architecture pattern,
/// gfx[0-9]+[a-z]*(-strict)?(-xnack[+-])?, matched greedily at S[Pos], or 0.
/// The parts use disjoint characters, so the greedy match is the longest.
size_t gfxArchAt(StringRef S, size_t Pos) {
  if (!S.substr(Pos).starts_with("gfx"))
    return 0;
  size_t I = Pos + 3, Digits = I;
  while (I < S.size() && isDigit(S[I]))
    ++I;
  if (I == Digits)
    return 0;
  while (I < S.size() && isLowerAlpha(S[I]))
    ++I;
  if (S.substr(I).starts_with("-strict"))
    I += 7;
  StringRef Rest = S.substr(I);
  if (Rest.size() >= 7 && Rest.starts_with("-xnack") &&
      (Rest[6] == '+' || Rest[6] == '-'))
    I += 7;
  return I - Pos;
}

/// Upstream's pattern searched in S (leftmost match): [Begin, End).
struct Span {
  size_t Begin = 0, End = 0;
};
std::optional<Span> searchGfxArch(StringRef S) {
  for (size_t Pos = S.find("gfx"); Pos != StringRef::npos;
       Pos = S.find("gfx", Pos + 1))
    if (size_t Len = gfxArchAt(S, Pos))
      return Span{Pos, Pos + Len};
  return std::nullopt;
}

/// The whole of S is upstream's pattern.
bool fullmatchGfxArch(StringRef S) {
  return !S.empty() && gfxArchAt(S, 0) == S.size();
}

bool isKnownProcessor(StringRef P) {
  return supportedFeatures(P.str()).has_value();
}

/// A processor name as LLVM spells specific processors: "gfx", two or three
/// digits, then a hex digit ("gfx90a", "gfx1100"), for processors newer than
/// the core's table; "gfx9" or "gfx11xx" are no processors.
bool looksLikeProcessor(StringRef P) {
  if (!P.consume_front("gfx") || P.size() < 3 || P.size() > 4)
    return false;
  return all_of(P.drop_back(), isDigit) && isHexDigit(P.back()) &&
         !isUpper(P.back());
}

bool isProcessor(StringRef P) {
  // A strict processor is its own target ("gfx1250-strict"), never folded
  // into its base; its name is the base's.
  StringRef Base = P;
  Base.consume_back("-strict");
  return isKnownProcessor(P) || isKnownProcessor(Base) ||
         looksLikeProcessor(Base);
}

/// The canonical target ID spelled at Name[Begin, ...), starting from
/// upstream's match Name[Begin, End): a generic processor read whole
/// ("gfx9-4-generic", where upstream reads "gfx9"), then every feature
/// written clang's way (":xnack+") or Tensile's ("-sramecc+"). Sets End to
/// the end of what was read. None if that is no target ID.
std::optional<std::string> targetIdFrom(StringRef Name, size_t Begin,
                                        size_t &End) {
  std::string Processor = Name.slice(Begin, End).str();
  size_t I = End;
  // Upstream's match may end in "-xnack±"; re-read its features below.
  if (size_t Dash = StringRef(Processor).find("-xnack");
      Dash != StringRef::npos) {
    I = Begin + Dash;
    Processor.resize(Dash);
  }
  if (all_of(StringRef(Processor).drop_front(3), isDigit)) {
    StringRef Rest = Name.substr(I);
    size_t Len = 0;
    if (Rest.size() > 1 && Rest[0] == '-' && isDigit(Rest[1])) {
      Len = 1;
      while (Len < Rest.size() && isDigit(Rest[Len]))
        ++Len;
    }
    if (Rest.substr(Len).starts_with("-generic")) {
      Processor += Rest.take_front(Len + 8).str();
      I += Len + 8;
    }
  }
  if (!isProcessor(Processor) && !isGenericProcessor(Processor))
    return std::nullopt;
  std::string Text = Processor;
  for (;;) {
    StringRef Rest = Name.substr(I);
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
    I += 1 + NameLen + 1;
  }
  std::optional<TargetId> Id = parseTargetId(Text);
  if (!Id)
    return std::nullopt; // "gfx1100-xnack+": no such target
  End = I;
  return Id->str();
}

/// The target ID a whole directory name is ("gfx942", "gfx942-xnack+").
std::optional<std::string> wholeTargetId(StringRef Name) {
  size_t End = gfxArchAt(Name, 0);
  if (End == 0)
    return std::nullopt;
  std::optional<std::string> Id = targetIdFrom(Name, 0, End);
  if (!Id || End != Name.size())
    return std::nullopt;
  return Id;
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

/// Name with the target ID Id removed where upstream's pattern finds it;
/// Name unchanged if it spells no target or another one.
std::string withoutTarget(StringRef Name, StringRef Id) {
  std::optional<Span> S = searchGfxArch(Name);
  if (!S)
    return Name.str();
  size_t End = S->End;
  std::optional<std::string> Found = targetIdFrom(Name, S->Begin, End);
  if (!Found || *Found != Id)
    return Name.str();
  return removeSpan(Name, S->Begin, End);
}

std::string joinPath(ArrayRef<StringRef> Parts) { return join(Parts, "/"); }

/// The '/'-separated path below the first occurrence of Anchor in RelPath,
/// from the component after the one the anchor ends in (upstream tests
/// `anchor in path`, a substring).
StringRef belowAnchor(StringRef RelPath, size_t AnchorPos, size_t AnchorLen) {
  size_t Slash = RelPath.find('/', AnchorPos + AnchorLen);
  return Slash == StringRef::npos ? RelPath.substr(RelPath.rfind('/') + 1)
                                  : RelPath.substr(Slash + 1);
}

/// A match before the handler's name is put in front of the key.
struct Found {
  std::string Bundle;
  std::string TargetId;
  std::string KeyTail; ///< empty: not packed
  StringRef Kind;
  std::string Operation;
};

class UpstreamHandler : public DatabaseHandler {
public:
  explicit UpstreamHandler(StringRef Name) : HandlerName(Name) {}
  StringRef name() const override { return HandlerName; }

  std::optional<DatabaseFile> match(StringRef RelPath) const override {
    if (RelPath.empty() || RelPath.starts_with("/") ||
        RelPath.ends_with("/") || RelPath.contains("//"))
      return std::nullopt;
    std::optional<Found> M = detect(RelPath);
    if (!M)
      return std::nullopt;
    DatabaseFile F;
    F.Handler = this;
    F.Bundle = M->Bundle;
    F.Artifact = baseArch(M->Bundle);
    F.TargetId = M->TargetId;
    if (!M->KeyTail.empty() && !M->TargetId.empty())
      F.Key = (HandlerName + "/" + M->TargetId + "/" + M->KeyTail).str();
    F.Metadata.emplace_back("kind", M->Kind.str());
    if (!M->Operation.empty())
      F.Metadata.emplace_back("operation", M->Operation);
    return F;
  }

protected:
  virtual std::optional<Found> detect(StringRef RelPath) const = 0;

private:
  StringRef HandlerName;
};

// Tensile (rocBLAS, hipBLASLt, hipSPARSELt). Upstream: the path contains
// "<lib>/library"; a ".co", ".hsaco" or ".dat" file whose name holds the
// pattern is of that target (the flat layout); else a path holding
// "/library/<arch>/" is of <arch>, whatever the file (the per-target layout:
// fallback ".dat", TensileManifest.txt, ...).
class TensileHandler final : public UpstreamHandler {
public:
  TensileHandler(StringRef Name, StringRef LibraryDir)
      : UpstreamHandler(Name), LibraryDir(LibraryDir) {}

protected:
  std::optional<Found> detect(StringRef RelPath) const override {
    size_t Anchor = RelPath.find(LibraryDir);
    if (Anchor == StringRef::npos)
      return std::nullopt;
    StringRef FileName = RelPath.substr(RelPath.rfind('/') + 1);
    // Python's Path.suffix: none for ".co" alone or a name ending in '.'.
    size_t Dot = FileName.rfind('.');
    StringRef Suffix = Dot != StringRef::npos && Dot > 0 &&
                               Dot + 1 < FileName.size()
                           ? FileName.substr(Dot)
                           : StringRef();
    Found M;
    M.Kind = Suffix == ".co" || Suffix == ".hsaco" ? "code-object"
             : Suffix == ".dat"                    ? "index"
                                                   : "data";
    std::optional<Span> InName;
    if (Suffix == ".co" || Suffix == ".hsaco" || Suffix == ".dat")
      InName = searchGfxArch(FileName);
    std::optional<Span> InDir;
    if (!InName) {
      // "/library/<arch>/": a directory that is the pattern, whole.
      for (size_t Pos = RelPath.find("/library/"); Pos != StringRef::npos;
           Pos = RelPath.find("/library/", Pos + 1)) {
        size_t Begin = Pos + 9;
        size_t Len = gfxArchAt(RelPath, Begin);
        if (Len && Begin + Len < RelPath.size() && RelPath[Begin + Len] == '/') {
          InDir = Span{Begin, Begin + Len};
          break;
        }
      }
      if (!InDir)
        return std::nullopt;
    }
    if (InName) {
      M.Bundle = FileName.slice(InName->Begin, InName->End).str();
      size_t End = InName->End;
      if (std::optional<std::string> Id =
              targetIdFrom(FileName, InName->Begin, End))
        M.TargetId = *Id;
    } else {
      M.Bundle = RelPath.slice(InDir->Begin, InDir->End).str();
      if (std::optional<std::string> Id = wholeTargetId(M.Bundle))
        M.TargetId = *Id;
    }
    // The key: the path below the library directory, without the target's
    // own directory and without the target in the file name, so the flat
    // and the per-target layout give the same key.
    SmallVector<StringRef, 8> Tail;
    belowAnchor(RelPath, Anchor, LibraryDir.size()).split(Tail, '/');
    if (Tail.size() > 1 && !M.TargetId.empty()) {
      std::optional<std::string> DirId = wholeTargetId(Tail.front());
      if (DirId && *DirId == M.TargetId)
        Tail.erase(Tail.begin());
    }
    std::string File = withoutTarget(Tail.back(), M.TargetId);
    Tail.back() = File;
    M.KeyTail = joinPath(Tail);
    return M;
  }

private:
  StringRef LibraryDir;
};

// AOTriton: the component after the first "aotriton.images" directory,
// when it starts with "amd-gfx", is the bundle key without "amd-", family
// names mapped to rocm-bootstrap's keys ("gfx11xx" -> "gfx11", "gfx120x" ->
// "gfx12_0"); any file below it.
class AotritonHandler final : public UpstreamHandler {
public:
  AotritonHandler() : UpstreamHandler("aotriton") {}

protected:
  std::optional<Found> detect(StringRef RelPath) const override {
    SmallVector<StringRef, 8> Parts;
    RelPath.split(Parts, '/');
    std::optional<size_t> J = aotritonImageDirectory(Parts);
    if (!J)
      return std::nullopt;
    StringRef Dir = Parts[*J].drop_front(4); // "amd-"
    Found M;
    M.Kind = "kernel-image";
    M.Bundle = Dir == "gfx11xx"   ? "gfx11"
               : Dir == "gfx120x" ? "gfx12_0"
                                  : Dir.str();
    if (*J + 1 >= Parts.size())
      return M; // "aotriton.images/amd-gfx942" is the file itself
    if (std::optional<std::string> Id = wholeTargetId(Dir))
      M.TargetId = *Id;
    ArrayRef<StringRef> Below = ArrayRef(Parts).drop_front(*J + 1);
    M.KeyTail = joinPath(Below);
    M.Operation = joinPath(Below.drop_back());
    return M;
  }
};

// MIOpen: its Composable Kernel plugins anywhere,
// "(lib)MIOpenCK<word>_<arch>.so" or ".dll" (anything may follow: ".so.1"),
// and below "miopen/db", ".kdb", ".model", ".db.txt" and ".fdb.txt" files
// whose name holds one of upstream's processors (MIOpen writes the CU count
// right after it: "gfx942130").
class MIOpenHandler final : public UpstreamHandler {
public:
  MIOpenHandler() : UpstreamHandler("miopen") {}

protected:
  std::optional<Found> detect(StringRef RelPath) const override {
    StringRef FileName = RelPath.substr(RelPath.rfind('/') + 1);
    if (std::optional<Found> M = ckPlugin(FileName))
      return M;
    size_t Anchor = RelPath.find("miopen/db");
    if (Anchor == StringRef::npos)
      return std::nullopt;
    Found M;
    M.Kind = FileName.ends_with(".kdb")       ? "kernel-db"
             : FileName.ends_with(".model")   ? "model"
             : FileName.ends_with(".fdb.txt") ? "find-db"
             : FileName.ends_with(".db.txt")  ? "perf-db"
                                              : "";
    if (M.Kind.empty())
      return std::nullopt;
    // Upstream's list, tried in its order at each position.
    static const StringRef Known[] = {
        "90a",  "900",  "906",  "908",  "940",  "941",  "942",
        "950",  "1010", "1030", "1100", "1101", "1102", "1150",
        "1151", "1200", "1201", "1250-strict", "1250"};
    for (size_t Pos = FileName.find("gfx"); Pos != StringRef::npos;
         Pos = FileName.find("gfx", Pos + 1)) {
      StringRef After = FileName.substr(Pos + 3);
      for (StringRef K : Known) {
        if (!After.starts_with(K))
          continue;
        size_t End = Pos + 3 + K.size();
        M.Bundle = FileName.slice(Pos, End).str();
        if (std::optional<TargetId> Id = parseTargetId(M.Bundle))
          M.TargetId = Id->str();
        SmallVector<StringRef, 8> Tail;
        belowAnchor(RelPath, Anchor, 9).split(Tail, '/');
        std::string File = removeSpan(FileName, Pos, End);
        Tail.back() = File;
        M.KeyTail = joinPath(Tail);
        return M;
      }
    }
    return std::nullopt;
  }

private:
  static std::optional<Found> ckPlugin(StringRef FileName) {
    StringRef Name = FileName;
    Name.consume_front("lib");
    if (!Name.consume_front("MIOpenCK"))
      return std::nullopt;
    // \w+ then "_<arch>" then ".so" or ".dll": the last '_' that starts the
    // pattern followed by one of the suffixes (the regex backtracks).
    for (size_t U = Name.rfind('_'); U != StringRef::npos && U > 0;
         U = Name.rfind('_', U - 1)) {
      StringRef Word = Name.take_front(U);
      if (!all_of(Word, [](char C) { return isAlnum(C) || C == '_'; }))
        continue;
      size_t Len = gfxArchAt(Name, U + 1);
      if (!Len)
        continue;
      StringRef After = Name.substr(U + 1 + Len);
      if (!After.starts_with(".so") && !After.starts_with(".dll"))
        continue;
      Found M;
      M.Kind = "host-library";
      M.Bundle = Name.substr(U + 1, Len).str();
      size_t End = U + 1 + Len;
      if (std::optional<std::string> Id = targetIdFrom(Name, U + 1, End))
        M.TargetId = *Id;
      return M; // a host library: not packed
    }
    return std::nullopt;
  }
};

// Composable Kernel: "(lib)device_conv_operations_<arch>[_strict]" then any
// of "_xnack" / "_sramecc" with 'p' or '_', then ".a" or ".lib", the whole
// name; the bundle key is the bare processor ("_strict" read "-strict").
class ComposableKernelHandler final : public UpstreamHandler {
public:
  ComposableKernelHandler() : UpstreamHandler("composablekernel") {}

protected:
  std::optional<Found> detect(StringRef RelPath) const override {
    StringRef Name = RelPath.substr(RelPath.rfind('/') + 1);
    Name.consume_front("lib");
    if (!Name.consume_front("device_conv_operations_"))
      return std::nullopt;
    StringRef Token;
    if (Name.ends_with(".a"))
      Token = Name.drop_back(2);
    else if (Name.ends_with(".lib"))
      Token = Name.drop_back(4);
    else
      return std::nullopt;
    if (!Token.starts_with("gfx"))
      return std::nullopt;
    size_t I = 3, Digits = 3;
    while (I < Token.size() && isDigit(Token[I]))
      ++I;
    if (I == Digits)
      return std::nullopt;
    while (I < Token.size() && isLowerAlpha(Token[I]))
      ++I;
    std::string Processor = Token.take_front(I).str();
    if (Token.substr(I).starts_with("_strict")) {
      Processor += "-strict";
      I += 7;
    }
    std::string Text = Processor;
    while (I < Token.size()) {
      StringRef Rest = Token.substr(I);
      size_t NameLen = Rest.starts_with("_xnack")     ? 6
                       : Rest.starts_with("_sramecc") ? 8
                                                      : 0;
      if (NameLen == 0 || Rest.size() <= NameLen ||
          (Rest[NameLen] != 'p' && Rest[NameLen] != '_'))
        return std::nullopt;
      Text += ":" + Rest.slice(1, NameLen).str() +
              (Rest[NameLen] == 'p' ? "+" : "-");
      I += NameLen + 1;
    }
    Found M;
    M.Kind = "host-archive";
    M.Bundle = Processor;
    if (std::optional<TargetId> Id = parseTargetId(Text))
      M.TargetId = Id->str();
    return M; // a host archive: not packed
  }
};

// hipKernelProvider: the first "arch_content" or "test_arch_content"
// component right below an "engines" one (not the first component); the
// first directory below it, at any depth, that is upstream's pattern whole
// is the bundle key.
class HipKernelProviderHandler final : public UpstreamHandler {
public:
  HipKernelProviderHandler() : UpstreamHandler("hipkernelprovider") {}

protected:
  std::optional<Found> detect(StringRef RelPath) const override {
    SmallVector<StringRef, 8> Parts;
    RelPath.split(Parts, '/');
    size_t Root = 0;
    for (size_t I = 1; I < Parts.size() && !Root; ++I)
      if ((Parts[I] == "arch_content" || Parts[I] == "test_arch_content") &&
          Parts[I - 1] == "engines")
        Root = I;
    if (!Root)
      return std::nullopt;
    for (size_t I = Root + 1; I + 1 < Parts.size(); ++I) {
      if (!fullmatchGfxArch(Parts[I]))
        continue;
      Found M;
      M.Kind = "content";
      M.Bundle = Parts[I].str();
      if (std::optional<std::string> Id = wholeTargetId(Parts[I]))
        M.TargetId = *Id;
      SmallVector<StringRef, 8> Tail(Parts.begin() + Root + 1, Parts.end());
      Tail.erase(Tail.begin() + (I - Root - 1));
      M.KeyTail = joinPath(Tail);
      return M;
    }
    return std::nullopt;
  }
};

// RocJitsu's translations (rccl): exactly
// "share/rocjitsu/translations/<domain>/v1/<64 lowercase hex>.{man,obj}",
// the domain mapped by a fixed table ("gfx1250-b0-a0" -> "gfx1250").
class HotswapCacheHandler final : public UpstreamHandler {
public:
  HotswapCacheHandler() : UpstreamHandler("hotswap_cache") {}

protected:
  std::optional<Found> detect(StringRef RelPath) const override {
    SmallVector<StringRef, 8> Parts;
    RelPath.split(Parts, '/');
    if (Parts.size() != 6 || Parts[0] != "share" || Parts[1] != "rocjitsu" ||
        Parts[2] != "translations" || Parts[4] != "v1")
      return std::nullopt;
    StringRef File = Parts[5];
    StringRef Hash = File.take_front(64);
    StringRef Ext = File.drop_front(64);
    if (Hash.size() != 64 ||
        !all_of(Hash, [](char C) { return isHexDigit(C) && !isUpper(C); }) ||
        (Ext != ".man" && Ext != ".obj"))
      return std::nullopt;
    if (Parts[3] != "gfx1250-b0-a0")
      return std::nullopt;
    Found M;
    M.Kind = Ext == ".man" ? "translation-manifest" : "translation";
    M.Bundle = "gfx1250";
    M.TargetId = "gfx1250";
    M.KeyTail = joinPath(ArrayRef(Parts).drop_front(4));
    return M;
  }
};

const TensileHandler RocBLAS("rocblas", "rocblas/library");
const TensileHandler HipBLASLt("hipblaslt", "hipblaslt/library");
const TensileHandler HipSPARSELt("hipsparselt", "hipsparselt/library");
const AotritonHandler Aotriton;
const MIOpenHandler MIOpen;
const ComposableKernelHandler ComposableKernel;
const HipKernelProviderHandler HipKernelProvider;
const HotswapCacheHandler HotswapCache;

const DatabaseHandler *const AllHandlers[] = {
    &RocBLAS,           &HipBLASLt,   &HipSPARSELt,     &Aotriton, &MIOpen,
    &ComposableKernel, &HipKernelProvider, &HotswapCache};

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

std::optional<size_t>
kpack::aotritonImageDirectory(ArrayRef<StringRef> Parts) {
  for (size_t I = 0; I + 1 < Parts.size(); ++I)
    if (Parts[I] == "aotriton.images")
      return Parts[I + 1].starts_with("amd-gfx") ? std::optional<size_t>(I + 1)
                                                 : std::nullopt;
  return std::nullopt;
}

std::optional<std::string> kpack::targetIdInName(StringRef Name) {
  std::optional<Span> S = searchGfxArch(Name);
  if (!S)
    return std::nullopt;
  size_t End = S->End;
  return targetIdFrom(Name, S->Begin, End);
}

std::string kpack::baseArch(StringRef Arch) {
  // "-xnack" and "-sramecc" read as ":xnack", ":sramecc", then everything
  // from the first ':' dropped.
  std::string Out;
  for (size_t I = 0; I < Arch.size(); ++I) {
    StringRef Rest = Arch.substr(I);
    if (Rest.starts_with("-xnack") || Rest.starts_with("-sramecc") ||
        Rest.front() == ':')
      break;
    Out += Arch[I];
  }
  return Out;
}

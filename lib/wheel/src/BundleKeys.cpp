//===- BundleKeys.cpp - rocm_bootstrap's packaging bundles ----------------===//
//
// The tables are rocm_bootstrap's (targets.py, FORMAT.md §6): sub-families by
// major and minor ISA version, families by major version, the display names
// its device METADATA shows, and the LLVM generic processor that covers a
// level.
//
//===----------------------------------------------------------------------===//

#include "kpack/BundleKeys.h"
#include "kpack/DatabaseHandlers.h"

#include "kpack/TargetId.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using namespace kpack;

namespace {

struct SubFamily {
  const char *Key, *Family, *DisplayName, *Generic;
  std::initializer_list<const char *> Members;
};

const SubFamily SubFamilies[] = {
    {"gfx9_0", "gfx9", "Vega", "gfx9-generic",
     {"gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a",
      "gfx90c"}},
    {"gfx9_4", "gfx9", "MI300", "gfx9-4-generic", {"gfx942"}},
    {"gfx9_5", "gfx9", "MI350", nullptr, {"gfx950"}},
    {"gfx10_1", "gfx10", "RDNA1", "gfx10-1-generic",
     {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}},
    {"gfx10_3", "gfx10", "RDNA2", "gfx10-3-generic",
     {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035",
      "gfx1036"}},
    {"gfx11_0", "gfx11", "RDNA3", nullptr,
     {"gfx1100", "gfx1101", "gfx1102", "gfx1103"}},
    {"gfx11_5", "gfx11", "RDNA3.5", nullptr,
     {"gfx1150", "gfx1151", "gfx1152", "gfx1153"}},
    {"gfx12_0", "gfx12", "RDNA4", "gfx12-generic", {"gfx1200", "gfx1201"}},
    {"gfx12_5", "gfx12", "GFX12.5", "gfx12-5-generic", {"gfx1250", "gfx1251"}},
};

struct Family {
  const char *Key, *DisplayName, *Generic;
};

const Family Families[] = {
    {"gfx9", "GFX9", nullptr},
    {"gfx10", "GFX10", nullptr},
    {"gfx11", "RDNA3", "gfx11-generic"},
    {"gfx12", "RDNA4", nullptr},
};

const SubFamily *subFamilyOf(StringRef Target) {
  for (const SubFamily &S : SubFamilies)
    for (const char *M : S.Members)
      if (Target == M)
        return &S;
  return nullptr;
}

} // namespace

std::optional<PackagingBundle> kpack::lookupBundle(StringRef Key) {
  for (const Family &F : Families)
    if (Key == F.Key)
      return PackagingBundle{F.Key, BundleLevel::Family, F.DisplayName};
  for (const SubFamily &S : SubFamilies)
    if (Key == S.Key)
      return PackagingBundle{S.Key, BundleLevel::SubFamily, S.DisplayName};
  // A target-level bundle is displayed by its name (rocm_bootstrap builds
  // them from the targets alone).
  if (subFamilyOf(Key))
    return PackagingBundle{Key.str(), BundleLevel::Target, Key.str()};
  return std::nullopt;
}

std::vector<PackagingBundle> kpack::packagingChain(StringRef TargetKey) {
  const SubFamily *S = subFamilyOf(TargetKey);
  if (!S)
    return {};
  return {*lookupBundle(TargetKey), *lookupBundle(S->Key),
          *lookupBundle(S->Family)};
}

std::optional<std::string> kpack::bundleKeyFor(StringRef Target) {
  std::string Text = Target.trim().str();
  if (lookupBundle(Text))
    return Text;
  // Tensile spells features with '-' ("gfx90a-xnack+"); a target ID with ':'.
  for (const char *F : {"-xnack", "-sramecc"})
    for (size_t At; (At = Text.find(F)) != std::string::npos;)
      Text[At] = ':';
  if (std::optional<TargetId> T = parseTargetId(Text)) {
    if (subFamilyOf(T->Processor))
      return T->Processor;
    for (const Family &F : Families)
      if (F.Generic && T->Processor == F.Generic)
        return std::string(F.Key);
    for (const SubFamily &S : SubFamilies)
      if (S.Generic && T->Processor == S.Generic)
        return std::string(S.Key);
  }
  // AOTriton's family directories: "gfx11xx" (family), "gfx120x"
  // (sub-family: major 12, minor 0).
  StringRef Name = Target.trim();
  if (Name.consume_back("xx")) {
    if (lookupBundle(Name) &&
        lookupBundle(Name)->Level == BundleLevel::Family)
      return Name.str();
    return std::nullopt;
  }
  if (Name.consume_back("x") && Name.size() > 4) {
    std::string Key = Name.drop_back().str() + "_" + Name.back();
    if (std::optional<PackagingBundle> B = lookupBundle(Key))
      if (B->Level == BundleLevel::SubFamily)
        return Key;
  }
  return std::nullopt;
}

std::optional<std::string> kpack::aotritonFamilyBundle(StringRef RelPath) {
  SmallVector<StringRef, 8> Parts;
  RelPath.split(Parts, '/');
  // A file below the image directory, not the directory itself.
  std::optional<size_t> J = aotritonImageDirectory(Parts);
  if (!J || *J + 1 >= Parts.size())
    return std::nullopt;
  StringRef Dir = Parts[*J].drop_front(4); // "amd-"
  if (!Dir.ends_with("x") && !lookupBundle(Dir))
    return std::nullopt;
  std::optional<std::string> Key = bundleKeyFor(Dir);
  if (!Key || lookupBundle(*Key)->Level == BundleLevel::Target)
    return std::nullopt;
  return Key;
}

std::string kpack::deviceDistName(StringRef Prefix, StringRef Key) {
  std::string Name = Prefix.str() + "-" + Key.str();
  std::replace(Name.begin() + Prefix.size(), Name.end(), '_', '-');
  return Name;
}

std::string kpack::knownBundleKeys() {
  std::vector<std::string> Keys;
  for (const Family &F : Families)
    Keys.push_back(F.Key);
  for (const SubFamily &S : SubFamilies) {
    Keys.push_back(S.Key);
    for (const char *M : S.Members)
      Keys.push_back(M);
  }
  llvm::sort(Keys);
  return join(Keys, ", ");
}

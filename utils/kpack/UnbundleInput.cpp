//===- UnbundleInput.cpp - kpack unbundle: input bytes to named files -----===//

#include "UnbundleInput.h"

#include "kpack/BundleCodec.h"
#include "kpack/HostBinary.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"
#include "kpack/TargetId.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace llvm;
using namespace kpack;

namespace {
struct CodeObject {
  const BundleEntry *Entry;
  const Bundle *From;
};
} // namespace

/// Can a file be named after E's ID: "<kind>-amdgcn-amd-amdhsa--<target ID>"
/// with a kind of letters and digits? parseTargetId of the ID after its
/// kind takes exactly the AMDGPU triple with an empty environment, then a
/// target ID ([a-z0-9-] and known features), so nothing of the name can be
/// a path separator or a dot component.
static bool namesAFile(const BundleEntry &E) {
  return !E.Kind.empty() && all_of(E.Kind, isAlnum) &&
         parseTargetId(E.Id.substr(E.Kind.size() + 1)).has_value();
}

Expected<std::vector<UnbundledObject>>
kpack::unbundleImage(MemoryBufferRef Image, StringRef Arch) {
  StringRef File = Image.getBufferIdentifier();
  StringRef Bytes = Image.getBuffer();
  std::vector<Bundle> Bundles;
  if (Bytes.starts_with("\x7f"
                        "ELF") ||
      hostImageFormat(Bytes) != HostImageFormat::None) {
    Expected<HostBinary> H = analyzeHostBinary(Image);
    if (!H)
      return makeError("'" + File + "': " + toString(H.takeError()));
    if (!H->Fatbin)
      return makeError("'" + File + "': no " + H->fatbinSectionName() +
                       " section");
    for (const BundleInfo &B : H->Bundles) {
      Bundles.emplace_back();
      if (Error E = decodeBundleAt(Image, B, Bundles.back()))
        return makeError("'" + File + "': " + toString(std::move(E)));
    }
  } else {
    const auto *Data = reinterpret_cast<const uint8_t *>(Bytes.data());
    if (!isBundle(Data, Bytes.size()))
      return makeError("'" + File + "': not a fat binary or an offload bundle");
    if (Status S = decodeBundleSection(Data, Bytes.size(), Bundles,
                                       /*Align=*/1))
      return makeError("'" + File + "': " + S.message());
  }
  // --gfx-arch: upstream's rule, the processor after the ID's last "--".
  auto Selected = [&](StringRef Id) {
    size_t Sep = Id.rfind("--");
    return Arch.empty() || (Sep != StringRef::npos &&
                            Id.substr(Sep + 2).split(':').first == Arch);
  };
  std::vector<CodeObject> Objects;
  for (const Bundle &B : Bundles)
    for (const BundleEntry *E : B.deviceEntries())
      if (Selected(E->Id))
        Objects.push_back({E, &B});
  if (Objects.empty() && !Arch.empty())
    return makeError("no code objects for architecture '" + Arch + "' in '" +
                     File + "'");
  // The file names are made of entry IDs: every one is checked before
  // anything is written.
  for (const CodeObject &O : Objects)
    if (!namesAFile(*O.Entry))
      return makeError("'" + File + "': bundle entry " +
                       quoteInput(O.Entry->Id) +
                       " is not <kind>-amdgcn-amd-amdhsa--<target ID>; no file "
                       "is named after it");
  StringSet<> Seen;
  bool Indexed = false;
  for (const CodeObject &O : Objects)
    Indexed |= !Seen.insert(O.Entry->Id).second;
  std::vector<UnbundledObject> Out;
  for (size_t I = 0; I < Objects.size(); ++I) {
    const BundleEntry &E = *Objects[I].Entry;
    const uint8_t *Payload = Objects[I].From->payload(E);
    StringRef Ext = StringRef(E.Id).starts_with("hip") ? ".hsaco" : ".elf";
    Out.push_back({E.Id + (Indexed ? "_" + std::to_string(I) : "") + Ext.str(),
                   std::vector<uint8_t>(Payload, Payload + E.Size)});
  }
  return Out;
}

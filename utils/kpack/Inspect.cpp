//===- Inspect.cpp - kpack inspect: device code in a host binary ----------===//
//
// The ROCm counterpart of `cuobjdump --list-elf`: what device code an ELF
// file carries (bundles, targets, compression), its fat binary wrappers, and
// for kpack'd binaries the metadata and the archive paths the runtime would
// search. A thin front end over kpack/HostBinary.h. Given a .kpack archive,
// its summary (ArchiveSummary.h: scheme, shared segments, deduplication).
//
//===----------------------------------------------------------------------===//

#include "ArchiveSummary.h"
#include "Commands.h"

#include "kpack/HostBinary.h"
#include "kpack/HostBinaryClass.h"
#include "kpack/Quote.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace llvm;
using namespace kpack;

static cl::SubCommand InspectCmd("inspect",
                                 "Show the device code a host binary carries, "
                                 "or summarize a .kpack archive");
static cl::opt<std::string> InspectInput(cl::Positional, cl::Required,
                                         cl::desc("<binary or archive>"),
                                         cl::sub(InspectCmd));
static cl::opt<bool> InspectJson("json", cl::desc("Print JSON"),
                                 cl::sub(InspectCmd));

namespace {

/// Text from the input printed whole up to this length (paths, names), past
/// it as an excerpt: a corrupt record must not flood the terminal.
constexpr size_t MaxPathChars = 4096;

const char *compressionName(const BundleInfo &B) {
  switch (B.Compression) {
  case BundleCompression::None:
    return "none";
  case BundleCompression::Zlib:
    return "zlib";
  case BundleCompression::Zstd:
    return "zstd";
  }
  return "unknown";
}

std::string magicName(uint32_t Magic) {
  if (Magic == HipfMagic)
    return "HIPF";
  if (Magic == HipkMagic)
    return "HIPK";
  return "0x" + utohexstr(Magic);
}

std::string hex(uint64_t V) { return "0x" + utohexstr(V, /*LowerCase=*/true); }

/// A search path as the runtime sees it: relative paths are resolved
/// against the binary's directory; @GFXARCH@ stays a pattern.
std::string resolveSearchPath(StringRef BinaryDir, StringRef Path) {
  if (sys::path::is_absolute(Path))
    return Path.str();
  SmallString<256> P(BinaryDir);
  sys::path::append(P, Path);
  sys::path::remove_dots(P, /*remove_dot_dot=*/true);
  return std::string(P);
}

/// Distinct metadata records, by the address the wrappers point at.
std::map<uint64_t, const WrapperInfo *> metadataRecords(const HostBinary &H) {
  std::map<uint64_t, const WrapperInfo *> Records;
  for (const WrapperInfo &W : H.Wrappers)
    if (W.isHIPK())
      Records.emplace(W.Target, &W);
  return Records;
}

void printText(raw_ostream &OS, StringRef Path, StringRef Dir,
               const HostBinary &H) {
  size_t CodeObjects = 0;
  for (const BundleInfo &B : H.Bundles)
    for (const BundleEntry &E : B.Entries)
      CodeObjects += E.isDevice();
  OS << "file: " << Path << "\n";
  OS << "kind: " << hostFileKindName(H.Kind, H.IsPIE) << "\n";
  OS << "device code: "
     << (H.hasDeviceCode() ? "yes"
         : H.hasHIPK()     ? "kpack"
                           : "no")
     << "\n";
  if (H.Fatbin)
    OS << ".hip_fatbin: address " << hex(H.Fatbin->Address) << " offset "
       << hex(H.Fatbin->FileOffset) << " size " << H.Fatbin->Size << "\n";
  if (H.KpackRefSection)
    OS << ".rocm_kpack_ref: address " << hex(H.KpackRefSection->Address)
       << " offset " << hex(H.KpackRefSection->FileOffset) << " size "
       << H.KpackRefSection->Size << "\n";
  OS << "bundles: " << H.Bundles.size() << " (" << CodeObjects
     << " code objects)\n";
  for (size_t I = 0; I < H.Bundles.size(); ++I) {
    const BundleInfo &B = H.Bundles[I];
    OS << "bundle " << I << ": address " << hex(B.Address) << " size "
       << B.EncodedSize;
    if (B.CcobVersion)
      OS << " compressed CCOB v" << B.CcobVersion << " " << compressionName(B)
         << " uncompressed-size " << B.UncompressedSize;
    else
      OS << " uncompressed";
    OS << "\n";
    for (const BundleEntry &E : B.Entries)
      if (E.isDevice())
        OS << "  target " << escapeInput(E.TargetId) << " size " << E.Size
           << " (" << escapeInput(E.Id) << ")\n";
  }
  OS << "wrappers: " << H.Wrappers.size() << "\n";
  for (size_t I = 0; I < H.Wrappers.size(); ++I) {
    const WrapperInfo &W = H.Wrappers[I];
    OS << "wrapper " << I << ": " << magicName(W.Magic) << " address "
       << hex(W.Address) << " pointer " << hex(W.Target) << " ("
       << pointerStyleName(W.Style) << ")";
    if (W.isHIPF()) {
      if (W.BundleIndex >= 0)
        OS << " -> bundle " << W.BundleIndex;
      else
        OS << " -> no bundle";
    } else if (W.isHIPK()) {
      OS << " index " << W.kpackIndex();
      if (W.Ref)
        OS << " -> " << escapeInput(W.Ref->KernelName, MaxPathChars) << "#"
           << W.kpackIndex();
      else
        OS << " -> invalid metadata: " << W.RefError;
    }
    OS << "\n";
  }
  for (const auto &[Address, W] : metadataRecords(H)) {
    if (!W->Ref)
      continue;
    OS << "kpack metadata at " << hex(Address) << ": kernel_name \""
       << escapeInput(W->Ref->KernelName, MaxPathChars) << "\"\n";
    for (const std::string &P : W->Ref->SearchPaths) {
      OS << "  search path \"" << escapeInput(P, MaxPathChars) << "\" -> "
         << escapeInput(resolveSearchPath(Dir, P), MaxPathChars);
      if (StringRef(P).contains("@GFXARCH@"))
        OS << " (pattern)";
      OS << "\n";
    }
    if (!W->Ref->LinkId.empty())
      OS << "  link_id " << escapeInput(W->Ref->LinkId, MaxPathChars) << "\n";
  }
  const HostBinaryClass Class = classifyHostBinary(H);
  OS << "class: " << hostBinaryClassName(Class);
  if (Class == HostBinaryClass::KpackReady)
    OS << " (link it with ld.kpack: -fuse-ld=kpack, hipcc --emit-kpack or "
          "kpack_emit)";
  else if (Class == HostBinaryClass::Broken)
    OS << " (kpack-ready objects linked without ld.kpack: its device code "
          "was dropped; relink with -fuse-ld=kpack, hipcc --emit-kpack or "
          "kpack_emit)";
  OS << "\n";
}

void printJson(raw_ostream &OS, StringRef Path, StringRef Dir,
               const HostBinary &H) {
  json::OStream J(OS, 2);
  J.object([&] {
    J.attribute("file", Path);
    J.attribute("kind", hostFileKindName(H.Kind, H.IsPIE));
    J.attribute("has_device_code", H.hasDeviceCode());
    J.attribute("kpack", H.hasHIPK());
    J.attribute("class", hostBinaryClassName(classifyHostBinary(H)));
    if (H.Fatbin)
      J.attributeObject("hip_fatbin", [&] {
        J.attribute("address", int64_t(H.Fatbin->Address));
        J.attribute("offset", int64_t(H.Fatbin->FileOffset));
        J.attribute("size", int64_t(H.Fatbin->Size));
      });
    if (H.KpackRefSection)
      J.attributeObject("rocm_kpack_ref", [&] {
        J.attribute("address", int64_t(H.KpackRefSection->Address));
        J.attribute("offset", int64_t(H.KpackRefSection->FileOffset));
        J.attribute("size", int64_t(H.KpackRefSection->Size));
      });
    J.attributeArray("bundles", [&] {
      for (const BundleInfo &B : H.Bundles)
        J.object([&] {
          J.attribute("address", int64_t(B.Address));
          J.attribute("size", int64_t(B.EncodedSize));
          J.attribute("compression", compressionName(B));
          J.attribute("ccob_version", int64_t(B.CcobVersion));
          J.attribute("uncompressed_size", int64_t(B.UncompressedSize));
          J.attributeArray("code_objects", [&] {
            for (const BundleEntry &E : B.Entries)
              if (E.isDevice())
                J.object([&] {
                  J.attribute("id", E.Id);
                  J.attribute("target", E.TargetId);
                  J.attribute("size", int64_t(E.Size));
                });
          });
        });
    });
    J.attributeArray("wrappers", [&] {
      for (const WrapperInfo &W : H.Wrappers)
        J.object([&] {
          J.attribute("magic", magicName(W.Magic));
          J.attribute("address", int64_t(W.Address));
          J.attribute("pointer", int64_t(W.Target));
          J.attribute("pointer_style", pointerStyleName(W.Style));
          if (W.isHIPF())
            J.attribute("bundle", int64_t(W.BundleIndex));
          if (W.isHIPK()) {
            J.attribute("index", int64_t(W.kpackIndex()));
            if (W.Ref)
              J.attribute("kernel_name", W.Ref->KernelName);
            else
              J.attribute("metadata_error", W.RefError);
          }
        });
    });
    J.attributeArray("kpack_metadata", [&] {
      for (const auto &Record : metadataRecords(H)) {
        uint64_t Address = Record.first;
        const WrapperInfo *W = Record.second;
        if (!W->Ref)
          continue;
        J.object([&] {
          J.attribute("address", int64_t(Address));
          J.attribute("kernel_name", W->Ref->KernelName);
          if (!W->Ref->LinkId.empty())
            J.attribute("link_id", W->Ref->LinkId);
          J.attributeArray("search_paths", [&] {
            for (const std::string &P : W->Ref->SearchPaths)
              J.object([&] {
                J.attribute("path", P);
                J.attribute("resolved", resolveSearchPath(Dir, P));
                J.attribute("pattern", StringRef(P).contains("@GFXARCH@"));
              });
          });
        });
      }
    });
  });
  OS << "\n";
}

/// `kpack inspect ARCHIVE.kpack`: the archive's summary.
int inspectArchive() {
  auto ReaderOr = openArchive(InspectInput);
  if (!ReaderOr)
    return reportError("kpack inspect", ReaderOr.takeError());
  auto SummaryOr = summarizeArchive(**ReaderOr, InspectInput);
  if (!SummaryOr)
    return reportError("kpack inspect", SummaryOr.takeError());
  const ArchiveSummary &S = *SummaryOr;
  if (InspectJson) {
    json::OStream J(outs(), 2);
    J.object([&] {
      J.attribute("file", InspectInput);
      J.attribute("kind", "kpack-archive");
      jsonArchiveSummary(J, S);
    });
    outs() << "\n";
    return 0;
  }
  outs() << "file: " << InspectInput << "\n"
         << "kind: kpack-archive\n";
  printArchiveSummary(outs(), S);
  outs() << "total: " << S.OriginalBytes << " bytes, stored " << S.StoredBytes
         << " bytes";
  if (S.SharedStoredBytes)
    outs() << " + " << S.SharedStoredBytes << " bytes of shared segments";
  outs() << ", file " << (*ReaderOr)->fileSize() << " bytes\n";
  return 0;
}

} // namespace

int runInspect() {
  auto Buf = MemoryBuffer::getFile(InspectInput, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf) {
    WithColor::error(errs(), "kpack inspect")
        << InspectInput << ": " << Buf.getError().message() << "\n";
    return 1;
  }
  if ((*Buf)->getBuffer().starts_with("KPAK"))
    return inspectArchive();
  auto Host = analyzeHostBinary((*Buf)->getMemBufferRef());
  if (!Host) {
    WithColor::error(errs(), "kpack inspect")
        << InspectInput << ": " << toString(Host.takeError()) << "\n";
    return 1;
  }
  SmallString<256> Abs(InspectInput);
  sys::fs::make_absolute(Abs);
  StringRef Dir = sys::path::parent_path(Abs);
  if (InspectJson)
    printJson(outs(), InspectInput, Dir, *Host);
  else
    printText(outs(), InspectInput, Dir, *Host);
  return 0;
}

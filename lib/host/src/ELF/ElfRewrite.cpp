//===- ElfRewrite.cpp - Remove .hip_fatbin from a linked host binary ------===//
//
// The layout change is documented in docs/convert.md. In short, with S the
// PT_LOAD holding .hip_fatbin [V0, V1) and M the metadata size:
//   * S keeps [S.start, V0 + M): the metadata replaces the fatbin's start;
//   * the rest of the fatbin leaves the file and the address space;
//   * sections of S after the fatbin (the "tail", e.g. .eh_frame) keep their
//     addresses but join the next PT_LOAD N, which is extended downwards to
//     V1 (a segment has a single offset-to-address delta, and the tail's
//     delta must change for the file to shrink);
//   * every file offset after the removed range moves down by D, a multiple
//     of the largest PT_LOAD alignment, so offset = vaddr (mod align) holds;
//   * the program header count, every other address and every loaded byte
//     other than the fatbin, the wrappers and their relocations stay as they
//     were. Non-allocated sections are laid out again after the loaded data.
//
//===----------------------------------------------------------------------===//

#include "kpack/HostRewrite.h"
#include "kpack/COFF/CoffHostBinary.h"
#include "kpack/HostBinary.h"
#include "kpack/LLVMError.h"
#include "kpack/Quote.h"
#include "kpack/WrapperPatcher.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SwapByteOrder.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace llvm;
using namespace llvm::object;
using namespace kpack;

static_assert(sys::IsLittleEndianHost,
              "ELF headers are copied as host structs (x86-64 only)");

namespace {
using ELFT = ELF64LE;
constexpr char KpackRefName[] = ".rocm_kpack_ref";
/// Non-allocated sections are laid out again after the loaded data; none
/// needs more alignment than this in practice.
constexpr uint64_t MaxRelaidAlign = uint64_t(1) << 20;

std::string hex(uint64_t V) { return "0x" + utohexstr(V, true); }

/// A plain copy of an image's ELF headers.
struct Headers {
  ELF::Elf64_Ehdr Ehdr;
  std::vector<ELF::Elf64_Phdr> Phdrs;
  std::vector<ELF::Elf64_Shdr> Shdrs;
};

Expected<Headers> readHeaders(ArrayRef<uint8_t> File) {
  auto Obj = ELFFile<ELFT>::create(
      StringRef(reinterpret_cast<const char *>(File.data()), File.size()));
  if (!Obj)
    return Obj.takeError();
  Headers H;
  std::memcpy(&H.Ehdr, File.data(), sizeof(H.Ehdr));
  auto Phdrs = Obj->program_headers();
  if (!Phdrs)
    return Phdrs.takeError();
  for (const auto &P : *Phdrs) {
    ELF::Elf64_Phdr Plain;
    std::memcpy(&Plain, &P, sizeof(Plain));
    H.Phdrs.push_back(Plain);
  }
  auto Sections = Obj->sections();
  if (!Sections)
    return Sections.takeError();
  for (const auto &S : *Sections) {
    ELF::Elf64_Shdr Plain;
    std::memcpy(&Plain, &S, sizeof(Plain));
    H.Shdrs.push_back(Plain);
  }
  return H;
}

StringRef sectionName(ArrayRef<uint8_t> File, const Headers &H,
                      const ELF::Elf64_Shdr &S);

bool inFile(ArrayRef<uint8_t> File, uint64_t Offset, uint64_t Size) {
  return Offset <= File.size() && Size <= File.size() - Offset;
}

/// Every file range the headers name lies inside the file: what the rewrite
/// and the verifier copy and compare.
Error checkRanges(ArrayRef<uint8_t> File, const Headers &H) {
  for (size_t I = 0; I < H.Phdrs.size(); ++I) {
    const auto &P = H.Phdrs[I];
    // An empty segment other than PT_LOAD names no file bytes (GNU_STACK);
    // the rewrite leaves its offset as it was.
    bool NamesNoBytes = P.p_type != ELF::PT_LOAD && P.p_filesz == 0;
    if (!NamesNoBytes && !inFile(File, P.p_offset, P.p_filesz))
      return makeError("program header " + Twine(I) + " lies outside the file");
    if (P.p_filesz > P.p_memsz && P.p_type == ELF::PT_LOAD)
      return makeError("program header " + Twine(I) +
                       " has p_filesz > p_memsz");
    if (P.p_vaddr > UINT64_MAX - P.p_memsz)
      return makeError("program header " + Twine(I) + " wraps around");
  }
  for (size_t I = 1; I < H.Shdrs.size(); ++I) {
    const auto &S = H.Shdrs[I];
    if (S.sh_type != ELF::SHT_NOBITS && !inFile(File, S.sh_offset, S.sh_size))
      return makeError("section " + Twine(I) + " lies outside the file");
  }
  return Error::success();
}

bool isLoad(const ELF::Elf64_Phdr &P) { return P.p_type == ELF::PT_LOAD; }

/// The PT_LOAD whose file part holds [VAddr, VAddr + Size), or nullptr.
const ELF::Elf64_Phdr *loadHolding(const Headers &H, uint64_t VAddr,
                                   uint64_t Size) {
  for (const auto &P : H.Phdrs)
    if (isLoad(P) && VAddr >= P.p_vaddr && VAddr - P.p_vaddr <= P.p_filesz &&
        Size <= P.p_filesz - (VAddr - P.p_vaddr))
      return &P;
  return nullptr;
}

/// What a loadable image must satisfy for its file to be the memory image:
/// PT_LOADs sorted and disjoint, offset and address congruent modulo the
/// alignment; every other segment with contents (PT_GNU_RELRO aside) and
/// every allocated section with contents at the file offset its PT_LOAD
/// gives its address. The converter checks its input with it (a violation
/// is bad input) and its output (a violation is its own bug). Expects
/// checkRanges to have passed.
Error checkLoadedLayout(ArrayRef<uint8_t> File, const Headers &H) {
  const ELF::Elf64_Phdr *Prev = nullptr;
  for (size_t I = 0; I < H.Phdrs.size(); ++I) {
    const auto &P = H.Phdrs[I];
    if (!isLoad(P) && P.p_filesz == 0)
      continue;
    if (P.p_filesz > P.p_memsz)
      return makeError("program header " + Twine(I) +
                       " has p_filesz > p_memsz");
    if (!isLoad(P))
      continue;
    if (P.p_align > 1 && P.p_offset % P.p_align != P.p_vaddr % P.p_align)
      return makeError("PT_LOAD at " + hex(P.p_vaddr) +
                       ": offset and address disagree modulo alignment");
    if (Prev && P.p_vaddr < Prev->p_vaddr + Prev->p_memsz)
      return makeError("PT_LOAD segments unsorted or overlapping at " +
                       hex(P.p_vaddr));
    Prev = &P;
  }
  for (size_t I = 0; I < H.Phdrs.size(); ++I) {
    const auto &P = H.Phdrs[I];
    if (isLoad(P) || P.p_filesz == 0)
      continue;
    if (P.p_type == ELF::PT_GNU_RELRO) {
      // Only its start must be loaded (it may span several PT_LOADs).
      const ELF::Elf64_Phdr *Start = nullptr;
      for (const auto &L : H.Phdrs)
        if (isLoad(L) && P.p_vaddr >= L.p_vaddr &&
            P.p_vaddr - L.p_vaddr < L.p_memsz)
          Start = &L;
      if (!Start ||
          P.p_offset != Start->p_offset + (P.p_vaddr - Start->p_vaddr))
        return makeError("PT_GNU_RELRO (program header " + Twine(I) +
                         ") is not backed by its PT_LOAD");
      continue;
    }
    const auto *Load = loadHolding(H, P.p_vaddr, P.p_filesz);
    if (!Load || P.p_offset != Load->p_offset + (P.p_vaddr - Load->p_vaddr))
      return makeError("program header " + Twine(I) +
                       " is not backed by its PT_LOAD");
  }
  // The file ranges of the headers and of the loaded sections, merged: what
  // a rewrite may change. A section outside the loaded image must not share
  // bytes with them.
  std::vector<std::pair<uint64_t, uint64_t>> Loaded = {
      {0, sizeof(ELF::Elf64_Ehdr)},
      {H.Ehdr.e_phoff,
       H.Ehdr.e_phoff + H.Phdrs.size() * sizeof(ELF::Elf64_Phdr)}};
  for (size_t I = 1; I < H.Shdrs.size(); ++I) {
    const auto &S = H.Shdrs[I];
    // Empty sections too: their offset also follows their address.
    if (!(S.sh_flags & ELF::SHF_ALLOC) || S.sh_type == ELF::SHT_NOBITS)
      continue;
    const auto *Load = loadHolding(H, S.sh_addr, S.sh_size);
    // An empty section outside every segment's memory has no bytes in the
    // image (lld keeps an empty .text of a library without code at an
    // address past its read-only PT_LOAD and makes no executable segment for
    // it); the rewrite keeps its place in the file. An empty section inside a
    // segment's memory must still be at the offset its address gives.
    if (!Load && S.sh_size == 0 &&
        llvm::none_of(H.Phdrs, [&](const ELF::Elf64_Phdr &P) {
          return isLoad(P) && S.sh_addr >= P.p_vaddr &&
                 S.sh_addr - P.p_vaddr < P.p_memsz;
        }))
      continue;
    if (!Load || S.sh_offset != Load->p_offset + (S.sh_addr - Load->p_vaddr))
      return makeError("section " + Twine(I) + " (" +
                       quoteInput(sectionName(File, H, S)) +
                       ") is not backed by its PT_LOAD");
    if (S.sh_size != 0)
      Loaded.push_back({S.sh_offset, S.sh_offset + S.sh_size});
  }
  // Loaded sections do not share bytes: a rewrite of one (the wrappers) must
  // leave the others as they were.
  llvm::sort(Loaded.begin() + 2, Loaded.end());
  for (size_t I = 3; I < Loaded.size(); ++I)
    if (Loaded[I].first < Loaded[I - 1].second)
      return makeError("allocated sections overlap at file offset " +
                       hex(Loaded[I].first));
  llvm::sort(Loaded);
  std::vector<std::pair<uint64_t, uint64_t>> Merged;
  for (const auto &R : Loaded) {
    if (!Merged.empty() && R.first <= Merged.back().second)
      Merged.back().second = std::max(Merged.back().second, R.second);
    else
      Merged.push_back(R);
  }
  for (size_t I = 1; I < H.Shdrs.size(); ++I) {
    const auto &S = H.Shdrs[I];
    if ((S.sh_flags & ELF::SHF_ALLOC) || S.sh_type == ELF::SHT_NOBITS ||
        S.sh_size == 0)
      continue;
    // The first merged range ending after the section's start.
    auto It = llvm::upper_bound(
        Merged, S.sh_offset,
        [](uint64_t Off, const auto &R) { return Off < R.second; });
    if (It != Merged.end() && It->first < S.sh_offset + S.sh_size)
      return makeError("non-allocated section " + Twine(I) + " (" +
                       quoteInput(sectionName(File, H, S)) +
                       ") overlaps the headers or the loaded sections");
  }
  return Error::success();
}

/// A run of old file bytes placed at a new offset.
struct Chunk {
  uint64_t OldBegin, OldEnd, NewBegin;
};

struct Layout {
  std::vector<Chunk> Chunks;
  /// The new offset of the Size bytes at Old, if they moved as one piece
  /// (Size 0: the position may also be a chunk's end, e.g. for NOBITS).
  std::optional<uint64_t> map(uint64_t Old, uint64_t Size = 1) const {
    for (const Chunk &C : Chunks)
      if (Old >= C.OldBegin && Old <= C.OldEnd && C.OldEnd - Old >= Size)
        return C.NewBegin + (Old - C.OldBegin);
    return std::nullopt;
  }
};

StringRef sectionName(ArrayRef<uint8_t> File, const Headers &H,
                      const ELF::Elf64_Shdr &S) {
  if (H.Ehdr.e_shstrndx >= H.Shdrs.size())
    return "";
  const ELF::Elf64_Shdr &Str = H.Shdrs[H.Ehdr.e_shstrndx];
  if (Str.sh_offset > File.size() ||
      Str.sh_size > File.size() - Str.sh_offset || S.sh_name >= Str.sh_size)
    return "";
  StringRef Table(reinterpret_cast<const char *>(File.data()) + Str.sh_offset,
                  Str.sh_size);
  return Table.drop_front(S.sh_name).split('\0').first;
}

class Rewriter {
public:
  Rewriter(ArrayRef<uint8_t> File, const HostBinary &Host, Headers H,
           ArrayRef<uint8_t> Metadata)
      : File(File), Host(Host), H(std::move(H)), Metadata(Metadata) {}

  Expected<std::vector<uint8_t>> run();

private:
  Error planLoadedLayout();
  Error planSections(std::vector<uint8_t> &ShStrTab, uint64_t &NewSize);

  ArrayRef<uint8_t> File;
  const HostBinary &Host;
  Headers H;
  ArrayRef<uint8_t> Metadata;

  Layout L;
  Headers Out;
  uint64_t LoadedEndOld = 0;
  // Non-allocated sections laid out after the loaded data: index -> offset.
  std::vector<std::pair<size_t, uint64_t>> Relaid;
};

Error Rewriter::planLoadedLayout() {
  const SectionSpan &FB = *Host.Fatbin;
  const uint64_t V0 = FB.Address, V1 = FB.Address + FB.Size;
  const uint64_t F0 = FB.FileOffset, F1 = FB.FileOffset + FB.Size;
  const uint64_t M = Metadata.size();
  if (M > FB.Size)
    return makeError("kpack metadata (" + Twine(M) +
                     " bytes) does not fit in .hip_fatbin (" + Twine(FB.Size) +
                     " bytes)");

  uint64_t Align = 4096;
  int SIdx = -1;
  for (size_t I = 0; I < H.Phdrs.size(); ++I) {
    const auto &P = H.Phdrs[I];
    if (!isLoad(P))
      continue;
    if (P.p_align > 1 && !isPowerOf2_64(P.p_align))
      return makeError("PT_LOAD alignment " + hex(P.p_align) +
                       " is not a power of two");
    Align = std::max<uint64_t>(Align, P.p_align);
    LoadedEndOld = std::max<uint64_t>(LoadedEndOld, P.p_offset + P.p_filesz);
    if (P.p_vaddr <= V0 && V1 <= P.p_vaddr + P.p_filesz)
      SIdx = static_cast<int>(I);
  }
  if (SIdx < 0)
    return makeError(".hip_fatbin is not inside the file part of a PT_LOAD");
  ELF::Elf64_Phdr S = H.Phdrs[SIdx];
  if (S.p_offset + (V0 - S.p_vaddr) != F0)
    return makeError(".hip_fatbin's file offset disagrees with its segment");
  if (S.p_memsz != S.p_filesz)
    return makeError("unsupported layout: the segment holding .hip_fatbin has "
                     "zero-filled memory");
  const uint64_t SFileEnd = S.p_offset + S.p_filesz;
  const uint64_t SEndV = S.p_vaddr + S.p_filesz;

  // The next PT_LOAD by address; every PT_LOAD after S must also follow it in
  // the file (the usual layout of GNU ld and lld).
  int NIdx = -1;
  for (size_t I = 0; I < H.Phdrs.size(); ++I) {
    const auto &P = H.Phdrs[I];
    if (!isLoad(P) || static_cast<int>(I) == SIdx)
      continue;
    if (P.p_vaddr > S.p_vaddr) {
      if (P.p_offset < SFileEnd)
        return makeError("unsupported layout: a PT_LOAD after .hip_fatbin's "
                         "segment precedes it in the file");
      if (NIdx < 0 || P.p_vaddr < H.Phdrs[NIdx].p_vaddr)
        NIdx = static_cast<int>(I);
    } else if (P.p_offset + P.p_filesz > F0) {
      return makeError("unsupported layout: a PT_LOAD before .hip_fatbin's "
                       "segment lies after it in the file");
    }
  }

  Out = H;
  const uint64_t HeadEndV = V0 + M, HeadEndF = F0 + M;
  const bool HasTail = SEndV > V1;
  auto InPlace = [&] {
    // Too little to gain a page: keep the layout, the fatbin bytes are
    // zeroed after the metadata.
    L.Chunks = {{0, LoadedEndOld, 0}};
  };

  if (!HasTail) {
    uint64_t D = alignDown(F1 - HeadEndF, Align);
    L.Chunks = {{0, HeadEndF, 0}};
    if (LoadedEndOld > F1)
      L.Chunks.push_back({F1, LoadedEndOld, F1 - D});
    Out.Phdrs[SIdx].p_filesz = Out.Phdrs[SIdx].p_memsz = HeadEndV - S.p_vaddr;
    for (size_t I = 0; I < Out.Phdrs.size(); ++I)
      if (isLoad(H.Phdrs[I]) && static_cast<int>(I) != SIdx &&
          H.Phdrs[I].p_vaddr > S.p_vaddr)
        Out.Phdrs[I].p_offset -= D;
    return Error::success();
  }

  if (NIdx < 0)
    return makeError("unsupported layout: sections follow .hip_fatbin in the "
                     "last PT_LOAD");
  const ELF::Elf64_Phdr N = H.Phdrs[NIdx];
  if (N.p_vaddr < SEndV)
    return makeError("unsupported layout: overlapping PT_LOAD segments");
  // The truncated S and the extended N must not share a page.
  if (alignDown(V1, Align) < alignTo(HeadEndV, Align) ||
      N.p_offset < (N.p_vaddr - V1) + HeadEndF) {
    InPlace();
    return Error::success();
  }
  const uint64_t D = alignDown(N.p_offset - (N.p_vaddr - V1) - HeadEndF, Align);
  const uint64_t Grow = N.p_vaddr - V1;
  const uint64_t TailNewOffset = N.p_offset - D - Grow;
  L.Chunks = {{0, HeadEndF, 0}, {F1, SFileEnd, TailNewOffset}};
  if (LoadedEndOld > N.p_offset)
    L.Chunks.push_back({N.p_offset, LoadedEndOld, N.p_offset - D});

  Out.Phdrs[SIdx].p_filesz = Out.Phdrs[SIdx].p_memsz = HeadEndV - S.p_vaddr;
  for (size_t I = 0; I < Out.Phdrs.size(); ++I)
    if (isLoad(H.Phdrs[I]) && static_cast<int>(I) != SIdx &&
        H.Phdrs[I].p_vaddr > S.p_vaddr)
      Out.Phdrs[I].p_offset -= D;
  ELF::Elf64_Phdr &NewN = Out.Phdrs[NIdx];
  NewN.p_vaddr = NewN.p_paddr = V1;
  NewN.p_offset = TailNewOffset;
  NewN.p_filesz += Grow;
  NewN.p_memsz += Grow;
  // The tail needs read access, plus what its own sections ask for (not
  // S's flags: .eh_frame after the fatbin in an R+X segment stays non-exec).
  uint32_t TailFlags = ELF::PF_R;
  for (const auto &Sec : H.Shdrs)
    if ((Sec.sh_flags & ELF::SHF_ALLOC) && Sec.sh_addr >= V1 &&
        Sec.sh_addr < SEndV) {
      if (Sec.sh_flags & ELF::SHF_EXECINSTR)
        TailFlags |= ELF::PF_X;
      if (Sec.sh_flags & ELF::SHF_WRITE)
        TailFlags |= ELF::PF_W;
    }
  NewN.p_flags |= TailFlags;
  // A RELRO region starting at N takes the tail in too, so that a writable N
  // leaves the tail read-only again after relocation.
  for (auto &P : Out.Phdrs)
    if (P.p_type == ELF::PT_GNU_RELRO && P.p_vaddr == N.p_vaddr) {
      P.p_vaddr = P.p_paddr = V1;
      P.p_filesz += Grow;
      P.p_memsz += Grow;
    }
  return Error::success();
}

Error Rewriter::planSections(std::vector<uint8_t> &ShStrTab,
                             uint64_t &NewSize) {
  // Non-PT_LOAD segments follow the PT_LOAD holding their address.
  auto LoadFor = [&](uint64_t VAddr) -> const ELF::Elf64_Phdr * {
    for (const auto &P : Out.Phdrs)
      if (isLoad(P) && VAddr >= P.p_vaddr && VAddr < P.p_vaddr + P.p_memsz)
        return &P;
    return nullptr;
  };
  for (size_t I = 0; I < Out.Phdrs.size(); ++I) {
    auto &P = Out.Phdrs[I];
    if (isLoad(P) || (P.p_filesz == 0 && P.p_memsz == 0))
      continue;
    if (P.p_type == ELF::PT_GNU_RELRO) {
      const auto *Load = LoadFor(P.p_vaddr);
      if (!Load)
        return makeError("PT_GNU_RELRO (program header " + Twine(I) +
                         ") starts in the removed range");
      P.p_offset = Load->p_offset + (P.p_vaddr - Load->p_vaddr);
      continue;
    }
    if (const auto *Load = LoadFor(P.p_vaddr)) {
      P.p_offset = Load->p_offset + (P.p_vaddr - Load->p_vaddr);
    } else if (auto New = L.map(P.p_offset, P.p_filesz)) {
      P.p_offset = *New;
    } else {
      return makeError("program header " + Twine(I) +
                       " refers to removed file content");
    }
  }

  uint64_t LoadedEndNew = 0;
  for (const auto &P : Out.Phdrs)
    if (isLoad(P))
      LoadedEndNew = std::max<uint64_t>(LoadedEndNew, P.p_offset + P.p_filesz);

  // Allocated sections: through their segment; the rest through the chunks
  // or, when after the loaded data, laid out again in file order.
  std::vector<size_t> Late;
  for (size_t I = 1; I < Out.Shdrs.size(); ++I) {
    auto &S = Out.Shdrs[I];
    if (I == Host.Fatbin->Index)
      continue;
    if (S.sh_flags & ELF::SHF_ALLOC) {
      if (const auto *Load = LoadFor(S.sh_addr)) {
        S.sh_offset = Load->p_offset + (S.sh_addr - Load->p_vaddr);
        continue;
      }
    }
    if (S.sh_type == ELF::SHT_NOBITS || S.sh_offset >= LoadedEndOld ||
        S.sh_size == 0) {
      if (!(S.sh_flags & ELF::SHF_ALLOC)) {
        Late.push_back(I);
        continue;
      }
    }
    auto New = L.map(S.sh_offset, S.sh_type == ELF::SHT_NOBITS ? 0 : S.sh_size);
    if (!New)
      return makeError("section " + Twine(I) + " (" +
                       quoteInput(sectionName(File, H, H.Shdrs[I])) +
                       ") lies in the removed range");
    S.sh_offset = *New;
  }

  // .hip_fatbin becomes .rocm_kpack_ref, holding just the metadata.
  size_t StrIdx = H.Ehdr.e_shstrndx;
  if (StrIdx == 0 || StrIdx >= H.Shdrs.size() ||
      std::find(Late.begin(), Late.end(), StrIdx) == Late.end())
    return makeError("unsupported layout: .shstrtab is not after the loaded "
                     "data");
  const auto &OldStr = H.Shdrs[StrIdx];
  ShStrTab.assign(File.begin() + OldStr.sh_offset,
                  File.begin() + OldStr.sh_offset + OldStr.sh_size);
  StringRef Existing(reinterpret_cast<const char *>(ShStrTab.data()),
                     ShStrTab.size());
  size_t NameOff = Existing.find(StringRef(KpackRefName, sizeof(KpackRefName)));
  if (NameOff == StringRef::npos) {
    NameOff = ShStrTab.size();
    ShStrTab.insert(ShStrTab.end(), KpackRefName,
                    KpackRefName + sizeof(KpackRefName));
  }
  auto &Ref = Out.Shdrs[Host.Fatbin->Index];
  Ref.sh_name = NameOff;
  Ref.sh_size = Metadata.size();
  Out.Shdrs[StrIdx].sh_size = ShStrTab.size();

  std::sort(Late.begin(), Late.end(), [&](size_t A, size_t B) {
    return std::make_pair(H.Shdrs[A].sh_offset, A) <
           std::make_pair(H.Shdrs[B].sh_offset, B);
  });
  uint64_t Cursor = LoadedEndNew;
  for (size_t I : Late) {
    auto &S = Out.Shdrs[I];
    if (S.sh_type == ELF::SHT_NOBITS) {
      S.sh_offset = Cursor;
      continue;
    }
    // Only the file layout honours these alignments: a corrupt one must not
    // make the output grow without bound.
    if (S.sh_addralign > MaxRelaidAlign ||
        (S.sh_addralign > 1 && !isPowerOf2_64(S.sh_addralign)))
      return makeError("malformed host binary: section " + Twine(I) +
                       " has alignment " + hex(S.sh_addralign));
    Cursor = alignTo(Cursor, std::max<uint64_t>(S.sh_addralign, 1));
    S.sh_offset = Cursor;
    Relaid.push_back({I, Cursor});
    Cursor += S.sh_size;
  }
  Cursor = alignTo(Cursor, 8);
  Out.Ehdr.e_shoff = Out.Shdrs.empty() ? 0 : Cursor;
  NewSize = Cursor + Out.Shdrs.size() * sizeof(ELF::Elf64_Shdr);

  if (H.Ehdr.e_phnum) {
    auto New = L.map(H.Ehdr.e_phoff, H.Phdrs.size() * sizeof(ELF::Elf64_Phdr));
    if (!New)
      return makeError("the program header table lies in the removed range");
    Out.Ehdr.e_phoff = *New;
  }
  return Error::success();
}

Expected<std::vector<uint8_t>> Rewriter::run() {
  if (Error E = planLoadedLayout())
    return E;
  std::vector<uint8_t> ShStrTab;
  uint64_t NewSize = 0;
  if (Error E = planSections(ShStrTab, NewSize))
    return E;

  std::vector<uint8_t> Image(NewSize, 0);
  for (const Chunk &C : L.Chunks)
    std::memcpy(Image.data() + C.NewBegin, File.data() + C.OldBegin,
                C.OldEnd - C.OldBegin);
  const SectionSpan &FB = *Host.Fatbin;
  // The metadata replaces the fatbin's start; in the in-place layout the
  // rest of the fatbin is zeroed.
  uint64_t FatbinNew = *L.map(FB.FileOffset);
  std::memcpy(Image.data() + FatbinNew, Metadata.data(), Metadata.size());
  if (auto Rest =
          L.map(FB.FileOffset + Metadata.size(), FB.Size - Metadata.size());
      Rest && FB.Size > Metadata.size())
    std::memset(Image.data() + *Rest, 0, FB.Size - Metadata.size());
  for (const auto &[Index, Offset] : Relaid) {
    if (Index == H.Ehdr.e_shstrndx) {
      std::memcpy(Image.data() + Offset, ShStrTab.data(), ShStrTab.size());
      continue;
    }
    const auto &S = H.Shdrs[Index];
    std::memcpy(Image.data() + Offset, File.data() + S.sh_offset, S.sh_size);
  }
  std::memcpy(Image.data(), &Out.Ehdr, sizeof(Out.Ehdr));
  if (!Out.Phdrs.empty())
    std::memcpy(Image.data() + Out.Ehdr.e_phoff, Out.Phdrs.data(),
                Out.Phdrs.size() * sizeof(ELF::Elf64_Phdr));
  if (!Out.Shdrs.empty())
    std::memcpy(Image.data() + Out.Ehdr.e_shoff, Out.Shdrs.data(),
                Out.Shdrs.size() * sizeof(ELF::Elf64_Shdr));

  for (const WrapperInfo &W : Host.Wrappers) {
    WrapperLocation Loc = WrapperLocation::of(W);
    auto NewW = L.map(W.FileOffset, WrapperSize);
    bool HasRela = W.Style == PointerStyle::RelaRelative ||
                   W.Style == PointerStyle::RelaSymbol;
    auto NewRela =
        HasRela ? L.map(W.RelaFileOffset, 24) : std::optional<uint64_t>(0);
    if (!NewW || !NewRela)
      return makeError("wrapper at " + hex(W.Address) +
                       " lies in the removed range");
    Loc.FileOffset = *NewW;
    Loc.RelaFileOffset = *NewRela;
    if (Error E = patchWrapperToHIPK(Image, Loc, FB.Address, W.BundleIndex))
      return E;
  }
  return Image;
}

} // namespace

Expected<std::vector<uint8_t>>
kpack::rewriteHostBinary(MemoryBufferRef Image, ArrayRef<uint8_t> Metadata) {
  auto Host = analyzeHostBinary(Image);
  if (!Host)
    return Host.takeError();
  return rewriteHostBinary(Image, *Host, Metadata);
}

Expected<std::vector<uint8_t>>
kpack::rewriteHostBinary(MemoryBufferRef Image, const HostBinary &Host,
                         ArrayRef<uint8_t> Metadata) {
  if (Host.Format == HostFormat::Coff)
    return rewriteCoffHostBinary(Image, Host, Metadata);
  if (Host.Kind == HostFileKind::Relocatable)
    return makeError("relocatable objects cannot be converted (link first)");
  if (Host.hasHIPK())
    return makeError("the binary is already converted (HIPK wrappers)");
  if (!Host.Fatbin || Host.Bundles.empty() || Host.Wrappers.empty())
    return makeError("the binary carries no device code");
  if (Host.KpackRefSection)
    return makeError("the binary has both .hip_fatbin and .rocm_kpack_ref "
                     "(kpack-ready objects linked without ld.kpack?); "
                     "converting it is not supported");
  for (const WrapperInfo &W : Host.Wrappers) {
    if (!W.isHIPF())
      return makeError("wrapper at " + hex(W.Address) +
                       " has an unknown magic " + hex(W.Magic));
    if (W.BundleIndex < 0)
      return makeError("wrapper at " + hex(W.Address) + " points at " +
                       hex(W.Target) + ", not at a bundle in .hip_fatbin");
  }
  ArrayRef<uint8_t> File(
      reinterpret_cast<const uint8_t *>(Image.getBufferStart()),
      Image.getBufferSize());
  auto H = readHeaders(File);
  if (!H)
    return H.takeError();
  // Malformed input is bad input, not a failure of the rewrite (which the
  // verifier below reports as an internal error).
  if (Error E = checkRanges(File, *H))
    return makeError("malformed host binary: " + toString(std::move(E)));
  if (Error E = checkLoadedLayout(File, *H))
    return makeError("malformed host binary: " + toString(std::move(E)));
  // The verifier wants PT_DYNAMIC's bytes unchanged: it must not share any
  // with what the rewrite changes (headers, fatbin, wrappers, relocations).
  std::vector<std::pair<uint64_t, uint64_t>> Changed = {
      {0, sizeof(ELF::Elf64_Ehdr)},
      {H->Ehdr.e_phoff,
       H->Ehdr.e_phoff + H->Phdrs.size() * sizeof(ELF::Elf64_Phdr)},
      {Host.Fatbin->FileOffset, Host.Fatbin->FileOffset + Host.Fatbin->Size},
      {Host.WrapperSection->FileOffset,
       Host.WrapperSection->FileOffset + Host.WrapperSection->Size}};
  for (const auto &S : H->Shdrs)
    if (S.sh_type == ELF::SHT_RELA && (S.sh_flags & ELF::SHF_ALLOC))
      Changed.push_back({S.sh_offset, S.sh_offset + S.sh_size});
  for (size_t I = 0; I < H->Phdrs.size(); ++I) {
    const auto &P = H->Phdrs[I];
    if (P.p_type != ELF::PT_DYNAMIC || P.p_filesz == 0)
      continue;
    for (const auto &[Begin, End] : Changed)
      if (P.p_offset < End && Begin < P.p_offset + P.p_filesz)
        return makeError("malformed host binary: PT_DYNAMIC (program header " +
                         Twine(I) +
                         ") overlaps the headers, .hip_fatbin, the wrappers "
                         "or their relocations");
  }
  for (const SectionSpan *Span : {&*Host.Fatbin, &*Host.WrapperSection})
    if (!(H->Shdrs[Span->Index].sh_flags & ELF::SHF_ALLOC) ||
        H->Shdrs[Span->Index].sh_type == ELF::SHT_NOBITS)
      return makeError("malformed host binary: section " +
                       Twine(Span->Index) + " (" +
                       (Span == &*Host.Fatbin ? ".hip_fatbin"
                                              : ".hipFatBinSegment") +
                       ") is not loaded");
  Rewriter R(File, Host, std::move(*H), Metadata);
  auto Out = R.run();
  if (!Out)
    return Out.takeError();
  MemoryBufferRef OutRef(
      StringRef(reinterpret_cast<const char *>(Out->data()), Out->size()),
      Image.getBufferIdentifier());
  if (Error E = verifyConvertedBinary(Image, Host, OutRef))
    return makeError("internal error: the rewritten binary fails "
                     "verification: " +
                     toString(std::move(E)));
  return Out;
}

Error kpack::verifyConvertedBinary(MemoryBufferRef Original,
                                   MemoryBufferRef Converted) {
  auto Before = analyzeHostBinary(Original);
  if (!Before)
    return Before.takeError();
  return verifyConvertedBinary(Original, *Before, Converted);
}

Error kpack::verifyConvertedBinary(MemoryBufferRef Original,
                                   const HostBinary &OriginalHost,
                                   MemoryBufferRef Converted) {
  if (OriginalHost.Format == HostFormat::Coff)
    return verifyConvertedCoffBinary(Original, OriginalHost, Converted);
  const HostBinary *Before = &OriginalHost;
  auto After = analyzeHostBinary(Converted);
  if (!After)
    return makeError("does not re-parse: " + toString(After.takeError()));
  ArrayRef<uint8_t> OldFile(
      reinterpret_cast<const uint8_t *>(Original.getBufferStart()),
      Original.getBufferSize());
  ArrayRef<uint8_t> NewFile(
      reinterpret_cast<const uint8_t *>(Converted.getBufferStart()),
      Converted.getBufferSize());
  auto OldH = readHeaders(OldFile);
  if (!OldH)
    return OldH.takeError();
  auto NewH = readHeaders(NewFile);
  if (!NewH)
    return NewH.takeError();
  if (Error E = checkRanges(OldFile, *OldH))
    return E;
  if (Error E = checkRanges(NewFile, *NewH))
    return E;
  if (Error E = checkLoadedLayout(NewFile, *NewH))
    return E;
  if (!Before->Fatbin || !Before->WrapperSection)
    return makeError("the original binary has no device code");

  // Wrappers.
  if (After->Wrappers.size() != Before->Wrappers.size())
    return makeError("wrapper count changed");
  if (!After->Bundles.empty())
    return makeError("device code is still present");
  std::set<uint64_t> PointerSlots;
  for (size_t I = 0; I < After->Wrappers.size(); ++I) {
    const WrapperInfo &W = After->Wrappers[I], &Old = Before->Wrappers[I];
    PointerSlots.insert(Old.Address + 8);
    if (!W.isHIPK())
      return makeError("wrapper " + Twine(I) + " is not HIPK");
    if (!W.Ref)
      return makeError("wrapper " + Twine(I) + ": " + W.RefError);
    if (W.Address != Old.Address || W.Style != Old.Style ||
        W.Version != Old.Version)
      return makeError("wrapper " + Twine(I) + " moved or changed style");
    if (W.Reserved1 != static_cast<uint64_t>(Old.BundleIndex))
      return makeError("wrapper " + Twine(I) + " has index " +
                       Twine(W.Reserved1) + ", expected " +
                       Twine(Old.BundleIndex));
  }

  // Program headers.
  if (NewH->Phdrs.size() != OldH->Phdrs.size())
    return makeError("program header count changed");
  for (size_t I = 0; I < NewH->Phdrs.size(); ++I) {
    const auto &P = NewH->Phdrs[I], &Old = OldH->Phdrs[I];
    if (P.p_type != Old.p_type)
      return makeError("program header " + Twine(I) + " changed type");
    if (isLoad(P) || P.p_filesz == 0)
      continue;
    if (P.p_vaddr != Old.p_vaddr && P.p_type != ELF::PT_GNU_RELRO)
      return makeError("program header " + Twine(I) + " moved");
    if (P.p_type == ELF::PT_DYNAMIC &&
        (P.p_filesz != Old.p_filesz ||
         std::memcmp(NewFile.data() + P.p_offset, OldFile.data() + Old.p_offset,
                     P.p_filesz) != 0))
      return makeError("the dynamic section changed");
  }

  // Sections (within the file and backed by their PT_LOAD, as checked
  // above): allocated ones keep address, size and bytes (the metadata
  // section, wrappers and wrapper relocations aside).
  if (NewH->Shdrs.size() != OldH->Shdrs.size())
    return makeError("section count changed");
  for (size_t I = 1; I < NewH->Shdrs.size(); ++I) {
    const auto &S = NewH->Shdrs[I], &Old = OldH->Shdrs[I];
    if (!(Old.sh_flags & ELF::SHF_ALLOC) || I == Before->Fatbin->Index) {
      if (!(S.sh_flags & ELF::SHF_ALLOC) && S.sh_type != ELF::SHT_NOBITS &&
          I != NewH->Ehdr.e_shstrndx &&
          (S.sh_size != Old.sh_size ||
           std::memcmp(NewFile.data() + S.sh_offset,
                       OldFile.data() + Old.sh_offset, S.sh_size) != 0))
        return makeError("non-allocated section " + Twine(I) + " changed");
      continue;
    }
    if (S.sh_addr != Old.sh_addr || S.sh_size != Old.sh_size ||
        S.sh_type != Old.sh_type || S.sh_flags != Old.sh_flags)
      return makeError("section " + Twine(I) + " changed address or size");
    if (S.sh_type == ELF::SHT_NOBITS || S.sh_size == 0)
      continue;
    const uint8_t *A = OldFile.data() + Old.sh_offset;
    const uint8_t *B = NewFile.data() + S.sh_offset;
    if (std::memcmp(A, B, S.sh_size) == 0)
      continue;
    if (I == Before->WrapperSection->Index)
      continue; // checked through the analysis above
    if (S.sh_type == ELF::SHT_RELA && S.sh_entsize == 24 &&
        S.sh_size % 24 == 0) {
      for (uint64_t Off = 0; Off < S.sh_size; Off += 24) {
        if (std::memcmp(A + Off, B + Off, 24) == 0)
          continue;
        uint64_t ROffset = support::endian::read64le(A + Off);
        if (!PointerSlots.count(ROffset) || std::memcmp(A + Off, B + Off, 16))
          return makeError("relocation section " + Twine(I) +
                           " changed beyond the wrapper pointers");
      }
      continue;
    }
    return makeError("the bytes of section " + Twine(I) + " (" +
                     quoteInput(sectionName(NewFile, *NewH, S)) + ") changed");
  }
  return Error::success();
}

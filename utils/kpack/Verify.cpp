//===- Verify.cpp - kpack verify: check every entry of an archive ---------===//
//
// kpack verify ARCHIVE... [--strict] [--json]
//
// Every entry must decompress to its recorded size (the reader checks that)
// and its arch must be listed in gfx_arches (upstream's loader matches that
// list only). Then kpack::checkArchiveEntry, the check every archive writer
// of the project runs too: the arch is a target ID, and an entry that is an
// ELF file is an AMDGPU code object built for exactly that target. Entries
// that are not AMDGPU ELF files are reported as such; --strict makes that an
// error.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/ArchiveReader.h"
#include "kpack/CodeObjectCheck.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

using namespace llvm;
using kpack::ArchiveReader;
using kpack::TargetId;

static cl::SubCommand VerifyCmd("verify",
                                "Check that every entry of a .kpack archive "
                                "decompresses and matches its architecture");
static cl::list<std::string> VerifyArchives(cl::Positional, cl::OneOrMore,
                                            cl::desc("<archive.kpack>..."),
                                            cl::sub(VerifyCmd));
static cl::opt<bool> VerifyStrict(
    "strict", cl::desc("Treat entries that are not AMDGPU code objects as errors"),
    cl::sub(VerifyCmd));
static cl::opt<bool> VerifyJson("json", cl::desc("Print JSON"),
                                cl::sub(VerifyCmd));

namespace {

struct Finding {
  const ArchiveReader::Entry *E = nullptr;
  enum Level { Ok, Note, Error } Severity = Ok;
  std::string Target; ///< the code object's target ID, if an AMDGPU ELF
  std::string Message;
};

Finding checkEntry(const ArchiveReader &R, const ArchiveReader::Entry &E) {
  Finding F{&E, Finding::Ok, "", "ok"};
  auto Fail = [&](std::string Msg) {
    F.Severity = Finding::Error;
    F.Message = std::move(Msg);
    return F;
  };
  std::vector<uint8_t> Bytes;
  if (kpack::Status Err = R.read(E, Bytes))
    return Fail(Err.message());
  const std::vector<std::string> &Listed = R.gfxArches();
  if (std::find(Listed.begin(), Listed.end(), E.Arch) == Listed.end())
    return Fail("arch is not listed in gfx_arches (upstream cannot load it)");

  Expected<std::optional<TargetId>> BuiltOr = kpack::checkArchiveEntry(
      E.Arch, Bytes,
      VerifyStrict ? kpack::OpaqueEntries::Reject : kpack::OpaqueEntries::Allow);
  if (!BuiltOr)
    return Fail(toString(BuiltOr.takeError()));
  if (!*BuiltOr) {
    F.Severity = Finding::Note;
    F.Message = "not an AMDGPU code object";
    return F;
  }
  F.Target = (*BuiltOr)->str();
  return F;
}

const char *levelName(Finding::Level L) {
  return L == Finding::Ok ? "ok" : L == Finding::Note ? "note" : "error";
}

} // namespace

namespace {
/// One archive checked: all that can fail before printing.
struct Verified {
  std::string Path;
  std::unique_ptr<ArchiveReader> Reader; ///< the findings' entries
  std::vector<Finding> Findings;
  unsigned Errors = 0;
};
} // namespace

static Expected<Verified> verifyArchive(StringRef Path) {
  Expected<std::unique_ptr<ArchiveReader>> ReaderOr = openArchive(Path);
  if (!ReaderOr)
    return ReaderOr.takeError();
  Verified V{Path.str(), std::move(*ReaderOr), {}, 0};
  const ArchiveReader &R = *V.Reader;
  // Entries are independent and the reader is thread-safe: check them on
  // all cores, report in TOC order.
  const std::vector<ArchiveReader::Entry> &Entries = R.entries();
  std::vector<Finding> &Findings = V.Findings;
  Findings.resize(Entries.size());
  std::atomic<size_t> Next{0};
  auto Work = [&] {
    for (size_t I; (I = Next.fetch_add(1)) < Entries.size();)
      Findings[I] = checkEntry(R, Entries[I]);
  };
  unsigned Threads = std::min<size_t>(
      std::max(1u, std::thread::hardware_concurrency()), Entries.size());
  std::vector<std::thread> Pool;
  for (unsigned T = 1; T < Threads; ++T)
    Pool.emplace_back(Work);
  Work();
  for (std::thread &T : Pool)
    T.join();
  for (const Finding &F : Findings)
    V.Errors += F.Severity == Finding::Error;
  return V;
}

static void printJson(json::OStream &J, const Verified &V) {
  J.object([&] {
    J.attribute("archive", V.Path);
    J.attribute("ok", V.Errors == 0);
    J.attribute("errors", V.Errors);
    J.attributeArray("entries", [&] {
      for (const Finding &F : V.Findings)
        J.object([&] {
          J.attribute("key", F.E->Key);
          J.attribute("arch", F.E->Arch);
          J.attribute("status", levelName(F.Severity));
          if (!F.Target.empty())
            J.attribute("target", F.Target);
          J.attribute("message", F.Message);
        });
    });
  });
}

static void printText(const Verified &V) {
  for (const Finding &F : V.Findings) {
    outs() << levelName(F.Severity) << ": " << F.E->Key << " " << F.E->Arch
           << ": " << F.Message;
    if (!F.Target.empty() && F.Severity == Finding::Ok)
      outs() << " (" << F.Target << ", " << F.E->OriginalSize << " bytes)";
    outs() << "\n";
  }
  outs() << V.Path << ": " << V.Findings.size() << " entries, " << V.Errors
         << " error" << (V.Errors == 1 ? "" : "s") << "\n";
}

int runVerify() {
  // Several archives: each checked and reported in turn (JSON: an array of
  // the one-archive objects; one that cannot be read is {"archive", "ok":
  // false, "error"}). Exit status 1 if any archive has an error.
  int Status = 0;
  auto Check = [&](StringRef Path) -> std::optional<Verified> {
    Expected<Verified> V = verifyArchive(Path);
    if (!V) {
      Status = reportError("kpack verify", V.takeError());
      return std::nullopt;
    }
    if (V->Errors)
      Status = 1;
    return std::move(*V);
  };
  if (!VerifyJson) {
    for (const std::string &Path : VerifyArchives)
      if (std::optional<Verified> V = Check(Path))
        printText(*V);
    return Status;
  }
  if (VerifyArchives.size() == 1) {
    if (std::optional<Verified> V = Check(VerifyArchives.front())) {
      json::OStream J(outs(), 2);
      printJson(J, *V);
      outs() << "\n";
    }
    return Status;
  }
  json::OStream J(outs(), 2);
  J.array([&] {
    for (const std::string &Path : VerifyArchives) {
      Expected<Verified> V = verifyArchive(Path);
      if (V) {
        Status |= V->Errors != 0;
        printJson(J, *V);
        continue;
      }
      std::string Message = toString(V.takeError());
      Status = reportError("kpack verify", kpack::makeError(Message));
      J.object([&] {
        J.attribute("archive", Path);
        J.attribute("ok", false);
        J.attribute("error", Message);
      });
    }
  });
  outs() << "\n";
  return Status;
}

//===- Verify.cpp - kpack verify: check every entry of an archive ---------===//
//
// kpack verify ARCHIVE [--strict] [--json]
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
#include <thread>

using namespace llvm;
using kpack::ArchiveReader;
using kpack::TargetId;

static cl::SubCommand VerifyCmd("verify",
                                "Check that every entry of a .kpack archive "
                                "decompresses and matches its architecture");
static cl::opt<std::string> VerifyArchive(cl::Positional, cl::Required,
                                          cl::desc("<archive.kpack>"),
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

static Expected<bool> verifyArchive() {
  Expected<std::unique_ptr<ArchiveReader>> ReaderOr = openArchive(VerifyArchive);
  if (!ReaderOr)
    return ReaderOr.takeError();
  const ArchiveReader &R = **ReaderOr;
  // Entries are independent and the reader is thread-safe: check them on
  // all cores, report in TOC order.
  const std::vector<ArchiveReader::Entry> &Entries = R.entries();
  std::vector<Finding> Findings(Entries.size());
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
  unsigned Errors = 0;
  for (const Finding &F : Findings)
    Errors += F.Severity == Finding::Error;

  if (VerifyJson) {
    json::OStream J(outs(), 2);
    J.object([&] {
      J.attribute("archive", VerifyArchive);
      J.attribute("ok", Errors == 0);
      J.attribute("errors", Errors);
      J.attributeArray("entries", [&] {
        for (const Finding &F : Findings)
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
    outs() << "\n";
  } else {
    for (const Finding &F : Findings) {
      outs() << levelName(F.Severity) << ": " << F.E->Key << " " << F.E->Arch
             << ": " << F.Message;
      if (!F.Target.empty() && F.Severity == Finding::Ok)
        outs() << " (" << F.Target << ", " << F.E->OriginalSize << " bytes)";
      outs() << "\n";
    }
    outs() << VerifyArchive << ": " << Findings.size() << " entries, "
           << Errors << " error" << (Errors == 1 ? "" : "s") << "\n";
  }
  return Errors == 0;
}

int runVerify() {
  Expected<bool> OkOr = verifyArchive();
  if (!OkOr)
    return reportError("kpack verify", OkOr.takeError());
  return *OkOr ? 0 : 1;
}

//===- Extract.cpp - kpack extract: one code object out of an archive -----===//
//
// kpack extract ARCHIVE KEY ARCH -o FILE   ("-o -" writes to stdout)
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "kpack/ArchiveReader.h"
#include "kpack/AtomicFile.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using kpack::ArchiveReader;

static cl::SubCommand ExtractCmd("extract",
                                 "Extract one code object from a .kpack archive");
static cl::opt<std::string> ExtractArchive(cl::Positional, cl::Required,
                                           cl::desc("<archive.kpack>"),
                                           cl::sub(ExtractCmd));
static cl::opt<std::string> ExtractKey(cl::Positional, cl::Required,
                                       cl::desc("<key>"), cl::sub(ExtractCmd));
static cl::opt<std::string> ExtractArch(cl::Positional, cl::Required,
                                        cl::desc("<arch>"), cl::sub(ExtractCmd));
static cl::opt<std::string> ExtractOutput("o", cl::Required,
                                          cl::desc("Output file ('-' for stdout)"),
                                          cl::value_desc("file"),
                                          cl::sub(ExtractCmd));

static Error extractEntry() {
  Expected<std::unique_ptr<ArchiveReader>> ReaderOr = openArchive(ExtractArchive);
  if (!ReaderOr)
    return ReaderOr.takeError();
  const ArchiveReader &R = **ReaderOr;
  const ArchiveReader::Entry *E = R.find(ExtractKey, ExtractArch);
  if (!E)
    return createStringError(inconvertibleErrorCode(),
                             "'" + ExtractArchive + "' has no entry '" +
                                 ExtractKey + "' for " + ExtractArch);
  std::vector<uint8_t> Bytes;
  if (kpack::Status Err = R.read(*E, Bytes))
    return createStringError(inconvertibleErrorCode(),
                             "'" + ExtractArchive + "': " + ExtractKey + " (" +
                                 ExtractArch + "): " + Err.message());
  if (ExtractOutput == "-") {
    outs().write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
    outs().flush();
    return Error::success();
  }
  return toError(
      kpack::writeFileAtomically(ExtractOutput, Bytes.data(), Bytes.size()));
}

int runExtract() {
  if (Error E = extractEntry())
    return reportError("kpack extract", std::move(E));
  return 0;
}

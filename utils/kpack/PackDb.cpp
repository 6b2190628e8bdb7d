//===- PackDb.cpp - kpack pack-db: kernel databases into archives ---------===//
//
// kpack pack-db TREE -o DIR --split-databases H[,H...] [--name NAME]
//               [--compression none|zstd|zstd-long|zstd-shared] [--level N] [-j N]
//               [--tensile-index pack|beside] [--verbose]
//
// The files of the database tree TREE (an installed prefix) that the named
// handlers recognise (the names of `split --split-databases`) go into one
// archive per target ID, DIR/<NAME>_<target id>.kpack, under the structured
// keys and with the entry metadata of docs/kernel-databases.md. Files are
// stored as they are: code objects are checked against their target, other
// files are opaque entries. The plan is kpack/PackDatabases.h; the archives
// are written by the emission library (kpack/Emission.h).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CompressionOptions.h"
#include "TimeTraceOption.h"

#include "kpack/Emission.h"
#include "kpack/LLVMError.h"
#include "kpack/PackDatabases.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace kpack;

static cl::SubCommand PackDbCmd("pack-db",
                                "Pack kernel databases into per-target .kpack "
                                "archives");
static cl::opt<std::string> PackDbTree(cl::Positional, cl::Required,
                                       cl::desc("<database tree>"),
                                       cl::sub(PackDbCmd));
static cl::opt<std::string> PackDbOutput("o", cl::Required,
                                         cl::desc("Output directory"),
                                         cl::value_desc("dir"),
                                         cl::sub(PackDbCmd));
static cl::list<std::string> PackDbHandlers(
    "split-databases", cl::OneOrMore, cl::CommaSeparated,
    cl::desc("Database handlers (rocblas, hipblaslt, hipsparselt, aotriton, "
             "miopen, ...), comma-separated or repeated"),
    cl::value_desc("handler"), cl::sub(PackDbCmd));
static cl::opt<std::string>
    PackDbName("name",
               cl::desc("Archive name and TOC group_name: <dir>/<name>_<target "
                        "id>.kpack (default: the handler, if only one)"),
               cl::sub(PackDbCmd));
static CompressionOptions PackDbCompression(PackDbCmd);
static cl::opt<IndexPlacement> PackDbIndex(
    "tensile-index", cl::desc("Tensile's .dat index files"),
    cl::init(IndexPlacement::Pack),
    cl::values(clEnumValN(IndexPlacement::Pack, "pack",
                          "packed beside the code objects they index"),
               clEnumValN(IndexPlacement::Beside, "beside",
                          "written as files, <dir>/<key>, next to the "
                          "archives")),
    cl::sub(PackDbCmd));
static cl::opt<bool> PackDbVerbose("verbose",
                                   cl::desc("List the files left out"),
                                   cl::sub(PackDbCmd));

static Error packDb() {
  Expected<std::vector<const DatabaseHandler *>> Handlers =
      databaseHandlersNamed(PackDbHandlers);
  if (!Handlers)
    return asUsageError(Handlers.takeError());
  std::string Name = PackDbName;
  if (Name.empty()) {
    if (Handlers->size() != 1)
      return makeUsageError("--name is needed with more than one handler");
    Name = Handlers->front()->name().str();
  }
  Expected<CompressionSettings> Compression = PackDbCompression.settings();
  if (!Compression)
    return Compression.takeError();

  Expected<DatabasePlan> Plan =
      planDatabaseArchives(PackDbTree, *Handlers, PackDbIndex);
  if (!Plan)
    return Plan.takeError();

  ArchiveLayout Layout;
  Layout.Dir = PackDbOutput;
  Layout.Name = Name;
  Layout.GroupName = Name;
  Layout.Compression = *Compression;
  Layout.Threads = PackDbCompression.threads();
  Layout.AllowOpaqueEntries = true;
  ArchiveSet Archives(std::move(Layout));
  for (const DatabaseEntry &E : Plan->Packed) {
    CodeObjectRef C;
    C.TargetId = E.File.TargetId;
    C.Size = E.Size;
    C.Source = EntrySource::fromFileRange(E.Path, 0, E.Size);
    C.Origin = "'" + E.Path + "'";
    if (Error Err = Archives.add(E.File.Key, C, entryMetadata(E)))
      return Err;
  }
  // The archives are committed together or not at all (ArchiveSet); the
  // index files, already known to be readable, follow, and without them the
  // archives are removed again: a failed run leaves no output.
  Expected<std::vector<WrittenArchive>> Written = Archives.write();
  if (!Written)
    return Written.takeError();
  Expected<std::vector<std::string>> Indexes =
      writeIndexesBeside(*Plan, PackDbOutput);
  if (!Indexes) {
    for (const WrittenArchive &W : *Written)
      sys::fs::remove(W.Path);
    return Indexes.takeError();
  }

  for (const WrittenArchive &W : *Written)
    outs() << W.Path << ": " << W.Stats.Entries << " entries, "
           << W.Stats.OriginalBytes << " bytes -> " << W.Stats.FileBytes
           << " bytes\n";
  for (const std::string &I : *Indexes)
    outs() << I << ": index\n";
  if (PackDbVerbose) {
    for (const DatabaseEntry &E : Plan->NotPacked)
      outs() << "not packed (" << E.File.Handler->name() << ", "
             << (E.File.TargetId.empty() ? E.File.Bundle : E.File.TargetId)
             << "): " << E.RelPath << "\n";
    outs() << "not recognised: " << Plan->Unrecognised << " files\n";
  }
  return Error::success();
}

static TimeTraceOption PackDbTrace(PackDbCmd);

int runPackDb() {
  return PackDbTrace.run("kpack pack-db", PackDbOutput, [] {
    if (Error E = packDb())
      return reportError("kpack pack-db", std::move(E));
    return 0;
  });
}

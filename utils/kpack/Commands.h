//===- Commands.h - Subcommands of the kpack tool ---------------*- C++ -*-===//
//
// Each subcommand is one file defining its llvm::cl::SubCommand, its options
// (cl::sub) and its entry point below; Driver.cpp parses the command line and
// calls the entry point of the selected subcommand.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_UTILS_KPACK_COMMANDS_H
#define KPACK_UTILS_KPACK_COMMANDS_H

#include "kpack/LLVMError.h"
#include "kpack/ToolCommandLine.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace kpack {
class ArchiveReader;
} // namespace kpack

int runLs();      // Ls.cpp
int runExtract(); // Extract.cpp
int runVerify();  // Verify.cpp
int runPack();    // Pack.cpp
int runInspect(); // Inspect.cpp
int runConvert(); // Convert.cpp
int runMerge();   // Merge.cpp
int runPackDb();  // PackDb.cpp
int runSplit();   // Split.cpp
/// `kpack` invoked as `kpack-convert`: the convert options at top level.
int runConvertAlias(int Argc, char **Argv); // Convert.cpp
int runRecombine(); // Recombine.cpp
int runSplitWheel();      // SplitWheel.cpp
int runRecombineWheels(); // RecombineWheels.cpp
int runVerifyArtifacts();  // VerifyArtifacts.cpp
int runUnbundle();         // Unbundle.cpp
int runDoctor();           // Doctor.cpp

/// Prints "<Tool>: error: <message>" for every error in E; returns the exit
/// status: 2 (after the help hint) if one was a kpack::UsageError, else 1
/// (kpack/ToolCommandLine.h).
int reportError(llvm::StringRef Tool, llvm::Error E);

/// Opens an archive with the runtime's reader, which validates the header
/// and the whole TOC.
llvm::Expected<std::unique_ptr<kpack::ArchiveReader>>
openArchive(llvm::StringRef Path);

#endif

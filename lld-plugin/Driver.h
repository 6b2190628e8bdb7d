//===- Driver.h - The ld.kpack link flow ------------------------*- C++ -*-===//
//
// rewrite fat inputs -> collect payloads -> lld -> finalize (FORMAT.md §4).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_LLD_DRIVER_H
#define KPACK_LLD_DRIVER_H

#include "LinkOptions.h"

#include "llvm/Support/Error.h"

namespace kpack {
namespace link {

/// Runs lld in process with Args (argv[0] excluded). Returns lld's exit code.
/// With LldLink, lld's COFF driver (lld-link's command line).
int runLld(const std::vector<std::string> &Args, bool LldLink = false);

/// The whole flow. Returns the process exit code (lld's, when it fails), or
/// an error for problems of ld.kpack's own.
llvm::Expected<int> runKpackLink(const ParsedCommandLine &CommandLine);

} // namespace link
} // namespace kpack

#endif

//===- Convert.cpp - kpack convert: legacy fat binary -> kpack ------------===//
//
// The `kpack convert` subcommand, and `kpack` invoked as `kpack-convert` (a
// link made at build and install time): the same option table
// (ConvertCommandLine.h), as top-level options, with the same exit statuses.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "ConvertCommandLine.h"

#include "kpack/WriteProgress.h"

static llvm::cl::SubCommand
    ConvertCmd("convert", "Split the device code of a fat host binary into "
                          ".kpack archives");
static kpack::ConvertCommandLine ConvertCL(ConvertCmd, "kpack convert");

int runConvert() { return ConvertCL.run(); }

namespace {
/// llvm::cl lets a tool drop a registered subcommand only from a derived
/// class: as kpack-convert, the tool has no subcommands at all.
struct SubcommandRemover : llvm::cl::SubCommand {
  static void remove(llvm::cl::SubCommand &Sub) {
    (Sub.*(&SubcommandRemover::unregisterSubCommand))();
  }
};
} // namespace

int runConvertAlias(int Argc, char **Argv) {
  using namespace llvm;
  // Without subcommands, an input file named like one ("ls") stays an input,
  // and --help shows the converter alone.
  std::vector<cl::SubCommand *> Subcommands;
  for (cl::SubCommand *Sub : cl::getRegisteredSubcommands())
    if (Sub != &cl::SubCommand::getTopLevel() &&
        Sub != &cl::SubCommand::getAll())
      Subcommands.push_back(Sub);
  for (cl::SubCommand *Sub : Subcommands)
    SubcommandRemover::remove(*Sub);
  kpack::ConvertCommandLine CL(cl::SubCommand::getTopLevel(), "kpack-convert");
  cl::HideUnrelatedOptions(CL.Category);
  if (!kpack::parseToolCommandLine(
          Argc, Argv,
          "kpack-convert: split the device code of a fat HIP host binary into "
          ".kpack archives (the same as 'kpack convert')\n",
          [] { return std::string("kpack-convert"); }))
    return kpack::ToolExitUsage;
  kpack::enableTerminalWriteProgress("kpack-convert");
  return CL.run();
}

//===- Convert.cpp - kpack convert: legacy fat binary -> kpack ------------===//
//
// The `kpack convert` subcommand, and `kpack` invoked as `kpack-convert` (a
// link made at build and install time): the same option table
// (ConvertCommandLine.h), as top-level options, with the same exit statuses.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "ConvertCommandLine.h"

static llvm::cl::SubCommand
    ConvertCmd("convert", "Split the device code of a fat host binary into "
                          ".kpack archives");
static kpack::ConvertCommandLine ConvertCL(ConvertCmd, "kpack convert");

int runConvert() { return ConvertCL.run(); }

int runConvertAlias(int Argc, char **Argv) {
  using namespace llvm;
  // llvm::cl takes a first argument named like a subcommand as that
  // subcommand: an input file named so is passed on as ./NAME.
  std::vector<char *> Args(Argv, Argv + Argc);
  std::string Input;
  if (Argc > 1)
    for (cl::SubCommand *Sub : cl::getRegisteredSubcommands())
      if (!Sub->getName().empty() && Sub->getName() == Args[1]) {
        Input = "./" + std::string(Args[1]);
        Args[1] = Input.data();
      }
  kpack::ConvertCommandLine CL(cl::SubCommand::getTopLevel(), "kpack-convert");
  cl::HideUnrelatedOptions(CL.Category);
  if (!cl::ParseCommandLineOptions(
          static_cast<int>(Args.size()), Args.data(),
          "kpack-convert: split the device code of a fat HIP host binary into "
          ".kpack archives (the same as 'kpack convert')\n",
          &errs()))
    return kpack::ConvertExitError;
  return CL.run();
}

//===- Convert.cpp - kpack convert: legacy fat binary -> kpack ------------===//
//
// The `kpack convert` subcommand; same options and exit statuses as the
// standalone kpack-convert (utils/kpack-convert/ConvertCommandLine.h).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "../kpack-convert/ConvertCommandLine.h"

static llvm::cl::SubCommand
    ConvertCmd("convert", "Split the device code of a fat host binary into "
                          ".kpack archives");
static kpack::ConvertCommandLine ConvertCL(ConvertCmd, "kpack convert");

int runConvert() { return ConvertCL.run(); }

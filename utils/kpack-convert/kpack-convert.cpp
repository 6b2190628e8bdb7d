//===- kpack-convert.cpp - Legacy fat binary -> kpack ---------------------===//
//
// Standalone driver of the converter (also `kpack convert`). Exit status:
// 0 converted, 1 error, 2 already converted, 3 no device code.
//
//===----------------------------------------------------------------------===//

#include "ConvertCommandLine.h"

#include "llvm/Support/InitLLVM.h"

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  kpack::ConvertCommandLine CL(llvm::cl::SubCommand::getTopLevel(),
                               "kpack-convert");
  llvm::cl::HideUnrelatedOptions(CL.Category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "kpack-convert: split the device code of a fat HIP host binary into "
      ".kpack archives\n");
  return CL.run();
}

//===- kpack-offload-wrapper.cpp - Kpack-ready HIP registration code -------===//
//
// Drop-in for `llvm-offload-wrapper --kind=hip`: same options, same
// registration code, but the bundle goes into the kpack-ready sections
// (docs/kpack-ready.md) instead of `.hip_fatbin`.
//
//===----------------------------------------------------------------------===//

#include "kpack/OffloadWrapper.h"
#include "kpack/ToolCommandLine.h"

#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

using namespace llvm;

static cl::OptionCategory WrapperCategory("kpack-offload-wrapper options");

namespace {
enum class WrapKind { HIP, Other };
enum class OutputKind { Bitcode, Object };
} // namespace

static cl::opt<WrapKind>
    Kind("kind", cl::desc("Offload kind (only hip is supported)"),
         cl::init(WrapKind::HIP), cl::cat(WrapperCategory),
         cl::values(clEnumValN(WrapKind::HIP, "hip", "Wrap HIP binaries"),
                    clEnumValN(WrapKind::Other, "openmp", "(unsupported)"),
                    clEnumValN(WrapKind::Other, "cuda", "(unsupported)")));

static cl::opt<std::string> OutputFile("o", cl::desc("Write output to <file>"),
                                       cl::value_desc("file"), cl::Required,
                                       cl::cat(WrapperCategory));

static cl::list<std::string> InputFiles(cl::Positional,
                                        cl::desc("<offload bundle (.hipfb)>"),
                                        cl::OneOrMore, cl::cat(WrapperCategory));

static cl::opt<std::string>
    TripleName("triple", cl::desc("Target triple for the wrapper module"),
               cl::init(sys::getDefaultTargetTriple()),
               cl::cat(WrapperCategory));

static cl::opt<OutputKind> FileType(
    "filetype", cl::desc("Output file type"), cl::init(OutputKind::Bitcode),
    cl::cat(WrapperCategory),
    cl::values(clEnumValN(OutputKind::Bitcode, "bc", "LLVM bitcode (default)"),
               clEnumValN(OutputKind::Object, "obj", "Relocatable object")));

static Error run() {
  if (Kind != WrapKind::HIP)
    return kpack::makeUsageError("only --kind=hip is supported");
  if (InputFiles.size() != 1)
    return kpack::makeUsageError(
        "HIP offloading uses a single offload bundle");
  ErrorOr<std::unique_ptr<MemoryBuffer>> Input =
      MemoryBuffer::getFileOrSTDIN(InputFiles.front(), /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Input)
    return createFileError(InputFiles.front(), Input.getError());

  LLVMContext Ctx;
  Expected<std::unique_ptr<Module>> M = kpack::wrapHIPBundle(
      Ctx,
      ArrayRef<char>((*Input)->getBufferStart(), (*Input)->getBufferSize()),
      Triple(TripleName));
  if (!M)
    return M.takeError();

  // writeToOutput writes a temporary file and renames it into place.
  return writeToOutput(OutputFile, [&](raw_ostream &OS) -> Error {
    if (FileType == OutputKind::Bitcode) {
      WriteBitcodeToFile(**M, OS);
      return Error::success();
    }
    SmallVector<char, 0> Object;
    raw_svector_ostream ObjectOS(Object);
    if (Error E = kpack::emitObjectFile(**M, ObjectOS))
      return E;
    OS.write(Object.data(), Object.size());
    return Error::success();
  });
}

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(WrapperCategory);
  cl::SetVersionPrinter([](raw_ostream &OS) {
    kpack::printToolVersion(OS, "kpack-offload-wrapper");
  });
  kpack::addExitStatusHelp();
  auto Tool = [] { return std::string("kpack-offload-wrapper"); };
  if (!kpack::parseToolCommandLine(
          argc, argv,
          "Generate kpack-ready HIP registration code for an offload bundle\n",
          Tool))
    return kpack::ToolExitUsage;
  if (Error E = run())
    return kpack::reportToolError(Tool(), std::move(E));
  return kpack::ToolExitOk;
}

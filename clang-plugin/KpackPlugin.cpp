//===- KpackPlugin.cpp - Kpack-ready host compilation --------------------===//
//
// A pass plugin for clang's HIP host job: before any optimization it turns the
// module's embedded offload bundle into the kpack-ready form
// (kpack/ReadyEmitter.h), so the object (or LTO bitcode) clang writes carries
// device code only in an excluded section.
//
//===----------------------------------------------------------------------===//

#include "kpack/ReadyEmitter.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Plugins/PassPlugin.h"

using namespace llvm;

namespace {

class KpackReadyPass : public PassInfoMixin<KpackReadyPass> {
public:
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    Expected<unsigned> Converted = kpack::ready::makeModuleKpackReady(M);
    if (!Converted) {
      M.getContext().emitError("kpack: " + toString(Converted.takeError()));
      return PreservedAnalyses::all();
    }
    return *Converted ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
  // Must run at -O0 too.
  static bool isRequired() { return true; }
};

void registerCallbacks(PassBuilder &PB) {
  // PipelineStart runs in every default pipeline clang builds: -O0, -O1..-O3,
  // and the (Thin)LTO pre-link pipelines used for -flto bitcode output.
  PB.registerPipelineStartEPCallback(
      [](ModulePassManager &MPM, OptimizationLevel) {
        MPM.addPass(KpackReadyPass());
      });
  // For `opt -passes=kpack-ready`.
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM,
         ArrayRef<PassBuilder::PipelineElement>) {
        if (Name != "kpack-ready")
          return false;
        MPM.addPass(KpackReadyPass());
        return true;
      });
}

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "KpackPlugin", "0.1", registerCallbacks};
}

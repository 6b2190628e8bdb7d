//===- DatabaseHandlersTest.cpp - Kernel-database handlers ----------------===//
//
// Target IDs in file names (features kept, generic processors whole, no
// target taken from unrelated words) and, per handler, which installed files
// it owns, for which target, under which pack-db key.
//
//===----------------------------------------------------------------------===//

#include "kpack/DatabaseHandlers.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

using namespace kpack;

namespace {

std::string target(const char *Name) {
  return targetIdInName(Name).value_or("<none>");
}

TEST(TargetIdInName, KeepsFeatures) {
  EXPECT_EQ(target("TensileLibrary_gfx90a:xnack+.co"), "gfx90a:xnack+");
  EXPECT_EQ(target("gfx942:sramecc+:xnack-"), "gfx942:sramecc+:xnack-");
  // Canonical order: sramecc before xnack.
  EXPECT_EQ(target("k_gfx942:xnack-:sramecc+.hsaco"), "gfx942:sramecc+:xnack-");
  EXPECT_EQ(target("amdgcn-amd-amdhsa--gfx90a:xnack+"), "gfx90a:xnack+");
}

TEST(TargetIdInName, TensileHyphenFeatures) {
  // Tensile spells features with '-' in file names.
  EXPECT_EQ(target("TensileLibrary_lazy_gfx90a-xnack-.hsaco"), "gfx90a:xnack-");
  EXPECT_EQ(target("Kernels.so-000-gfx942-xnack+.hsaco"), "gfx942:xnack+");
  EXPECT_EQ(target("x_gfx942-sramecc+-xnack-.co"), "gfx942:sramecc+:xnack-");
}

TEST(TargetIdInName, GenericProcessorsWhole) {
  // Upstream's regex gives "gfx9", "gfx11", "gfx10", "gfx12" for these.
  EXPECT_EQ(target("TensileLibrary_gfx9-4-generic.co"), "gfx9-4-generic");
  EXPECT_EQ(target("TensileLibrary_gfx11-generic.dat"), "gfx11-generic");
  EXPECT_EQ(target("k_gfx10-3-generic.hsaco"), "gfx10-3-generic");
  EXPECT_EQ(target("gfx12-generic"), "gfx12-generic");
  EXPECT_EQ(target("gfx9-generic:xnack+"), "gfx9-generic:xnack+");
  EXPECT_EQ(target("k_gfx9-4-generic-sramecc+-xnack-.co"),
            "gfx9-4-generic:sramecc+:xnack-");
}

TEST(TargetIdInName, PlainProcessors) {
  EXPECT_EQ(target("TensileLibrary_gfx1100.co"), "gfx1100");
  EXPECT_EQ(target("TensileLibrary_gfx90a.dat"), "gfx90a");
  EXPECT_EQ(target("extop_gfx950.co"), "gfx950");
  EXPECT_EQ(target("gfx1201"), "gfx1201");
  // A processor newer than the core's table, in LLVM's shape.
  EXPECT_EQ(target("TensileLibrary_gfx1300.co"), "gfx1300");
}

// The target ID is read where upstream's pattern first matches: anywhere in
// the name, inside words too; none if that is no target ID.
TEST(TargetIdInName, WhereUpstreamsPatternMatches) {
  EXPECT_EQ(target("TensileLibrary.dat"), "<none>");
  EXPECT_EQ(target("gfx9_notes.txt"), "<none>"); // no such processor
  EXPECT_EQ(target("libgfx942tools.so"), "<none>"); // "gfx942tools"
  EXPECT_EQ(target("mygfx942.co"), "gfx942");
  EXPECT_EQ(target("gfx942Kernels.co"), "gfx942");
  EXPECT_EQ(target("amd-gfx11xx"), "<none>"); // AOTriton's family names
  EXPECT_EQ(target("gfx120x"), "<none>");
  // Not target IDs: the processor takes no xnack, unknown feature.
  EXPECT_EQ(target("k_gfx1100-xnack+.co"), "<none>");
  EXPECT_EQ(target("gfx11-generic:xnack+"), "<none>");
  // A strict processor is a target of its own.
  EXPECT_EQ(target("k_gfx1250-strict.co"), "gfx1250-strict");
  EXPECT_EQ(target("k_gfx1250-strict-xnack+.co"), "gfx1250-strict:xnack+");
  EXPECT_EQ(target("gfx1250-b0-a0"), "gfx1250");
  // The first match counts, a target ID or not.
  EXPECT_EQ(target("a_gfx9_b_gfx942.co"), "<none>");
}

/// "<target> <key> <metadata...>" for RelPath under the named handler, or
/// "<none>".
std::string describe(const char *Handler, const char *RelPath) {
  llvm::Expected<std::vector<const DatabaseHandler *>> H =
      databaseHandlersNamed({Handler});
  if (!H) {
    ADD_FAILURE() << llvm::toString(H.takeError());
    return "";
  }
  std::optional<DatabaseFile> F = matchDatabaseFile(*H, RelPath);
  if (!F)
    return "<none>";
  EXPECT_EQ(F->Handler, H->front());
  std::string Out = F->TargetId + " " + (F->Key.empty() ? "-" : F->Key);
  for (const auto &[K, V] : F->Metadata)
    Out += " " + K + "=" + V;
  return Out;
}

TEST(DatabaseHandlers, Names) {
  std::vector<std::string> Names;
  for (const DatabaseHandler *H : allDatabaseHandlers())
    Names.push_back(H->name().str());
  EXPECT_EQ(Names, (std::vector<std::string>{
                       "rocblas", "hipblaslt", "hipsparselt", "aotriton",
                       "miopen", "composablekernel", "hipkernelprovider",
                       "hotswap_cache"}));
}

TEST(DatabaseHandlers, NamedKeepsOrderAndRejectsUnknown) {
  auto H = databaseHandlersNamed({"miopen", "rocblas"});
  ASSERT_TRUE(bool(H)) << llvm::toString(H.takeError());
  ASSERT_EQ(H->size(), 2u);
  EXPECT_EQ((*H)[0]->name(), "miopen");
  EXPECT_EQ((*H)[1]->name(), "rocblas");

  auto Bad = databaseHandlersNamed({"rocblas", "rocfft"});
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(llvm::toString(Bad.takeError()),
            "unknown database handler 'rocfft' (known: aotriton, "
            "composablekernel, hipblaslt, hipkernelprovider, hipsparselt, "
            "hotswap_cache, miopen, rocblas)");
}

TEST(DatabaseHandlers, RocBLASFlatLayout) {
  EXPECT_EQ(describe("rocblas", "lib/rocblas/library/TensileLibrary_lazy_gfx90a.dat"),
            "gfx90a rocblas/gfx90a/TensileLibrary_lazy.dat kind=index");
  EXPECT_EQ(
      describe("rocblas", "lib/rocblas/library/Kernels.so-000-gfx942-xnack-.hsaco"),
      "gfx942:xnack- rocblas/gfx942:xnack-/Kernels.so-000.hsaco "
      "kind=code-object");
  EXPECT_EQ(describe("rocblas",
                     "lib/rocblas/library/TensileLibrary_Type_HH_gfx90a:xnack+.co"),
            "gfx90a:xnack+ rocblas/gfx90a:xnack+/TensileLibrary_Type_HH.co "
            "kind=code-object");
  EXPECT_EQ(describe("rocblas", "lib/rocblas/library/TensileLibrary_gfx9-4-generic.co"),
            "gfx9-4-generic rocblas/gfx9-4-generic/TensileLibrary.co "
            "kind=code-object");
  // No target: the generic fallback index stays with the host library.
  EXPECT_EQ(describe("rocblas",
                     "lib/rocblas/library/TensileLibrary_Type_HH_fallback.dat"),
            "<none>");
  // Flat layout: only code objects and indexes.
  EXPECT_EQ(describe("rocblas", "lib/rocblas/library/TensileLibrary_gfx1100.txt"),
            "<none>");
  EXPECT_EQ(describe("rocblas", "lib/other/library/TensileLibrary_gfx1100.dat"),
            "<none>");
  // Upstream tests a substring of the path.
  EXPECT_EQ(describe("rocblas", "lib/myrocblas/library/k_gfx1100.co"),
            "gfx1100 rocblas/gfx1100/k.co kind=code-object");
}

TEST(DatabaseHandlers, RocBLASPerTargetDirectories) {
  EXPECT_EQ(describe("rocblas",
                     "lib/rocblas/library/gfx942/TensileLibrary_Type_HH_gfx942.co"),
            "gfx942 rocblas/gfx942/TensileLibrary_Type_HH.co kind=code-object");
  EXPECT_EQ(describe("rocblas",
                     "lib/rocblas/library/gfx1100/TensileLibrary_Type_HH_fallback.dat"),
            "gfx1100 rocblas/gfx1100/TensileLibrary_Type_HH_fallback.dat "
            "kind=index");
  EXPECT_EQ(describe("rocblas", "lib/rocblas/library/gfx90a/TensileManifest.txt"),
            "gfx90a rocblas/gfx90a/TensileManifest.txt kind=data");
  EXPECT_EQ(describe("rocblas", "lib/rocblas/library/gfx942-xnack+/TensileLibrary.co"),
            "gfx942:xnack+ rocblas/gfx942:xnack+/TensileLibrary.co "
            "kind=code-object");
}

TEST(DatabaseHandlers, HipBLASLtAndHipSPARSELt) {
  EXPECT_EQ(describe("hipblaslt", "lib/hipblaslt/library/TensileLibrary_gfx1100.co"),
            "gfx1100 hipblaslt/gfx1100/TensileLibrary.co kind=code-object");
  EXPECT_EQ(describe("hipblaslt", "lib/hipblaslt/library/hipblasltExtOpLibrary.dat"),
            "<none>");
  EXPECT_EQ(describe("hipblaslt", "lib/rocblas/library/TensileLibrary_gfx1100.co"),
            "<none>");
  EXPECT_EQ(describe("hipsparselt",
                     "lib/hipsparselt/library/TensileLibrary_BB_BB_A_gfx942.dat"),
            "gfx942 hipsparselt/gfx942/TensileLibrary_BB_BB_A.dat kind=index");
  EXPECT_EQ(describe("hipsparselt", "lib/hipsparselt/library/something_gfx942.so"),
            "<none>");
}

TEST(DatabaseHandlers, Aotriton) {
  EXPECT_EQ(describe("aotriton",
                     "lib/aotriton.images/amd-gfx942/flash/attn_fwd/kernel.aks2"),
            "gfx942 aotriton/gfx942/flash/attn_fwd/kernel.aks2 "
            "kind=kernel-image operation=flash/attn_fwd");
  // The old rocm-kpack layout: upstream's current handler reads no more.
  EXPECT_EQ(describe("aotriton", "lib/aotriton/kernels/gfx1100/flash_attention_fwd.hsaco"),
            "<none>");
  // Family directories are upstream's bundle keys, no target ID: moved by
  // split (to <component>_gfx11), not packed.
  EXPECT_EQ(describe("aotriton",
                     "lib/aotriton.images/amd-gfx11xx/flash/attn_fwd/kernel.aks2"),
            " - kind=kernel-image operation=flash/attn_fwd");
  EXPECT_EQ(describe("aotriton", "lib/aotriton.images/gfx942/flash/k.aks2"),
            "<none>");
}

TEST(DatabaseHandlers, MIOpen) {
  EXPECT_EQ(describe("miopen", "share/miopen/db/gfx942130.db.txt"),
            "gfx942 miopen/gfx942/130.db.txt kind=perf-db");
  EXPECT_EQ(describe("miopen", "share/miopen/db/gfx90878.HIP.fdb.txt"),
            "gfx908 miopen/gfx908/78.HIP.fdb.txt kind=find-db");
  EXPECT_EQ(describe("miopen", "share/miopen/db/gfx1030_36.db.txt"),
            "gfx1030 miopen/gfx1030/36.db.txt kind=perf-db");
  EXPECT_EQ(describe("miopen", "share/miopen/db/gfx90a6e.kdb"),
            "gfx90a miopen/gfx90a/6e.kdb kind=kernel-db");
  EXPECT_EQ(describe("miopen", "share/miopen/db/gfx908_ConvAsm1x1U_decoder.ktn.model"),
            "gfx908 miopen/gfx908/ConvAsm1x1U_decoder.ktn.model kind=model");
  EXPECT_EQ(describe("miopen", "share/miopen/db/gfx908.tn.model"),
            "gfx908 miopen/gfx908/tn.model kind=model");
  EXPECT_EQ(describe("miopen", "share/miopen/db/gfx9.db.txt"), "<none>");
  EXPECT_EQ(describe("miopen", "share/miopen/db/readme.txt"), "<none>");
  EXPECT_EQ(describe("miopen", "share/miopen/gfx942130.db.txt"), "<none>");
  // CK plugins are host libraries: they move with split, pack-db skips them.
  EXPECT_EQ(describe("miopen", "lib/libMIOpenCKGroupedConv_gfx942.so"),
            "gfx942 - kind=host-library");
  EXPECT_EQ(describe("miopen", "lib/libOther_gfx942.so"), "<none>");
}

TEST(DatabaseHandlers, ComposableKernel) {
  EXPECT_EQ(describe("composablekernel", "lib/libdevice_conv_operations_gfx942.a"),
            "gfx942 - kind=host-archive");
  EXPECT_EQ(describe("composablekernel",
                     "lib/libdevice_conv_operations_gfx950_xnackp.a"),
            "gfx950:xnack+ - kind=host-archive");
  EXPECT_EQ(describe("composablekernel",
                     "lib/device_conv_operations_gfx942_srameccp_xnack_.lib"),
            "gfx942:sramecc+:xnack- - kind=host-archive");
  EXPECT_EQ(describe("composablekernel", "lib/libdevice_conv_operations.a"),
            "<none>");
}

TEST(DatabaseHandlers, HipKernelProvider) {
  EXPECT_EQ(describe("hipkernelprovider",
                     "lib/hipdnn_plugins/engines/arch_content/hip-kernel-provider/"
                     "gfx942/k.co"),
            "gfx942 hipkernelprovider/gfx942/hip-kernel-provider/k.co "
            "kind=content");
  EXPECT_EQ(describe("hipkernelprovider",
                     "lib/engines/test_arch_content/hip-kernel-provider/unit/shared/"
                     "gfx90a/k.bin"),
            "gfx90a hipkernelprovider/gfx90a/hip-kernel-provider/unit/shared/"
            "k.bin kind=content");
  EXPECT_EQ(describe("hipkernelprovider",
                     "lib/hipdnn_plugins/engines/arch_content/readme.txt"),
            "<none>");
}

TEST(DatabaseHandlers, HotswapCache) {
  const std::string Hash(64, 'a');
  std::string Obj = "share/rocjitsu/translations/gfx1250-b0-a0/v1/" + Hash + ".obj";
  EXPECT_EQ(describe("hotswap_cache", Obj.c_str()),
            "gfx1250 hotswap_cache/gfx1250/v1/" + Hash + ".obj kind=translation");
  std::string Unknown = "share/rocjitsu/translations/gfx1300-a0/v1/" + Hash + ".obj";
  EXPECT_EQ(describe("hotswap_cache", Unknown.c_str()), "<none>");
  std::string Deeper = "x/share/rocjitsu/translations/gfx1250-b0-a0/v1/" + Hash + ".man";
  EXPECT_EQ(describe("hotswap_cache", Deeper.c_str()), "<none>");
}

TEST(DatabaseHandlers, MatchTriesHandlersInOrder) {
  auto H = databaseHandlersNamed({"hipblaslt", "rocblas"});
  ASSERT_TRUE(bool(H)) << llvm::toString(H.takeError());
  std::optional<DatabaseFile> F =
      matchDatabaseFile(*H, "lib/rocblas/library/TensileLibrary_gfx1100.co");
  ASSERT_TRUE(F);
  EXPECT_EQ(F->Handler->name(), "rocblas");
  EXPECT_FALSE(matchDatabaseFile(*H, "share/miopen/db/gfx942130.db.txt"));
  EXPECT_FALSE(matchDatabaseFile(*H, "lib//rocblas/library/k_gfx1100.co"));
}

} // namespace

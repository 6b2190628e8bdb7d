//===- UpstreamHandlerCasesTest.cpp - Upstream's handler cases as data ----===//
//
// Every path upstream's handler tests accept or reject (rocm-systems
// shared/kpack/tests/test_database_handlers.py and test_strict_identity.py,
// the version TheRock runs), restated as a table: the handler, the path
// relative to its prefix, upstream's detect() result (empty: None) and the
// artifact `kpack split` files it under (upstream's base_arch() of it).
//
//===----------------------------------------------------------------------===//

#include "kpack/DatabaseHandlers.h"
#include "kpack/Split.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

using namespace kpack;

namespace {

struct Case {
  const char *Handler;
  std::string RelPath;
  const char *Bundle;   ///< upstream's detect(); "" for None
  const char *Artifact; ///< the split's artifact suffix; "" for generic
};

const std::string Hash64 = "0123456789abcdef0123456789abcdef"
                           "0123456789abcdef0123456789abcdef";
const std::string A64(64, 'a');
const std::string Engines = "lib/hipdnn_plugins/engines";
const std::string ArchContent = Engines + "/arch_content/some-producer";
const std::string TestArchContent = Engines + "/test_arch_content/some-producer";

const Case Cases[] = {
    // TestHotswapCacheHandler
    {"hotswap_cache", "share/rocjitsu/translations/gfx1250-b0-a0/v1/" + Hash64 + ".obj", "gfx1250", "gfx1250"},
    {"hotswap_cache", "share/rocjitsu/translations/gfx1250-b0-a0/v1/" + Hash64 + ".man", "gfx1250", "gfx1250"},
    {"hotswap_cache", "share/rocjitsu/translations/gfx1250-b0-a0/v2/" + A64 + ".obj", "", ""},
    {"hotswap_cache", "share/rocjitsu/translations/gfx1250-b0-a1/v1/" + A64 + ".obj", "", ""},
    {"hotswap_cache", "share/rocjitsu/translations/gfx1250-b0-a0/v1/not-a-digest.obj", "", ""},
    {"hotswap_cache", "share/rocjitsu/translations/gfx1250-b0-a0/v1/" + A64 + ".txt", "", ""},
    {"hotswap_cache", "share/rocjitsu/translations/gfx1250-b0-a0/v1/nested/" + A64 + ".obj", "", ""},
    {"hotswap_cache", "share/other/translations/gfx1250-b0-a0/v1/" + A64 + ".obj", "", ""},
    // TestRocBLASHandler
    {"rocblas", "lib/rocblas/library/TensileLibrary_gfx1100.co", "gfx1100", "gfx1100"},
    {"rocblas", "lib/rocblas/library/kernel_gfx1101.hsaco", "gfx1101", "gfx1101"},
    {"rocblas", "lib/rocblas/library/TensileLibrary_gfx1102.dat", "gfx1102", "gfx1102"},
    {"rocblas", "lib/rocblas/library/TensileLibrary_gfx90a.dat", "gfx90a", "gfx90a"},
    {"rocblas", "lib/rocblas/library/TensileLibrary_gfx942.dat", "gfx942", "gfx942"},
    {"rocblas", "lib/rocblas/library/kernels_gfx1030.co", "gfx1030", "gfx1030"},
    {"rocblas", "lib/rocblas/library/TensileLibrary_lazy_gfx90a-xnack+.hsaco", "gfx90a-xnack+", "gfx90a"},
    {"rocblas", "lib/rocblas/library/Kernels.so-000-gfx942-xnack-.hsaco", "gfx942-xnack-", "gfx942"},
    {"rocblas", "lib/rocblas/library/TensileLibrary_Type_HH_gfx90a-xnack+.hsaco", "gfx90a-xnack+", "gfx90a"},
    {"rocblas", "lib/rocblas/library/gfx942/TensileLibrary_Type_HH_gfx942.co", "gfx942", "gfx942"},
    {"rocblas", "lib/rocblas/library/gfx1100/TensileLibrary_Type_HH_fallback.dat", "gfx1100", "gfx1100"},
    {"rocblas", "lib/rocblas/library/gfx90a/TensileManifest.txt", "gfx90a", "gfx90a"},
    {"rocblas", "lib/rocblas/library/gfx942-xnack+/TensileLibrary.co", "gfx942-xnack+", "gfx942"},
    {"rocblas", "lib/other/library/TensileLibrary_gfx1100.dat", "", ""},
    {"rocblas", "lib/rocblas/library/TensileLibrary_gfx1100.txt", "", ""},
    {"rocblas", "lib/rocblas/library/TensileLibrary.dat", "", ""},
    // TestHipBLASLtHandler
    {"hipblaslt", "lib/hipblaslt/library/TensileLibrary_gfx1100.co", "gfx1100", "gfx1100"},
    {"hipblaslt", "lib/hipblaslt/library/kernel_gfx1101.hsaco", "gfx1101", "gfx1101"},
    {"hipblaslt", "lib/hipblaslt/library/TensileLibrary_gfx1102.dat", "gfx1102", "gfx1102"},
    {"hipblaslt", "lib/hipblaslt/library/TensileLibrary_gfx90a.dat", "gfx90a", "gfx90a"},
    {"hipblaslt", "lib/hipblaslt/library/TensileLibrary_gfx942.dat", "gfx942", "gfx942"},
    {"hipblaslt", "lib/hipblaslt/library/kernels_gfx1030.co", "gfx1030", "gfx1030"},
    {"hipblaslt", "lib/hipblaslt/library/TensileLibrary_lazy_gfx90a-xnack+.hsaco", "gfx90a-xnack+", "gfx90a"},
    {"hipblaslt", "lib/hipblaslt/library/Kernels.so-000-gfx942-xnack-.hsaco", "gfx942-xnack-", "gfx942"},
    {"hipblaslt", "lib/hipblaslt/library/TensileLibrary_Type_HH_gfx90a-xnack+.hsaco", "gfx90a-xnack+", "gfx90a"},
    {"hipblaslt", "lib/hipblaslt/library/gfx942/TensileLibrary_Type_SS_fallback.dat", "gfx942", "gfx942"},
    {"hipblaslt", "lib/hipblaslt/library/gfx1100/TensileManifest.txt", "gfx1100", "gfx1100"},
    {"hipblaslt", "lib/rocblas/library/TensileLibrary_gfx1100.dat", "", ""},
    {"hipblaslt", "lib/hipblaslt/library/TensileLibrary_gfx1100.json", "", ""},
    {"hipblaslt", "lib/hipblaslt/library/generic.dat", "", ""},
    // TestHipSparseLtHandler
    {"hipsparselt", "lib/hipsparselt/library/extop_gfx942.co", "gfx942", "gfx942"},
    {"hipsparselt", "lib/hipsparselt/library/Kernels.so-000-gfx950.hsaco", "gfx950", "gfx950"},
    {"hipsparselt", "lib/hipsparselt/library/TensileLibrary_BB_BB_A_gfx942.dat", "gfx942", "gfx942"},
    {"hipsparselt", "lib/hipsparselt/library/gfx950/TensileLibrary_BB_BB_A_fallback.dat", "gfx950", "gfx950"},
    {"hipsparselt", "lib/rocblas/library/something_gfx942.co", "", ""},
    {"hipsparselt", "lib/hipsparselt/library/something_gfx942.so", "", ""},
    // TestAotritonHandler
    {"aotriton", "lib/aotriton.images/amd-gfx942/flash/attn_fwd/kernel.aks2", "gfx942", "gfx942"},
    {"aotriton", "lib/aotriton.images/amd-gfx11xx/flash/attn_fwd/kernel.aks2", "gfx11", "gfx11"},
    {"aotriton", "lib/aotriton.images/amd-gfx90a/flash/attn_fwd/kernel.aks2", "gfx90a", "gfx90a"},
    {"aotriton", "lib/aotriton.images/amd-gfx950/flash/attn_fwd/kernel.aks2", "gfx950", "gfx950"},
    {"aotriton", "lib/aotriton.images/amd-gfx110x/flash/attn_fwd/kernel.aks2", "gfx110x", "gfx110x"},
    {"aotriton", "lib/aotriton.images/amd-gfx115x/flash/attn_fwd/kernel.aks2", "gfx115x", "gfx115x"},
    {"aotriton", "lib/aotriton.images/amd-gfx120x/flash/attn_fwd/kernel.aks2", "gfx12_0", "gfx12_0"},
    {"aotriton", "lib/aotriton.images/amd-gfx942/__signature__", "gfx942", "gfx942"},
    {"aotriton", "lib/aotriton.images/amd-gfx950/flash/bwd_kernel_dk_dv/kernel.aks2", "gfx950", "gfx950"},
    {"aotriton", "lib/aotriton.images/gfx942/flash/kernel.aks2", "", ""},
    {"aotriton", "lib/aotriton.images/amd-common/flash/kernel.aks2", "", ""},
    {"aotriton", "lib/aotriton/amd-gfx942/flash/kernel.aks2", "", ""},
    // TestMIOpenHandler
    {"miopen", "share/miopen/db/gfx942.kdb", "gfx942", "gfx942"},
    {"miopen", "share/miopen/db/gfx90a.kdb", "gfx90a", "gfx90a"},
    {"miopen", "share/miopen/db/gfx908.kdb", "gfx908", "gfx908"},
    {"miopen", "share/miopen/db/gfx1100.kdb", "gfx1100", "gfx1100"},
    {"miopen", "share/miopen/db/gfx950.kdb", "gfx950", "gfx950"},
    {"miopen", "share/miopen/db/gfx908.tn.model", "gfx908", "gfx908"},
    {"miopen", "share/miopen/db/gfx942_ConvHipIgemmGroupFwdXdlops_decoder.ktn.model", "gfx942", "gfx942"},
    {"miopen", "share/miopen/db/gfx90a_metadata.tn.model", "gfx90a", "gfx90a"},
    {"miopen", "share/miopen/db/gfx950_3d.tn.model", "gfx950", "gfx950"},
    {"miopen", "share/miopen/db/gfx90878.db.txt", "gfx908", "gfx908"},
    {"miopen", "share/miopen/db/gfx942130.HIP.fdb.txt", "gfx942", "gfx942"},
    {"miopen", "share/miopen/db/gfx900_56.OpenCL.fdb.txt", "gfx900", "gfx900"},
    {"miopen", "share/miopen/db/gfx90a_ConvHipIgemmGroupXdlops_encoder.ktn.model", "gfx90a", "gfx90a"},
    {"miopen", "share/miopen/db/gfx942_3d_metadata.tn.model", "gfx942", "gfx942"},
    {"miopen", "share/miopen/db/gfx950_ConvHipImplicitGemm3DGroupFwdXdlops_metadata.tn.model", "gfx950", "gfx950"},
    {"miopen", "share/miopen/db/gfx90a68.db.txt", "gfx90a", "gfx90a"},
    {"miopen", "share/miopen/db/gfx1030_36.db.txt", "gfx1030", "gfx1030"},
    {"miopen", "share/miopen/db/gfx906_60.OpenCL.fdb.txt", "gfx906", "gfx906"},
    {"miopen", "share/miopen/db/gfx90a6e.HIP.fdb.txt", "gfx90a", "gfx90a"},
    {"miopen", "share/miopen/db/gfx942e4.db.txt", "gfx942", "gfx942"},
    {"miopen", "share/other/db/gfx908.tn.model", "", ""},
    {"miopen", "share/miopen/db/gfx908.json", "", ""},
    {"miopen", "share/miopen/db/generic.tn.model", "", ""},
    {"miopen", "lib/libMIOpenCKGroupedConv_gfx942.so", "gfx942", "gfx942"},
    {"miopen", "lib/libMIOpenCKGroupedConv_gfx90a.so", "gfx90a", "gfx90a"},
    {"miopen", "lib/libMIOpenCKGroupedConv_gfx942-xnack+.so", "gfx942-xnack+", "gfx942"},
    {"miopen", "lib/libMIOpen.so", "", ""},
    {"miopen", "lib/libMIOpenCKGroupedConv.so", "", ""},
    {"miopen", "lib/MIOpenCKGroupedConv_gfx942.dll", "gfx942", "gfx942"},
    {"miopen", "lib/MIOpenCKGroupedConv_gfx942-xnack+.dll", "gfx942-xnack+", "gfx942"},
    {"miopen", "lib/MIOpen.dll", "", ""},
    // TestComposableKernelHandler
    {"composablekernel", "lib/libdevice_conv_operations_gfx942.a", "gfx942", "gfx942"},
    {"composablekernel", "lib/libdevice_conv_operations_gfx950_xnackp.a", "gfx950", "gfx950"},
    {"composablekernel", "lib/libdevice_conv_operations_gfx90a_xnack_.a", "gfx90a", "gfx90a"},
    {"composablekernel", "lib/libdevice_conv_operations_gfx942_srameccp_xnack_.a", "gfx942", "gfx942"},
    {"composablekernel", "lib/libdevice_conv_operations_gfx1250_strict.a", "gfx1250-strict", "gfx1250-strict"},
    {"composablekernel", "lib/libdevice_conv_operations_gfx1250_strict_xnackp.a", "gfx1250-strict", "gfx1250-strict"},
    {"composablekernel", "lib/libdevice_conv_operations_gfx1100.a", "gfx1100", "gfx1100"},
    {"composablekernel", "lib/device_conv_operations_gfx942.lib", "gfx942", "gfx942"},
    {"composablekernel", "lib/device_conv_operations_gfx1250_strict.lib", "gfx1250-strict", "gfx1250-strict"},
    {"composablekernel", "lib/libdevice_conv_operations.a", "", ""},
    {"composablekernel", "lib/libdevice_conv_operations_foo.a", "", ""},
    {"composablekernel", "lib/libdevice_conv_operations_xnack.a", "", ""},
    {"composablekernel", "lib/libdevice_conv_operations_gfx11_generic.a", "", ""},
    {"composablekernel", "lib/libdevice_gemm_operations_gfx942.a", "", ""},
    {"composablekernel", "lib/libdevice_conv_operations_gfx942.so", "", ""},
    {"composablekernel", "lib/libdevice_conv_operations_gfx942.a.bak", "", ""},
    {"composablekernel", "lib/libdevice_conv_operations_gfx942.lib.a", "", ""},
    {"composablekernel", "lib/xlibdevice_conv_operations_gfx942.a", "", ""},
    {"composablekernel", "lib/libMIOpen.a", "", ""},
    // TestHipKernelProviderArchContentHandler
    {"hipkernelprovider", ArchContent + "/gfx942/kernels_gfx942.kpack", "gfx942", "gfx942"},
    {"hipkernelprovider", ArchContent + "/gfx942/kernels_gfx942.json", "gfx942", "gfx942"},
    {"hipkernelprovider", ArchContent + "/gfx942/sub/extra/blob.bin", "gfx942", "gfx942"},
    {"hipkernelprovider", ArchContent + "/gfx90a/kernels_gfx90a.kpack", "gfx90a", "gfx90a"},
    {"hipkernelprovider", ArchContent + "/gfx950/kernels_gfx950.kpack", "gfx950", "gfx950"},
    {"hipkernelprovider", ArchContent + "/gfx1151/kernels_gfx1151.kpack", "gfx1151", "gfx1151"},
    {"hipkernelprovider", ArchContent + "/gfx1201/kernels_gfx1201.kpack", "gfx1201", "gfx1201"},
    {"hipkernelprovider", ArchContent + "/gfx942-xnack+/kernels_gfx942-xnack+.kpack", "gfx942-xnack+", "gfx942"},
    {"hipkernelprovider", Engines + "/arch_content/aiter/gfx942/kernels.kpack", "gfx942", "gfx942"},
    {"hipkernelprovider", Engines + "/arch_content/gfx942/kernels.kpack", "gfx942", "gfx942"},
    {"hipkernelprovider", Engines + "/test_arch_content/gfx1101/kernels.kpack", "gfx1101", "gfx1101"},
    {"hipkernelprovider", Engines + "/arch_content/rocke/gfx942/kernels.kpack", "gfx942", "gfx942"},
    {"hipkernelprovider", Engines + "/arch_content/hip-kernel-provider/gfx942/kernels.kpack", "gfx942", "gfx942"},
    {"hipkernelprovider", Engines + "/arch_content/hip-kernel-provider/rocke/gfx942/kernels.kpack", "gfx942", "gfx942"},
    {"hipkernelprovider", TestArchContent + "/unit/shared/gfx1101/kernels.kpack", "gfx1101", "gfx1101"},
    {"hipkernelprovider", Engines + "/test_arch_content/hip-kernel-provider/unit/shared/gfx1101/kernels.kpack", "gfx1101", "gfx1101"},
    {"hipkernelprovider", TestArchContent + "/unit/shared/gfx942/descriptor.json", "gfx942", "gfx942"},
    {"hipkernelprovider", TestArchContent + "/unit/shared/gfx1100/descriptor.json", "gfx1100", "gfx1100"},
    {"hipkernelprovider", TestArchContent + "/unit/shared/gfx1201/descriptor.json", "gfx1201", "gfx1201"},
    {"hipkernelprovider", TestArchContent + "/test_kpack_binary/test_zstd.kpack", "", ""},
    {"hipkernelprovider", "share/some_component/test_arch_content/gfx942/data.bin", "", ""},
    {"hipkernelprovider", ArchContent + "/config/settings.json", "", ""},
    {"hipkernelprovider", Engines + "/other/gfx942/blob.bin", "", ""},
    {"hipkernelprovider", "bin/hip_kernel_provider/rocke/instances/gfx942/wmma_gemm.py", "", ""},
    {"hipkernelprovider", "share/some_component/arch_content/gfx942/data.bin", "", ""},
    {"hipkernelprovider", "lib/arch_content/gfx942/kernels_gfx942.kpack", "", ""},
    {"hipkernelprovider", ArchContent + "/common/shared.json", "", ""},
    {"hipkernelprovider", ArchContent + "/gfx11-generic/kernels.kpack", "", ""},
    {"hipkernelprovider", ArchContent + "/gfx10-3-generic/kernels.kpack", "", ""},
    {"hipkernelprovider", ArchContent + "/gfx950:sramecc+:xnack-/kernels.kpack", "", ""},
    {"hipkernelprovider", ArchContent + "/gfx1250-b0-a0/kernels.kpack", "", ""},
    // test_strict_identity.py: test_database_identity, both targets
    {"rocblas", "lib/rocblas/library/TensileLibrary_gfx1250.dat", "gfx1250", "gfx1250"},
    {"rocblas", "lib/rocblas/library/TensileLibrary_gfx1250-strict.dat", "gfx1250-strict", "gfx1250-strict"},
    {"hipblaslt", "lib/hipblaslt/library/gfx1250/TensileManifest.txt", "gfx1250", "gfx1250"},
    {"hipblaslt", "lib/hipblaslt/library/gfx1250-strict/TensileManifest.txt", "gfx1250-strict", "gfx1250-strict"},
    {"miopen", "share/miopen/db/gfx1250_256.db.txt", "gfx1250", "gfx1250"},
    {"miopen", "share/miopen/db/gfx1250-strict_256.db.txt", "gfx1250-strict", "gfx1250-strict"},
    {"miopen", "share/miopen/db/gfx1250256.HIP.fdb.txt", "gfx1250", "gfx1250"},
    {"miopen", "share/miopen/db/gfx1250-strict256.HIP.fdb.txt", "gfx1250-strict", "gfx1250-strict"},
    {"miopen", "lib/libMIOpenCKGroupedConv_gfx1250.so", "gfx1250", "gfx1250"},
    {"miopen", "lib/libMIOpenCKGroupedConv_gfx1250-strict.so", "gfx1250-strict", "gfx1250-strict"},
    {"composablekernel", "lib/libdevice_conv_operations_gfx1250.a", "gfx1250", "gfx1250"},
    {"composablekernel", "lib/libdevice_conv_operations_gfx1250_strict.a", "gfx1250-strict", "gfx1250-strict"},
    // The brief's: versioned CK plugins (upstream's pattern is not anchored
    // at the end) and the sramecc spelling of Tensile names.
    {"miopen", "lib/libMIOpenCKGroupedConv_gfx942.so.1", "gfx942", "gfx942"},
    {"miopen", "lib/libMIOpenCKGroupedConv_gfx942-xnack-.so.1.0", "gfx942-xnack-", "gfx942"},
    {"rocblas", "lib/rocblas/library/TensileLibrary_gfx90a:xnack+.co", "gfx90a", "gfx90a"},
};

TEST(UpstreamHandlerCases, EveryPathRoutesAsUpstream) {
  for (const Case &C : Cases) {
    SCOPED_TRACE(std::string(C.Handler) + " " + C.RelPath);
    llvm::Expected<std::vector<const DatabaseHandler *>> H =
        databaseHandlersNamed({C.Handler});
    ASSERT_TRUE(bool(H)) << llvm::toString(H.takeError());
    std::optional<DatabaseFile> F = matchDatabaseFile(*H, C.RelPath);
    if (!*C.Bundle) {
      EXPECT_FALSE(F) << "claimed for " << F->Bundle;
      continue;
    }
    ASSERT_TRUE(F);
    EXPECT_EQ(F->Bundle, C.Bundle);
    EXPECT_EQ(F->Artifact, C.Artifact);
  }
}

// Upstream's base_arch() (artifact_splitter.py) and test_strict_identity's
// assertion on it.
TEST(UpstreamHandlerCases, BaseArch) {
  EXPECT_EQ(baseArch("gfx90a-xnack-"), "gfx90a");
  EXPECT_EQ(baseArch("gfx90a-xnack+"), "gfx90a");
  EXPECT_EQ(baseArch("gfx90a:xnack-"), "gfx90a");
  EXPECT_EQ(baseArch("gfx942:sramecc+:xnack-"), "gfx942");
  EXPECT_EQ(baseArch("gfx942-sramecc+-xnack-"), "gfx942");
  EXPECT_EQ(baseArch("gfx942-sramecc+"), "gfx942");
  EXPECT_EQ(baseArch("gfx1250-strict-xnack-"), "gfx1250-strict");
  EXPECT_EQ(baseArch("gfx1250-strict"), "gfx1250-strict");
  EXPECT_EQ(baseArch("gfx11-generic"), "gfx11-generic");
  EXPECT_EQ(baseArch("gfx12_0"), "gfx12_0");
}

// The comparison of --gpu-targets (artifact_splitter.py): bare names on both
// sides; generic and strict processors are names of their own.
TEST(UpstreamHandlerCases, GpuTargets) {
  const std::vector<std::string> Gfx90a = {"gfx90a"};
  EXPECT_TRUE(gpuTargetSelected("gfx90a:xnack+", Gfx90a));
  EXPECT_TRUE(gpuTargetSelected("gfx90a-xnack-", Gfx90a));
  EXPECT_TRUE(gpuTargetSelected("gfx90a:xnack+", {"gfx90a:xnack-"}));
  EXPECT_TRUE(gpuTargetSelected("gfx942:sramecc+:xnack-",
                                {"gfx942:sramecc+:xnack+"}));
  EXPECT_FALSE(gpuTargetSelected("gfx11-generic", {"gfx1100", "gfx1101"}));
  EXPECT_TRUE(gpuTargetSelected("gfx11-generic", {"gfx11-generic"}));
  EXPECT_FALSE(gpuTargetSelected("gfx1250-strict", {"gfx1250"}));
  EXPECT_FALSE(gpuTargetSelected("gfx1250", {"gfx1250-strict"}));
  EXPECT_TRUE(gpuTargetSelected("gfx1250-strict", {"gfx1250-strict"}));
  EXPECT_FALSE(gpuTargetSelected("gfx11", {"gfx1100"}));
  EXPECT_TRUE(gpuTargetSelected("gfx1100", {}));
}

} // namespace

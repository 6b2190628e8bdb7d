//===- kpack/HostBinaryClass.h - What a host binary's device code is -*- C++ -*-===//
//
// The one classification of an analyzed host binary (kpack/HostBinary.h)
// that `kpack inspect` and `kpack doctor` print and act on:
//   none              no HIP device code and no wrappers
//   fat               offload bundles the HIP runtime loads as they are
//   host-only         finalized HIPK wrappers: the code objects are in
//                     .kpack archives (FORMAT.md §3)
//   kpack-ready       a relocatable object whose wrappers point at key
//                     records (docs/kpack-ready.md): ld.kpack must link it
//   broken            a linked binary whose wrappers still point at key
//                     records: kpack-ready objects linked by another linker
//                     (the payload records were dropped, nothing can load)
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_HOSTBINARYCLASS_H
#define KPACK_HOSTBINARYCLASS_H

#include "kpack/HostBinary.h"

namespace kpack {

enum class HostBinaryClass { None, Fat, HostOnly, KpackReady, Broken };

/// The stable names above ("none", "fat", "host-only", "kpack-ready",
/// "broken").
const char *hostBinaryClassName(HostBinaryClass C);

/// What the file is: "executable", "pie-executable", "shared-library" or
/// "relocatable-object" (ELF; a PE EXE is an executable, a DLL a shared
/// library).
const char *hostFileKindName(HostFileKind K, bool IsPIE);

/// Does wrapper W point at a key record: into the key-record section
/// (.rocm_kpack_ref, .kpackrf in PE images) without being HIPK?
bool pointsAtKeyRecord(const HostBinary &H, const WrapperInfo &W);

/// Classifies H: a HIPF wrapper pointing at a key record makes an object
/// kpack-ready and a linked binary broken, whatever else it holds; else any
/// HIPK wrapper makes it host-only (the HIPF wrappers of a partly converted
/// binary keep their bundles); else bundles or wrappers make it fat.
HostBinaryClass classifyHostBinary(const HostBinary &H);

} // namespace kpack

#endif

//===- CodeObjectTarget.h - The target ID a code object was built for -*- C++ -*-===//
//
// librocm_kpack tries every feature subset of the target ID it is asked for
// and does not say which one it found. The shim labels each bundle entry with
// the target ID the code object was really built for, read from the AMDGPU
// ELF header: the processor is the one asked for (the loader only drops
// features), the features come from e_flags.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_SHIM_CODEOBJECTTARGET_H
#define KPACK_SHIM_CODEOBJECTTARGET_H

#include <cstddef>
#include <string>

namespace kpack {
namespace shim {

/// Processor plus the xnack/sramecc settings recorded in the code object's
/// e_flags (code object v3: on/off; v4 and later: any/off/on), in canonical
/// order. Fallback when Data is not a 64-bit AMDGPU HSA ELF object.
std::string codeObjectTargetId(const void *Data, size_t Size,
                               const std::string &Processor,
                               const std::string &Fallback);

} // namespace shim
} // namespace kpack

#endif

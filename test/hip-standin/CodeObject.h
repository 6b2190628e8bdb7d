//===- CodeObject.h - Minimal AMDGPU code-object reader ---------*- C++ -*-===//
//
// What the stand-in HIP runtime needs from a code object it received: the
// names in its symbol tables (to check that registered kernels and variables
// resolve, as CLR does when it builds the program) and the target ID it was
// built for. A small bounds-checked ELF64 reader: any malformed input yields
// an error message, never an out-of-bounds read.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_HIP_STANDIN_CODEOBJECT_H
#define KPACK_HIP_STANDIN_CODEOBJECT_H

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

namespace hipstandin {

struct CodeObjectInfo {
  /// Every non-empty name in .symtab and .dynsym.
  std::set<std::string> Symbols;
  /// "amdhsa.target" from the NT_AMDGPU_METADATA note without the
  /// "amdgcn-amd-amdhsa--" prefix, e.g. "gfx90a:xnack+"; empty if absent.
  std::string TargetId;
};

/// Reads an AMDGPU ELF64 code object. Returns "" or an error message.
std::string readCodeObject(const uint8_t *Data, size_t Size,
                           CodeObjectInfo &Out);

} // namespace hipstandin

#endif

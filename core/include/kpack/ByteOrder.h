//===- ByteOrder.h - Little-endian field access (core) ------*- C++ -*-===//
//
// Every on-disk integer in the kpack formats is little-endian; these helpers
// read and append them without alignment assumptions.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_BYTEORDER_H
#define KPACK_BYTEORDER_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kpack {
namespace detail {

template <typename T> T readLE(const uint8_t *P) {
  T V = 0;
  for (size_t I = 0; I < sizeof(T); ++I)
    V |= static_cast<T>(P[I]) << (8 * I);
  return V;
}

template <typename T> void appendLE(std::vector<uint8_t> &Out, T V) {
  for (size_t I = 0; I < sizeof(T); ++I)
    Out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(V) >> (8 * I)));
}

template <typename T> void writeLE(uint8_t *P, T V) {
  for (size_t I = 0; I < sizeof(T); ++I)
    P[I] = static_cast<uint8_t>(static_cast<uint64_t>(V) >> (8 * I));
}

/// Rounds V up to a multiple of Align (Align 0 or 1: no alignment).
inline uint64_t alignTo(uint64_t V, uint64_t Align) {
  if (Align <= 1)
    return V;
  return (V + Align - 1) / Align * Align;
}

} // namespace detail
} // namespace kpack

#endif

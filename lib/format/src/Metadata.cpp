//===- Metadata.cpp - HIPK kpack metadata ---------------------------------===//

#include "kpack/Metadata.h"
#include "kpack/HipkReference.h"

#include <msgpack.hpp>

#include <algorithm>
#include <new>

using namespace kpack;

Status kpack::encodeKpackMetadata(const KpackMetadata &M,
                                  std::vector<uint8_t> &Out) {
  if (M.SearchPaths.empty())
    return Status::error("kpack metadata needs at least one search path");
  msgpack::sbuffer Buf;
  msgpack::packer<msgpack::sbuffer> P(Buf);
  P.pack_map(2);
  P.pack(std::string("kernel_name"));
  P.pack(M.KernelName);
  P.pack(std::string("kpack_search_paths"));
  P.pack_array(static_cast<uint32_t>(M.SearchPaths.size()));
  for (const std::string &Path : M.SearchPaths)
    P.pack(Path);
  if (Buf.size() > MaxKpackMetadataSize)
    return Status::error("kpack metadata is " + std::to_string(Buf.size()) +
                         " bytes, the runtime reads at most " +
                         std::to_string(MaxKpackMetadataSize));
  Out.assign(Buf.data(), Buf.data() + Buf.size());
  return Status::ok();
}

Status kpack::decodeKpackMetadata(const uint8_t *Bytes, size_t Size,
                                  KpackMetadata &Out, size_t *Consumed) {
  Out = KpackMetadata();
  HipkReference Ref;
  ApiError E;
  try {
    E = parseHipkReference(Bytes, std::min(Size, MaxKpackMetadataSize), Ref,
                           HipkParseMode::Strict, Consumed);
  } catch (const std::bad_alloc &) {
    return Status::error("out of memory reading kpack metadata");
  }
  if (E)
    return Status::error(E.message());
  Out.KernelName = std::move(Ref.KernelName);
  Out.SearchPaths = std::move(Ref.SearchPaths);
  return Status::ok();
}

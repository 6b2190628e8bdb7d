//===- Metadata.cpp - HIPK kpack metadata ---------------------------------===//

#include "kpack/Metadata.h"

#include <msgpack.hpp>

#include <algorithm>
#include <exception>

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
  size_t Len = std::min(Size, MaxKpackMetadataSize);
  msgpack::object_handle Handle;
  size_t Offset = 0;
  try {
    // Limits keep a hostile header from requesting huge containers.
    msgpack::unpack_limit Limit(/*array=*/4096, /*map=*/64, /*str=*/Len,
                                /*bin=*/Len, /*ext=*/Len, /*depth=*/4);
    Handle = msgpack::unpack(reinterpret_cast<const char *>(Bytes), Len, Offset,
                             nullptr, nullptr, Limit);
  } catch (const msgpack::insufficient_bytes &) {
    return Status::error("kpack metadata is truncated (or larger than " +
                         std::to_string(MaxKpackMetadataSize) + " bytes)");
  } catch (const std::exception &E) {
    return Status::error(std::string("kpack metadata is not valid msgpack: ") +
                         E.what());
  }
  const msgpack::object &Root = Handle.get();
  if (Root.type != msgpack::type::MAP)
    return Status::error("kpack metadata is not a msgpack map");
  bool HaveName = false, HavePaths = false;
  for (uint32_t I = 0; I < Root.via.map.size; ++I) {
    const msgpack::object_kv &KV = Root.via.map.ptr[I];
    if (KV.key.type != msgpack::type::STR)
      return Status::error("kpack metadata has a non-string key");
    std::string Key(KV.key.via.str.ptr, KV.key.via.str.size);
    if (Key == "kernel_name") {
      if (HaveName)
        return Status::error("kpack metadata repeats 'kernel_name'");
      if (KV.val.type != msgpack::type::STR)
        return Status::error("kpack metadata 'kernel_name' is not a string");
      Out.KernelName.assign(KV.val.via.str.ptr, KV.val.via.str.size);
      HaveName = true;
    } else if (Key == "kpack_search_paths") {
      if (HavePaths)
        return Status::error("kpack metadata repeats 'kpack_search_paths'");
      if (KV.val.type != msgpack::type::ARRAY)
        return Status::error(
            "kpack metadata 'kpack_search_paths' is not an array");
      for (uint32_t J = 0; J < KV.val.via.array.size; ++J) {
        const msgpack::object &Path = KV.val.via.array.ptr[J];
        if (Path.type != msgpack::type::STR)
          return Status::error(
              "kpack metadata 'kpack_search_paths' holds a non-string");
        Out.SearchPaths.emplace_back(Path.via.str.ptr, Path.via.str.size);
      }
      HavePaths = true;
    }
  }
  if (!HaveName)
    return Status::error("kpack metadata lacks 'kernel_name'");
  if (!HavePaths)
    return Status::error("kpack metadata lacks 'kpack_search_paths'");
  if (Out.SearchPaths.empty())
    return Status::error("kpack metadata has no search path");
  if (Consumed)
    *Consumed = Offset;
  return Status::ok();
}

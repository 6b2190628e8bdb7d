//===- HipkReference.cpp - Parse the metadata a HIPK wrapper points at ----===//

#include "kpack/LoaderCache.h"

#define MSGPACK_NO_BOOST
#include <msgpack.hpp>

#include <new>

namespace kpack {

namespace {
ApiError invalidMetadata(std::string Message) {
  return ApiError(KPACK_ERROR_INVALID_METADATA, std::move(Message));
}
} // namespace

ApiError parseHipkReference(const void *Data, size_t MaxSize,
                            HipkReference &Out) {
  if (!Data)
    return invalidMetadata("metadata pointer is null");
  // The parser consumes bytes one object at a time and stops at the end of
  // the map, so it touches no byte past the metadata record even though the
  // caller cannot say how long the record is.
  msgpack::unpack_limit Limit(MaxSize, MaxSize / 2 + 1, MaxSize, MaxSize,
                              MaxSize, 8);
  msgpack::object_handle Handle;
  try {
    Handle = msgpack::unpack(static_cast<const char *>(Data), MaxSize, nullptr,
                             nullptr, Limit);
  } catch (const std::bad_alloc &) {
    throw;
  } catch (const std::exception &Ex) {
    return invalidMetadata(std::string("metadata is not msgpack: ") +
                           Ex.what());
  }
  const msgpack::object &Root = Handle.get();
  if (Root.type != msgpack::type::MAP)
    return invalidMetadata("metadata is not a map");
  HipkReference Ref;
  bool HaveName = false, HavePaths = false;
  for (uint32_t I = 0; I < Root.via.map.size; ++I) {
    const msgpack::object_kv &KV = Root.via.map.ptr[I];
    if (KV.key.type != msgpack::type::STR)
      continue;
    std::string_view Key(KV.key.via.str.ptr, KV.key.via.str.size);
    if (Key == "kernel_name") {
      if (KV.val.type != msgpack::type::STR || KV.val.via.str.size == 0)
        return invalidMetadata("'kernel_name' is not a non-empty string");
      Ref.KernelName.assign(KV.val.via.str.ptr, KV.val.via.str.size);
      HaveName = true;
    } else if (Key == "kpack_search_paths") {
      if (KV.val.type != msgpack::type::ARRAY)
        return invalidMetadata("'kpack_search_paths' is not an array");
      Ref.SearchPaths.clear();
      for (uint32_t J = 0; J < KV.val.via.array.size; ++J) {
        const msgpack::object &P = KV.val.via.array.ptr[J];
        if (P.type != msgpack::type::STR || P.via.str.size == 0)
          return invalidMetadata("a search path is not a non-empty string");
        Ref.SearchPaths.emplace_back(P.via.str.ptr, P.via.str.size);
      }
      HavePaths = true;
    }
  }
  if (!HaveName)
    return invalidMetadata("metadata lacks 'kernel_name'");
  if (!HavePaths || Ref.SearchPaths.empty())
    return invalidMetadata("metadata lacks 'kpack_search_paths'");
  Out = std::move(Ref);
  return ApiError::success();
}

} // namespace kpack

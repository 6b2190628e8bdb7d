//===- HipkReference.cpp - Parse the metadata a HIPK wrapper points at ----===//

#include "kpack/HipkReference.h"

#define MSGPACK_NO_BOOST
#include <msgpack.hpp>

#include <new>
#include <string_view>

namespace kpack {

namespace {
ApiError invalidMetadata(std::string Message) {
  return ApiError(KPACK_ERROR_INVALID_METADATA,
                  "kpack metadata " + std::move(Message));
}

/// Loader mode also rejects empty strings: nothing can be loaded with them.
bool isUsableString(const msgpack::object &O, HipkParseMode Mode) {
  return O.type == msgpack::type::STR &&
         (Mode == HipkParseMode::Strict || O.via.str.size != 0);
}
} // namespace

ApiError parseHipkReference(const void *Data, size_t MaxSize,
                            HipkReference &Out, HipkParseMode Mode,
                            size_t *Consumed) {
  if (!Data && MaxSize)
    return invalidMetadata("pointer is null");
  // The parser consumes bytes one object at a time and stops at the end of
  // the map, so it touches no byte past the metadata record even though the
  // loader's caller cannot say how long the record is. No container can
  // have more elements than there are bytes, which bounds what a hostile
  // header can make it allocate.
  msgpack::unpack_limit Limit(MaxSize, MaxSize / 2 + 1, MaxSize, MaxSize,
                              MaxSize, 8);
  msgpack::object_handle Handle;
  size_t Offset = 0;
  try {
    Handle = msgpack::unpack(static_cast<const char *>(Data), MaxSize, Offset,
                             nullptr, nullptr, Limit);
  } catch (const std::bad_alloc &) {
    throw;
  } catch (const msgpack::insufficient_bytes &) {
    return invalidMetadata("is truncated (or larger than " +
                           std::to_string(MaxSize) + " bytes)");
  } catch (const std::exception &Ex) {
    return invalidMetadata(std::string("is not valid msgpack: ") + Ex.what());
  }
  const msgpack::object &Root = Handle.get();
  if (Root.type != msgpack::type::MAP)
    return invalidMetadata("is not a msgpack map");
  const bool Strict = Mode == HipkParseMode::Strict;
  HipkReference Ref;
  bool HaveName = false, HavePaths = false;
  for (uint32_t I = 0; I < Root.via.map.size; ++I) {
    const msgpack::object_kv &KV = Root.via.map.ptr[I];
    if (KV.key.type != msgpack::type::STR) {
      if (Strict)
        return invalidMetadata("has a non-string key");
      continue;
    }
    std::string_view Key(KV.key.via.str.ptr, KV.key.via.str.size);
    if (Key == "kernel_name") {
      if (HaveName && Strict)
        return invalidMetadata("repeats 'kernel_name'");
      if (!isUsableString(KV.val, Mode))
        return invalidMetadata(Strict ? "'kernel_name' is not a string"
                                      : "'kernel_name' is not a non-empty "
                                        "string");
      Ref.KernelName.assign(KV.val.via.str.ptr, KV.val.via.str.size);
      HaveName = true;
    } else if (Key == "kpack_search_paths") {
      if (HavePaths && Strict)
        return invalidMetadata("repeats 'kpack_search_paths'");
      if (KV.val.type != msgpack::type::ARRAY)
        return invalidMetadata("'kpack_search_paths' is not an array");
      Ref.SearchPaths.clear();
      for (uint32_t J = 0; J < KV.val.via.array.size; ++J) {
        const msgpack::object &P = KV.val.via.array.ptr[J];
        if (!isUsableString(P, Mode))
          return invalidMetadata(Strict ? "'kpack_search_paths' holds a "
                                          "non-string"
                                        : "'kpack_search_paths' holds a "
                                          "non-string or an empty string");
        Ref.SearchPaths.emplace_back(P.via.str.ptr, P.via.str.size);
      }
      HavePaths = true;
    }
  }
  if (!HaveName)
    return invalidMetadata("lacks 'kernel_name'");
  if (!HavePaths)
    return invalidMetadata("lacks 'kpack_search_paths'");
  if (Ref.SearchPaths.empty())
    return invalidMetadata("has no search path");
  Out = std::move(Ref);
  if (Consumed)
    *Consumed = Offset;
  return ApiError::success();
}

} // namespace kpack

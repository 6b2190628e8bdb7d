//===- Metadata.cpp - HIPK kpack metadata codec ---------------------------===//

#include "kpack/Metadata.h"
#include "kpack/ReadableMemory.h"

#define MSGPACK_NO_BOOST
#include <msgpack.hpp>

#include <algorithm>
#include <cstdio>
#include <new>
#include <string_view>

namespace kpack {

namespace {

Status invalidMetadata(std::string Message) {
  return Status(KPACK_ERROR_INVALID_METADATA,
                "kpack metadata " + std::move(Message));
}

/// Loader mode also rejects empty strings: nothing can be loaded with them.
bool isUsableString(const msgpack::object &O, MetadataMode Mode) {
  return O.type == msgpack::type::STR &&
         (Mode == MetadataMode::Strict || O.via.str.size != 0);
}

Status decodeMap(const char *Data, size_t Size, KpackMetadata &Out,
                 MetadataMode Mode, size_t *Consumed) {
  // The parser consumes bytes one object at a time and stops at the end of
  // the map, and it never looks past Size: a header that announces more
  // elements than follow is "truncated", not a read out of bounds. No
  // container can have more elements than there are bytes, which bounds what
  // a hostile header can make it allocate.
  msgpack::unpack_limit Limit(Size, Size / 2 + 1, Size, Size, Size, 8);
  msgpack::object_handle Handle;
  size_t Offset = 0;
  try {
    Handle = msgpack::unpack(Data, Size, Offset, nullptr, nullptr, Limit);
  } catch (const std::bad_alloc &) {
    return Status(KPACK_ERROR_OUT_OF_MEMORY,
                  "out of memory reading kpack metadata");
  } catch (const msgpack::insufficient_bytes &) {
    return invalidMetadata("is truncated (it would extend past the " +
                           std::to_string(Size) + " bytes available)");
  } catch (const std::exception &Ex) {
    return invalidMetadata(std::string("is not valid msgpack: ") + Ex.what());
  }
  const msgpack::object &Root = Handle.get();
  if (Root.type != msgpack::type::MAP)
    return invalidMetadata("is not a msgpack map");
  const bool Strict = Mode == MetadataMode::Strict;
  KpackMetadata M;
  bool HaveName = false, HavePaths = false, HaveLinkId = false;
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
      M.KernelName.assign(KV.val.via.str.ptr, KV.val.via.str.size);
      HaveName = true;
    } else if (Key == "kpack_search_paths") {
      if (HavePaths && Strict)
        return invalidMetadata("repeats 'kpack_search_paths'");
      if (KV.val.type != msgpack::type::ARRAY)
        return invalidMetadata("'kpack_search_paths' is not an array");
      M.SearchPaths.clear();
      for (uint32_t J = 0; J < KV.val.via.array.size; ++J) {
        const msgpack::object &P = KV.val.via.array.ptr[J];
        if (!isUsableString(P, Mode))
          return invalidMetadata(Strict ? "'kpack_search_paths' holds a "
                                          "non-string"
                                        : "'kpack_search_paths' holds a "
                                          "non-string or an empty string");
        M.SearchPaths.emplace_back(P.via.str.ptr, P.via.str.size);
      }
      HavePaths = true;
    } else if (Key == LinkIdKey) {
      // An extension key: a reader that does not know it ignores it, so a
      // loader ignores one it cannot use (no check is made).
      if (HaveLinkId && Strict)
        return invalidMetadata("repeats 'link_id'");
      if (KV.val.type != msgpack::type::STR) {
        if (Strict)
          return invalidMetadata("'link_id' is not a string");
        M.LinkId.clear();
      } else {
        M.LinkId.assign(KV.val.via.str.ptr, KV.val.via.str.size);
      }
      HaveLinkId = true;
    }
  }
  if (!HaveName)
    return invalidMetadata("lacks 'kernel_name'");
  if (!HavePaths)
    return invalidMetadata("lacks 'kpack_search_paths'");
  if (M.SearchPaths.empty())
    return invalidMetadata("has no search path");
  Out = std::move(M);
  if (Consumed)
    *Consumed = Offset;
  return Status::ok();
}

} // namespace

Status encodeKpackMetadata(const KpackMetadata &M, std::vector<uint8_t> &Out) {
  if (M.SearchPaths.empty())
    return Status::error(KPACK_ERROR_INVALID_METADATA,
                         "kpack metadata needs at least one search path");
  try {
    msgpack::sbuffer Buf;
    msgpack::packer<msgpack::sbuffer> P(Buf);
    P.pack_map(M.LinkId.empty() ? 2 : 3);
    P.pack(std::string("kernel_name"));
    P.pack(M.KernelName);
    P.pack(std::string("kpack_search_paths"));
    P.pack_array(static_cast<uint32_t>(M.SearchPaths.size()));
    for (const std::string &Path : M.SearchPaths)
      P.pack(Path);
    if (!M.LinkId.empty()) {
      P.pack(std::string(LinkIdKey));
      P.pack(M.LinkId);
    }
    if (Buf.size() > MaxKpackMetadataSize)
      return Status::error(KPACK_ERROR_INVALID_METADATA,
                           "kpack metadata is " + std::to_string(Buf.size()) +
                               " bytes, the runtime reads at most " +
                               std::to_string(MaxKpackMetadataSize));
    Out.assign(Buf.data(), Buf.data() + Buf.size());
  } catch (const std::bad_alloc &) {
    return Status::error(KPACK_ERROR_OUT_OF_MEMORY,
                         "out of memory encoding kpack metadata");
  }
  return Status::ok();
}

Status decodeKpackMetadata(const uint8_t *Bytes, size_t Size,
                           KpackMetadata &Out, MetadataMode Mode,
                           size_t *Consumed) {
  if (!Bytes && Size)
    return invalidMetadata("pointer is null");
  try {
    return decodeMap(reinterpret_cast<const char *>(Bytes),
                     std::min(Size, MaxKpackMetadataSize), Out, Mode, Consumed);
  } catch (const std::bad_alloc &) {
    return Status(KPACK_ERROR_OUT_OF_MEMORY,
                  "out of memory reading kpack metadata");
  }
}

Status decodeKpackMetadataInMemory(const void *Address, KpackMetadata &Out,
                                   MetadataMode Mode) {
  if (!Address)
    return invalidMetadata("pointer is null");
  size_t Readable = readableBytesAt(Address, MaxKpackMetadataSize);
  if (Readable == 0) {
    char Buf[64];
    std::snprintf(Buf, sizeof(Buf), "%p", Address);
    return invalidMetadata(std::string("pointer ") + Buf +
                           " does not point into readable memory");
  }
  return decodeKpackMetadata(static_cast<const uint8_t *>(Address), Readable,
                             Out, Mode);
}

} // namespace kpack

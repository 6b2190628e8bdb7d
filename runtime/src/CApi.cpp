//===- CApi.cpp - The rocm_kpack C API over the C++ reader and loader -----===//
//
// Thin layer: argument checks, handle ownership, and a catch-all so that no
// exception ever crosses into C callers.
//
//===----------------------------------------------------------------------===//

#include "rocm_kpack/kpack.h"

#include "kpack/ArchiveReader.h"
#include "kpack/LoaderCache.h"

#include <cstdlib>
#include <cstring>
#include <new>

struct kpack_archive {
  std::unique_ptr<kpack::ArchiveReader> Reader;
};

struct kpack_cache {
  explicit kpack_cache(kpack::KpackEnvironment E) : Loader(std::move(E)) {}
  kpack::LoaderCache Loader;
};

namespace {

template <typename Fn> kpack_error_t guarded(Fn &&Body) {
  try {
    return Body();
  } catch (const std::bad_alloc &) {
    return KPACK_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return KPACK_ERROR_INVALID_FORMAT;
  }
}

} // namespace

extern "C" {

kpack_error_t kpack_open(const char *path, kpack_archive_t *archive) {
  if (!path || !archive)
    return KPACK_ERROR_INVALID_ARGUMENT;
  return guarded([&] {
    auto Handle = std::make_unique<kpack_archive>();
    if (kpack::Status E = kpack::ArchiveReader::open(path, Handle->Reader))
      return E.code();
    *archive = Handle.release();
    return KPACK_SUCCESS;
  });
}

void kpack_close(kpack_archive_t archive) { delete archive; }

kpack_error_t kpack_get_architecture_count(kpack_archive_t archive,
                                           size_t *count) {
  if (!archive || !count)
    return KPACK_ERROR_INVALID_ARGUMENT;
  *count = archive->Reader->gfxArches().size();
  return KPACK_SUCCESS;
}

kpack_error_t kpack_get_architecture(kpack_archive_t archive, size_t index,
                                     const char **arch) {
  if (!archive || !arch || index >= archive->Reader->gfxArches().size())
    return KPACK_ERROR_INVALID_ARGUMENT;
  *arch = archive->Reader->gfxArches()[index].c_str();
  return KPACK_SUCCESS;
}

kpack_error_t kpack_get_binary_count(kpack_archive_t archive, size_t *count) {
  if (!archive || !count)
    return KPACK_ERROR_INVALID_ARGUMENT;
  *count = archive->Reader->binaryNames().size();
  return KPACK_SUCCESS;
}

kpack_error_t kpack_get_binary(kpack_archive_t archive, size_t index,
                               const char **binary) {
  if (!archive || !binary || index >= archive->Reader->binaryNames().size())
    return KPACK_ERROR_INVALID_ARGUMENT;
  *binary = archive->Reader->binaryNames()[index].c_str();
  return KPACK_SUCCESS;
}

kpack_error_t kpack_get_kernel(kpack_archive_t archive, const char *binary_name,
                               const char *arch, void **kernel_data,
                               size_t *kernel_size) {
  if (!archive || !binary_name || !arch || !kernel_data || !kernel_size)
    return KPACK_ERROR_INVALID_ARGUMENT;
  return guarded([&] {
    const kpack::ArchiveReader::Entry *E =
        archive->Reader->find(binary_name, arch);
    if (!E)
      return KPACK_ERROR_KERNEL_NOT_FOUND;
    void *Buffer = nullptr;
    kpack::Status Err = archive->Reader->read(
        *E, [&Buffer](size_t N) { return Buffer = std::malloc(N ? N : 1); });
    if (Err) {
      std::free(Buffer);
      return Err.code();
    }
    *kernel_data = Buffer;
    *kernel_size = static_cast<size_t>(E->OriginalSize);
    return KPACK_SUCCESS;
  });
}

void kpack_free_kernel(void *kernel_data) { std::free(kernel_data); }

kpack_error_t kpack_cache_create(kpack_cache_t *cache) {
  if (!cache)
    return KPACK_ERROR_INVALID_ARGUMENT;
  return guarded([&] {
    auto *C = new kpack_cache(kpack::KpackEnvironment::fromProcess());
    if (C->Loader.environment().ArchOverrideMalformed)
      C->Loader.debug("ROCM_KPACK_ARCH_OVERRIDE is not a list of target IDs; "
                      "ignored");
    *cache = C;
    return KPACK_SUCCESS;
  });
}

void kpack_cache_destroy(kpack_cache_t cache) { delete cache; }

kpack_error_t kpack_discover_binary_path(const void *address_in_binary,
                                         char *path_out, size_t path_out_size,
                                         size_t *offset_out) {
  if (!address_in_binary || !path_out || path_out_size == 0)
    return KPACK_ERROR_INVALID_ARGUMENT;
  return guarded([&] {
    std::string Path;
    uint64_t Offset = 0;
    if (kpack::Status E =
            kpack::discoverBinaryPath(address_in_binary, Path, Offset))
      return E.code();
    if (Path.size() >= path_out_size)
      return KPACK_ERROR_INVALID_ARGUMENT; // buffer too small
    std::memcpy(path_out, Path.c_str(), Path.size() + 1);
    if (offset_out)
      *offset_out = static_cast<size_t>(Offset);
    return KPACK_SUCCESS;
  });
}

kpack_error_t kpack_load_code_object(kpack_cache_t cache,
                                     const void *hipk_metadata,
                                     const char *binary_path, uint32_t co_index,
                                     const char *const *arch_list,
                                     size_t arch_count, void **code_object_out,
                                     size_t *code_object_size_out) {
  if (!cache || !hipk_metadata || !binary_path || !arch_list ||
      arch_count == 0 || !code_object_out || !code_object_size_out)
    return KPACK_ERROR_INVALID_ARGUMENT;
  return guarded([&] {
    kpack::LoaderCache &Loader = cache->Loader;
    if (Loader.environment().Disabled) {
      Loader.debug("ROCM_KPACK_DISABLE is set; not loading");
      Loader.debug("diagnosis: %s", kpack::disabledDiagnosis().c_str());
      return KPACK_ERROR_NOT_IMPLEMENTED;
    }
    // The caller gives no size: the parse is bounded by what is readable at
    // the pointer (the loaded segment holding it, at most 64 KiB).
    kpack::KpackMetadata Ref;
    if (kpack::Status E =
            kpack::decodeKpackMetadataInMemory(hipk_metadata, Ref)) {
      Loader.debug("invalid HIPK metadata: %s", E.message().c_str());
      Loader.debug("diagnosis: %s",
                   kpack::invalidMetadataDiagnosis(E.message()).c_str());
      return E.code();
    }
    std::vector<std::string> Arches;
    for (size_t I = 0; I < arch_count; ++I)
      if (arch_list[I])
        Arches.emplace_back(arch_list[I]);
    void *Data = nullptr;
    size_t Size = 0;
    if (kpack::Status E = Loader.loadCodeObject(Ref, binary_path, co_index,
                                                  Arches, Data, Size))
      return E.code();
    *code_object_out = Data;
    *code_object_size_out = Size;
    return KPACK_SUCCESS;
  });
}

void kpack_free_code_object(void *code_object) { std::free(code_object); }

kpack_error_t kpack_enumerate_architectures(const char *archive_path,
                                            kpack_arch_callback_t callback,
                                            void *user_data) {
  if (!archive_path || !callback)
    return KPACK_ERROR_INVALID_ARGUMENT;
  return guarded([&] {
    std::unique_ptr<kpack::ArchiveReader> Reader;
    if (kpack::Status E = kpack::ArchiveReader::open(archive_path, Reader))
      return E.code();
    for (const std::string &Arch : Reader->gfxArches())
      if (!callback(Arch.c_str(), user_data))
        break;
    return KPACK_SUCCESS;
  });
}

} // extern "C"

/*===- rocm_kpack/kpack_export.h - Symbol visibility of the C API ---------===*
 *
 * KPACK_API marks the functions librocm_kpack exports. The library is built
 * with hidden visibility; only what carries KPACK_API is visible. Valid as
 * C11 and C++.
 *
 *===----------------------------------------------------------------------===*/
#ifndef ROCM_KPACK_KPACK_EXPORT_H
#define ROCM_KPACK_KPACK_EXPORT_H

#if defined(_WIN32)
#if defined(KPACK_BUILDING_LIBRARY) && defined(KPACK_SHARED)
#define KPACK_API __declspec(dllexport)
#elif defined(KPACK_SHARED)
#define KPACK_API __declspec(dllimport)
#else
#define KPACK_API
#endif
#else
#define KPACK_API __attribute__((visibility("default")))
#endif

#endif /* ROCM_KPACK_KPACK_EXPORT_H */

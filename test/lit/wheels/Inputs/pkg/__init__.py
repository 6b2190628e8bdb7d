"""A package with a HIP extension (lib/libpkg_ext.so, which links
lib/libpkg_core.so.1) loaded through ctypes, and AOTriton-style kernel images
in lib/aotriton.images/amd-<target>/."""
import ctypes
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_EXT = ctypes.CDLL(os.path.join(_HERE, "lib", "libpkg_ext.so"))


def run():
    """Launches every kernel of both libraries; returns how many failed."""
    return _EXT.pkg_ext_run()


def kernel_images():
    """The AOTriton-style images installed, relative to lib/aotriton.images."""
    root = os.path.join(_HERE, "lib", "aotriton.images")
    found = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            found.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(found)

//===- Common.cpp - The OS-independent parts of kpack/Platform.h ----------===//

#include "kpack/Platform.h"

namespace kpack::platform {

bool FileIdentity::operator==(const FileIdentity &O) const {
  if (!Exists || !O.Exists)
    return Exists == O.Exists;
  return Device == O.Device && Inode == O.Inode && Size == O.Size &&
         ModifiedSec == O.ModifiedSec && ModifiedNsec == O.ModifiedNsec &&
         ChangedSec == O.ChangedSec && ChangedNsec == O.ChangedNsec;
}

} // namespace kpack::platform

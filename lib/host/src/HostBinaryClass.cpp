//===- HostBinaryClass.cpp - What a host binary's device code is ----------===//

#include "kpack/HostBinaryClass.h"

using namespace kpack;

const char *kpack::hostBinaryClassName(HostBinaryClass C) {
  switch (C) {
  case HostBinaryClass::None:
    return "none";
  case HostBinaryClass::Fat:
    return "fat";
  case HostBinaryClass::HostOnly:
    return "host-only";
  case HostBinaryClass::KpackReady:
    return "kpack-ready";
  case HostBinaryClass::Broken:
    return "broken";
  }
  return "unknown";
}

const char *kpack::hostFileKindName(HostFileKind K, bool IsPIE) {
  switch (K) {
  case HostFileKind::Executable:
    return "executable";
  case HostFileKind::SharedObject:
    return IsPIE ? "pie-executable" : "shared-library";
  case HostFileKind::Relocatable:
    return "relocatable-object";
  }
  return "unknown";
}

bool kpack::pointsAtKeyRecord(const HostBinary &H, const WrapperInfo &W) {
  if (W.isHIPK() || W.BundleIndex >= 0 || !H.KpackRefSection)
    return false;
  const SectionSpan &Keys = *H.KpackRefSection;
  // Addresses in objects are section offsets (Keys.Address is 0 there).
  return W.Target >= Keys.Address && W.Target - Keys.Address < Keys.Size;
}

HostBinaryClass kpack::classifyHostBinary(const HostBinary &H) {
  bool KeyRecords = false, HIPK = false;
  for (const WrapperInfo &W : H.Wrappers) {
    KeyRecords |= pointsAtKeyRecord(H, W);
    HIPK |= W.isHIPK();
  }
  if (KeyRecords)
    return H.Kind == HostFileKind::Relocatable ? HostBinaryClass::KpackReady
                                               : HostBinaryClass::Broken;
  if (HIPK)
    return HostBinaryClass::HostOnly;
  if (!H.Bundles.empty() || !H.Wrappers.empty())
    return HostBinaryClass::Fat;
  return HostBinaryClass::None;
}

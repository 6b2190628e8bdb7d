//===- GuardLibrary.cpp - ld.kpack's definition of the guard --------------===//

#include "GuardLibrary.h"

#include "kpack/KpackReady.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/ObjectYAML/yaml2obj.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace kpack {
namespace link {

namespace {

std::string elfGuardYaml() {
  return (Twine(R"(--- !ELF
FileHeader:
  Class: ELFCLASS64
  Data: ELFDATA2LSB
  Type: ET_REL
  Machine: EM_X86_64
Sections:
  - Name: )") + ready::KeySectionName + R"(
    Type: SHT_PROGBITS
    Flags: [ SHF_ALLOC ]
    AddressAlign: )" + Twine(ready::RecordAlign) + R"(
    Size: 0
Symbols:
  - Name: )" + ready::GuardSymbolName + R"(
    Section: )" + ready::KeySectionName + R"(
    Binding: STB_GLOBAL
    Other: [ STV_HIDDEN ]
)")
      .str();
}

std::string coffGuardYaml() {
  std::string Directive =
      (Twine(" -exclude-symbols:") + ready::GuardSymbolName).str();
  return (Twine(R"(--- !COFF
header:
  Machine: IMAGE_FILE_MACHINE_AMD64
  Characteristics: [ ]
sections:
  - Name: )") + ready::CoffKeySectionName + R"(
    Characteristics: [ IMAGE_SCN_CNT_INITIALIZED_DATA, IMAGE_SCN_MEM_READ ]
    Alignment: )" + Twine(ready::RecordAlign) + R"(
    SectionData: ''
  - Name: .drectve
    Characteristics: [ IMAGE_SCN_LNK_INFO, IMAGE_SCN_LNK_REMOVE ]
    Alignment: 1
    SectionData: )" + toHex(Directive) + R"(
symbols:
  - Name: )" + ready::GuardSymbolName + R"(
    Value: 0
    SectionNumber: 1
    SimpleType: IMAGE_SYM_TYPE_NULL
    ComplexType: IMAGE_SYM_DTYPE_NULL
    StorageClass: IMAGE_SYM_CLASS_EXTERNAL
)")
      .str();
}

} // namespace

Error addGuardLibrary(bool Pe, TempDir &Temp,
                      std::vector<std::string> &LldArgs) {
  std::string Yaml = Pe ? coffGuardYaml() : elfGuardYaml();
  SmallString<1024> Obj;
  raw_svector_ostream OS(Obj);
  std::string Diag;
  yaml::Input In(Yaml);
  if (!yaml::convertYAML(In, OS, [&](const Twine &Msg) { Diag = Msg.str(); }))
    return createStringError("internal error: the guard object: " + Diag);
  StringRef MemberName = Pe ? "kpack-guard.obj" : "kpack-guard.o";
  std::vector<NewArchiveMember> Members;
  Members.emplace_back(MemoryBufferRef(Obj.str(), MemberName));
  Members.back().MemberName = MemberName;
  std::string Path = Temp.newFile("kpack-guard.a");
  if (Error E = writeArchive(Path, Members, SymtabWritingMode::NormalSymtab,
                             object::Archive::K_GNU, /*Deterministic=*/true,
                             /*Thin=*/false))
    return createFileError(Path, std::move(E));
  LldArgs.push_back(Path);
  return Error::success();
}

} // namespace link
} // namespace kpack

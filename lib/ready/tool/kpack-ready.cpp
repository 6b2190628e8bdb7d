//===- kpack-ready.cpp - Inspect and produce kpack-ready objects -----------===//
//
//   kpack-ready rewrite <fat.o> -o <ready.o>   what ld.kpack does to fat inputs
//                                              (x86-64 ELF or COFF)
//   kpack-ready dump <obj|bitcode>             records and wrapper references
//
// A thin driver over kpack/ReadyObject.h and kpack/COFF/ReadyCoffObject.h for
// developers and the lit tests.
//
//===----------------------------------------------------------------------===//

#include "kpack/COFF/ReadyCoffObject.h"
#include "kpack/ReadyObject.h"
#include "kpack/ToolCommandLine.h"

#include "llvm/BinaryFormat/Magic.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory Category("kpack-ready options");
static cl::SubCommand RewriteCmd("rewrite",
                                 "Rewrite a fat relocatable object into a "
                                 "kpack-ready one");
static cl::SubCommand DumpCmd("dump", "Print the kpack-ready records of an "
                                      "object");

static cl::opt<std::string> RewriteInput(cl::Positional, cl::Required,
                                         cl::desc("<fat object>"),
                                         cl::sub(RewriteCmd), cl::cat(Category));
static cl::opt<std::string> RewriteOutput("o", cl::Required,
                                          cl::desc("Output object"),
                                          cl::sub(RewriteCmd), cl::cat(Category));
static cl::opt<std::string> DumpInput(cl::Positional, cl::Required,
                                      cl::desc("<object>"), cl::sub(DumpCmd),
                                      cl::cat(Category));

static Expected<std::unique_ptr<MemoryBuffer>> readInput(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFileOrSTDIN(
      Path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!Buf)
    return createFileError(Path, Buf.getError());
  return std::move(*Buf);
}

static Error rewrite() {
  auto In = readInput(RewriteInput);
  if (!In)
    return In.takeError();
  SmallVector<char, 0> Out;
  MemoryBufferRef Buf = (*In)->getMemBufferRef();
  if (Error E = kpack::ready::isCoffObjectBytes(Buf.getBuffer())
                    ? kpack::ready::rewriteFatCoffObject(Buf, Out)
                    : kpack::ready::rewriteFatObject(Buf, Out))
    return createFileError(RewriteInput, std::move(E));
  return writeToOutput(RewriteOutput, [&](raw_ostream &OS) {
    OS.write(Out.data(), Out.size());
    return Error::success();
  });
}

static void printPayloads(ArrayRef<kpack::ready::PayloadRecord> Payloads) {
  for (const auto &P : Payloads)
    outs() << "payload offset=" << format_hex(P.Offset, 0)
           << " key=" << format_hex(P.Key, 18) << " size=" << P.Bundle.size()
           << "\n";
}

/// Bitcode (host -flto output) has only payload records to show.
static Error dumpBitcode(MemoryBufferRef In) {
  auto Section = kpack::ready::readBitcodePayloadSection(In);
  if (!Section)
    return createFileError(DumpInput, Section.takeError());
  auto Payloads = kpack::ready::parsePayloadSection(*Section);
  if (!Payloads)
    return createFileError(DumpInput, Payloads.takeError());
  printPayloads(*Payloads);
  return Error::success();
}

static Error dump() {
  auto In = readInput(DumpInput);
  if (!In)
    return In.takeError();
  if (identify_magic((*In)->getBuffer()) == file_magic::bitcode)
    return dumpBitcode((*In)->getMemBufferRef());
  auto Obj = object::ObjectFile::createObjectFile((*In)->getMemBufferRef());
  if (!Obj)
    return createFileError(DumpInput, Obj.takeError());
  auto Info = kpack::ready::inspectReadyObject(**Obj);
  if (!Info)
    return createFileError(DumpInput, Info.takeError());
  raw_ostream &OS = outs();
  printPayloads(Info->Payloads);
  for (const auto &K : Info->Keys)
    OS << "keyslot offset=" << format_hex(K.Offset, 0) << " key="
       << format_hex(K.Record.Key, 18) << " size=" << K.Record.BundleSize
       << "\n";
  for (const auto &W : Info->Wrappers)
    OS << "wrapper offset=" << format_hex(W.WrapperOffset, 0)
       << " keyslot=" << format_hex(W.KeyOffset, 0) << "\n";
  return Error::success();
}

/// "kpack-ready <subcommand>" once llvm::cl has selected one.
static std::string toolName() {
  return RewriteCmd ? "kpack-ready rewrite"
         : DumpCmd  ? "kpack-ready dump"
                    : "kpack-ready";
}

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(Category);
  cl::SetVersionPrinter(
      [](raw_ostream &OS) { kpack::printToolVersion(OS, "kpack-ready"); });
  kpack::addExitStatusHelp();
  if (!kpack::parseToolCommandLine(
          argc, argv, "Inspect and produce kpack-ready objects\n", toolName))
    return kpack::ToolExitUsage;
  if (!RewriteCmd && !DumpCmd)
    return kpack::reportUsageError(toolName(), "no subcommand given");
  if (Error E = RewriteCmd ? rewrite() : dump())
    return kpack::reportToolError(toolName(), std::move(E));
  return kpack::ToolExitOk;
}

//===- Wheel.cpp - Python wheels (PEP 427) --------------------------------===//

#include "kpack/Wheel.h"

#include "kpack/LLVMError.h"
#include "kpack/Quote.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace llvm;
using namespace kpack;

namespace {

constexpr uint64_t MaxDistInfoFileSize = uint64_t(64) << 20;

bool isNameSeparator(char C) { return C == '-' || C == '_' || C == '.'; }

} // namespace

//===-- Names -------------------------------------------------------------===//

std::optional<Requirement> kpack::parseRequirement(StringRef Value) {
  auto [Spec, Marker] = Value.split(';');
  Spec = Spec.trim();
  size_t NameEnd = Spec.find_first_not_of(
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
  Requirement R;
  R.Name = Spec.substr(0, NameEnd).str();
  if (R.Name.empty())
    return std::nullopt;
  StringRef Rest = Spec.substr(R.Name.size()).trim();
  if (Rest.consume_front("=="))
    R.Version = Rest.trim().str();
  Marker = Marker.trim();
  if (Marker.consume_front("extra")) {
    Marker = Marker.ltrim();
    if (Marker.consume_front("==")) {
      Marker = Marker.trim();
      if (Marker.size() >= 2 && (Marker.front() == '"' || Marker.front() == '\'') &&
          Marker.back() == Marker.front())
        R.Extra = Marker.drop_front().drop_back().str();
    }
  }
  return R;
}

Expected<WheelName> WheelName::parse(StringRef FileName) {
  StringRef Base = sys::path::filename(FileName);
  auto Fail = [&](const Twine &Why) {
    return makeError("'" + Base + "' is not a wheel file name (" + Why +
                     "; expected {distribution}-{version}[-{build}]-"
                     "{python}-{abi}-{platform}.whl)");
  };
  if (!Base.consume_back(".whl"))
    return Fail("no .whl suffix");
  SmallVector<StringRef, 6> Parts;
  Base.split(Parts, '-');
  if (Parts.size() != 5 && Parts.size() != 6)
    return Fail(Twine(Parts.size()) + " '-'-separated parts");
  for (StringRef P : Parts)
    if (P.empty() || llvm::any_of(P, [](char C) {
          return isSpace(C) || !isPrint(C) || C == '/';
        }))
      return Fail("empty part or invalid character");
  WheelName N;
  N.Distribution = Parts[0].str();
  N.Version = Parts[1].str();
  size_t Tag = 2;
  if (Parts.size() == 6) {
    if (!isDigit(Parts[2].front()))
      return Fail("build tag '" + Parts[2] + "' does not start with a digit");
    N.Build = Parts[2].str();
    Tag = 3;
  }
  N.Python = Parts[Tag].str();
  N.Abi = Parts[Tag + 1].str();
  N.Platform = Parts[Tag + 2].str();
  if (!isValidDistributionName(N.Distribution))
    return Fail("invalid distribution name '" + N.Distribution + "'");
  return N;
}

std::string WheelName::tags() const {
  return Python + "-" + Abi + "-" + Platform;
}

std::string WheelName::nameVersion() const {
  return Distribution + "-" + Version;
}

std::string WheelName::fileName() const {
  return nameVersion() + (Build.empty() ? "" : "-" + Build) + "-" + tags() +
         ".whl";
}

std::string kpack::normalizeDistributionName(StringRef Name) {
  std::string Out;
  for (size_t I = 0; I < Name.size();) {
    if (isNameSeparator(Name[I])) {
      while (I < Name.size() && isNameSeparator(Name[I]))
        ++I;
      Out += '-';
      continue;
    }
    Out += toLower(Name[I++]);
  }
  return Out;
}

std::string kpack::wheelFileDistributionName(StringRef Name) {
  std::string Out = normalizeDistributionName(Name);
  std::replace(Out.begin(), Out.end(), '-', '_');
  return Out;
}

bool kpack::isValidDistributionName(StringRef Name) {
  if (Name.empty() || !isAlnum(Name.front()) || !isAlnum(Name.back()))
    return false;
  return llvm::all_of(Name, [](char C) {
    return isAlnum(C) || isNameSeparator(C);
  });
}

std::string kpack::targetIdNamePart(StringRef TargetId, char Separator) {
  SmallVector<StringRef, 4> Parts;
  TargetId.split(Parts, ':');
  std::string Out;
  for (size_t I = 0; I < Parts.size(); ++I) {
    StringRef Part = Parts[I];
    if (I == 0) {
      for (char C : Part)
        Out += C == '-' ? Separator : toLower(C);
      continue;
    }
    Out += Separator;
    std::string Sign;
    if (Part.consume_back("+"))
      Sign = "plus";
    else if (Part.consume_back("-"))
      Sign = "minus";
    Out += Part.lower();
    if (!Sign.empty())
      Out += Separator + Sign;
  }
  return Out;
}

//===-- WHEEL and METADATA ------------------------------------------------===//

Expected<WheelHeaderFile> WheelHeaderFile::parse(StringRef Text,
                                                 const Twine &What) {
  WheelHeaderFile F;
  size_t FirstNl = Text.find('\n');
  if (FirstNl != StringRef::npos && FirstNl > 0 && Text[FirstNl - 1] == '\r')
    F.Newline = "\r\n";
  size_t Pos = 0;
  unsigned LineNo = 0;
  while (Pos < Text.size()) {
    ++LineNo;
    size_t Nl = Text.find('\n', Pos);
    size_t End = Nl == StringRef::npos ? Text.size() : Nl + 1;
    StringRef Raw = Text.slice(Pos, End);
    StringRef Line = Raw.rtrim("\r\n");
    if (Line.empty()) {
      F.Body = Text.substr(Pos).str();
      break;
    }
    if (Line.front() == ' ' || Line.front() == '\t') {
      if (F.Headers.empty())
        return makeError(What + ": line " + Twine(LineNo) +
                         " continues no header");
      Header &Last = F.Headers.back();
      Last.Raw += Raw.str();
      Last.Value += "\n" + Line.ltrim(" \t").str();
    } else {
      size_t Colon = Line.find(':');
      StringRef Field = Colon == StringRef::npos ? "" : Line.take_front(Colon);
      if (Field.empty() || llvm::any_of(Field, [](char C) {
            return !isPrint(C) || C == ' ';
          }))
        return makeError(What + ": line " + Twine(LineNo) +
                         " is not a 'Field: value' header: " + quoteInput(Line));
      F.Headers.push_back({Field.str(),
                           Line.drop_front(Colon + 1).ltrim(" \t").str(),
                           Raw.str()});
    }
    Pos = End;
  }
  return F;
}

std::vector<std::string> WheelHeaderFile::getAll(StringRef Field) const {
  std::vector<std::string> Out;
  for (const Header &H : Headers)
    if (StringRef(H.Field).equals_insensitive(Field))
      Out.push_back(H.Value);
  return Out;
}

std::optional<std::string> WheelHeaderFile::get(StringRef Field) const {
  for (const Header &H : Headers)
    if (StringRef(H.Field).equals_insensitive(Field))
      return H.Value;
  return std::nullopt;
}

void WheelHeaderFile::append(StringRef Field, StringRef Value) {
  if (!Headers.empty() && !Headers.back().Raw.empty() &&
      Headers.back().Raw.back() != '\n')
    Headers.back().Raw += Newline;
  Headers.push_back({Field.str(), Value.str(), ""});
}

void WheelHeaderFile::set(StringRef Field, StringRef Value) {
  for (Header &H : Headers)
    if (StringRef(H.Field).equals_insensitive(Field)) {
      bool HadNewline = H.Raw.empty() || StringRef(H.Raw).ends_with("\n");
      H.Value = Value.str();
      H.Raw = HadNewline ? "" : H.Field + ": " + H.Value;
      return;
    }
  append(Field, Value);
}

void WheelHeaderFile::removeIf(function_ref<bool(StringRef, StringRef)> Pred) {
  llvm::erase_if(Headers,
                 [&](const Header &H) { return Pred(H.Field, H.Value); });
}

std::string WheelHeaderFile::str() const {
  std::string Out;
  for (const Header &H : Headers)
    Out += H.Raw.empty() ? H.Field + ": " + H.Value + Newline : H.Raw;
  if (!Body.empty() && !Out.empty() && Out.back() != '\n')
    Out += Newline;
  return Out + Body;
}

//===-- RECORD ------------------------------------------------------------===//

Expected<std::vector<RecordEntry>> kpack::parseRecord(StringRef Text,
                                                      const Twine &What) {
  std::vector<RecordEntry> Rows;
  std::vector<std::string> Row;
  std::string Field;
  bool InQuotes = false, WasQuoted = false;
  unsigned LineNo = 1, RowLine = 1;
  auto EndRow = [&]() -> Error {
    Row.push_back(std::move(Field));
    Field.clear();
    WasQuoted = false;
    bool Blank = Row.size() == 1 && Row[0].empty();
    if (!Blank) {
      if (Row.size() != 3)
        return makeError(What + ": line " + Twine(RowLine) + " has " +
                         Twine(Row.size()) + " fields, expected 3 (path, "
                         "hash, size)");
      if (Row[0].empty())
        return makeError(What + ": line " + Twine(RowLine) + ": empty path");
      Rows.push_back({std::move(Row[0]), std::move(Row[1]), std::move(Row[2])});
    }
    Row.clear();
    RowLine = LineNo;
    return Error::success();
  };
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (C == '\n')
      ++LineNo;
    if (InQuotes) {
      if (C == '"') {
        if (I + 1 < Text.size() && Text[I + 1] == '"') {
          Field += '"';
          ++I;
        } else {
          InQuotes = false;
        }
      } else {
        Field += C;
      }
      continue;
    }
    if (C == '"' && Field.empty() && !WasQuoted) {
      InQuotes = WasQuoted = true;
    } else if (C == ',') {
      Row.push_back(std::move(Field));
      Field.clear();
      WasQuoted = false;
    } else if (C == '\r' || C == '\n') {
      if (C == '\r' && I + 1 < Text.size() && Text[I + 1] == '\n')
        continue; // the '\n' ends the row
      if (C == '\r')
        ++LineNo;
      if (Error E = EndRow())
        return E;
    } else if (WasQuoted) {
      return makeError(What + ": line " + Twine(LineNo) +
                       ": text after a closing quote");
    } else {
      Field += C;
    }
  }
  if (InQuotes)
    return makeError(What + ": unterminated quoted field");
  if (!Field.empty() || WasQuoted || !Row.empty())
    if (Error E = EndRow())
      return E;
  return Rows;
}

std::string kpack::writeRecord(ArrayRef<RecordEntry> Rows) {
  auto Field = [](StringRef S) {
    if (S.find_first_of(",\"\r\n") == StringRef::npos)
      return S.str();
    std::string Q = "\"";
    for (char C : S) {
      if (C == '"')
        Q += '"';
      Q += C;
    }
    return Q + "\"";
  };
  std::string Out;
  for (const RecordEntry &R : Rows)
    Out += Field(R.Path) + "," + Field(R.Hash) + "," + Field(R.Size) + "\n";
  return Out;
}

std::string kpack::urlsafeBase64NoPad(ArrayRef<uint8_t> Bytes) {
  std::string S = encodeBase64(Bytes);
  while (!S.empty() && S.back() == '=')
    S.pop_back();
  for (char &C : S)
    C = C == '+' ? '-' : C == '/' ? '_' : C;
  return S;
}

RecordEntry RecordHasher::finish(StringRef Path) {
  std::array<uint8_t, 32> Digest = Sha.final();
  return {Path.str(), "sha256=" + urlsafeBase64NoPad(Digest),
          std::to_string(Size)};
}

RecordEntry kpack::recordEntryFor(StringRef Path, ArrayRef<uint8_t> Bytes) {
  RecordHasher H;
  H.update(Bytes);
  return H.finish(Path);
}

//===-- Entry order -------------------------------------------------------===//

bool kpack::wheelEntryLess(StringRef A, StringRef B, StringRef DistInfoDir) {
  auto Rank = [&](StringRef N) {
    if (N.size() == DistInfoDir.size() + 7 && N.starts_with(DistInfoDir) &&
        N.ends_with("/RECORD"))
      return 2;
    if (N.size() > DistInfoDir.size() && N.starts_with(DistInfoDir) &&
        N[DistInfoDir.size()] == '/')
      return 1;
    return 0;
  };
  int RA = Rank(A), RB = Rank(B);
  if (RA != RB)
    return RA < RB;
  if (RA != 0)
    return A < B;
  // os.walk order with sorted names: at the first differing component, a
  // file of that directory comes before any of its subdirectories.
  while (true) {
    auto [HeadA, TailA] = A.split('/');
    auto [HeadB, TailB] = B.split('/');
    bool FileA = TailA.empty() && !A.contains('/');
    bool FileB = TailB.empty() && !B.contains('/');
    if (HeadA != HeadB || FileA || FileB) {
      if (FileA != FileB)
        return FileA;
      return HeadA < HeadB;
    }
    A = TailA;
    B = TailB;
  }
}

//===-- WheelFile ---------------------------------------------------------===//

Expected<WheelFile> WheelFile::open(StringRef Path) {
  Expected<WheelName> Name = WheelName::parse(Path);
  if (!Name)
    return Name.takeError();
  Expected<ZipReader> Zip = ZipReader::open(Path);
  if (!Zip)
    return Zip.takeError();
  return load(Path, std::move(*Name), std::move(*Zip));
}

Expected<WheelFile>
WheelFile::openBuffer(std::unique_ptr<MemoryBuffer> Buffer) {
  std::string Path = Buffer->getBufferIdentifier().str();
  Expected<WheelName> Name = WheelName::parse(Path);
  if (!Name)
    return Name.takeError();
  Expected<ZipReader> Zip = ZipReader::openBuffer(std::move(Buffer));
  if (!Zip)
    return Zip.takeError();
  return load(Path, std::move(*Name), std::move(*Zip));
}

Expected<WheelFile> WheelFile::load(StringRef Path, WheelName Name,
                                    ZipReader Zip) {
  WheelFile W;
  W.Path = Path.str();
  W.Name = std::move(Name);
  W.Zip.emplace(std::move(Zip));
  auto Fail = [&](const Twine &Msg) {
    return makeError("'" + Path + "': " + Msg);
  };

  // Exactly one .dist-info directory, named after the wheel.
  StringSet<> DistInfos;
  for (const ZipEntry &E : W.Zip->entries()) {
    StringRef Top = StringRef(E.Name).split('/').first;
    if (Top.ends_with(".dist-info") && StringRef(E.Name).contains('/'))
      DistInfos.insert(Top);
  }
  if (DistInfos.empty())
    return Fail("no .dist-info directory");
  if (DistInfos.size() > 1) {
    std::vector<std::string> Names;
    for (const auto &D : DistInfos)
      Names.push_back(D.getKey().str());
    llvm::sort(Names);
    return Fail("several .dist-info directories: " + join(Names, ", "));
  }
  W.DistInfo = DistInfos.begin()->getKey().str();
  {
    StringRef Stem = StringRef(W.DistInfo).drop_back(strlen(".dist-info"));
    auto [Dist, Ver] = Stem.rsplit('-');
    if (normalizeDistributionName(Dist) !=
            normalizeDistributionName(W.Name.Distribution) ||
        Ver != W.Name.Version)
      return Fail(".dist-info directory '" + W.DistInfo +
                  "' does not match the file name (expected '" +
                  W.Name.distInfoDir() + "')");
  }

  auto ReadText = [&](StringRef File) -> Expected<std::string> {
    std::string EntryName = W.DistInfo + "/" + File.str();
    const ZipEntry *E = W.Zip->find(EntryName);
    if (!E)
      return Fail("no " + EntryName);
    return W.Zip->readAll(*E, MaxDistInfoFileSize);
  };

  Expected<std::string> WheelText = ReadText("WHEEL");
  if (!WheelText)
    return WheelText.takeError();
  Expected<WheelHeaderFile> Wheel =
      WheelHeaderFile::parse(*WheelText, "'" + Path + "': WHEEL");
  if (!Wheel)
    return Wheel.takeError();
  W.Wheel = std::move(*Wheel);
  std::optional<std::string> WheelVersion = W.Wheel.get("Wheel-Version");
  if (!WheelVersion)
    return Fail("WHEEL has no Wheel-Version");
  if (StringRef(*WheelVersion).split('.').first.trim() != "1")
    return Fail("unsupported Wheel-Version " + quoteInput(*WheelVersion) +
                " (1.x is supported)");
  W.RootIsPurelib = StringRef(W.Wheel.get("Root-Is-Purelib").value_or(""))
                        .trim()
                        .equals_insensitive("true");

  Expected<std::string> MetadataText = ReadText("METADATA");
  if (!MetadataText)
    return MetadataText.takeError();
  Expected<WheelHeaderFile> Metadata =
      WheelHeaderFile::parse(*MetadataText, "'" + Path + "': METADATA");
  if (!Metadata)
    return Metadata.takeError();
  W.Metadata = std::move(*Metadata);
  std::optional<std::string> ProjectName = W.Metadata.get("Name");
  std::optional<std::string> Version = W.Metadata.get("Version");
  if (!ProjectName || !Version)
    return Fail("METADATA lacks Name or Version");
  W.ProjectName = StringRef(*ProjectName).trim().str();
  W.Version = StringRef(*Version).trim().str();
  if (normalizeDistributionName(W.ProjectName) !=
      normalizeDistributionName(W.Name.Distribution))
    return Fail("METADATA names project " + quoteInput(W.ProjectName) +
                ", the file name '" + W.Name.Distribution + "'");
  if (W.Version != W.Name.Version)
    return Fail("METADATA has version " + quoteInput(W.Version) +
                ", the file name '" + W.Name.Version + "'");

  Expected<std::string> RecordText = ReadText("RECORD");
  if (!RecordText)
    return RecordText.takeError();
  Expected<std::vector<RecordEntry>> Rows =
      parseRecord(*RecordText, "'" + Path + "': RECORD");
  if (!Rows)
    return Rows.takeError();
  for (RecordEntry &R : *Rows) {
    if (W.isRecordFile(R.Path))
      continue;
    // The wheel format allows a row without hash only for RECORD and its
    // signatures; every other file is checked against its hash.
    if (R.Hash.empty())
      return Fail("RECORD has no hash for " + quoteInput(R.Path) +
                  " (only RECORD and its signatures may have none)");
    std::string P = R.Path;
    if (!W.Record.try_emplace(P, std::move(R)).second)
      return Fail("RECORD lists " + quoteInput(P) + " twice");
  }
  for (const ZipEntry &E : W.Zip->entries())
    if (!E.isDirectory() && !W.isRecordFile(E.Name) && !W.Record.count(E.Name))
      return Fail("RECORD does not list " + quoteInput(E.Name));
  std::vector<std::string> Missing;
  for (const auto &R : W.Record) {
    const ZipEntry *E = W.Zip->find(R.getKey());
    if (!E || E->isDirectory())
      Missing.push_back(R.getKey().str());
  }
  if (!Missing.empty()) {
    llvm::sort(Missing);
    return Fail("RECORD lists " + quoteInput(Missing.front()) +
                ", which the wheel does not contain");
  }
  return W;
}

std::string WheelFile::dataDir() const {
  return StringRef(DistInfo).drop_back(strlen(".dist-info")).str() + ".data";
}

bool WheelFile::isRecordFile(StringRef EntryName) const {
  if (!EntryName.consume_front(DistInfo) || !EntryName.consume_front("/"))
    return false;
  return EntryName == "RECORD" || EntryName == "RECORD.jws" ||
         EntryName == "RECORD.p7s";
}

Expected<RecordEntry>
WheelFile::readVerified(const ZipEntry &E,
                        function_ref<Error(ArrayRef<uint8_t>)> Sink) const {
  RecordHasher Hasher;
  if (Error Err = Zip->read(E, [&](ArrayRef<uint8_t> Chunk) -> Error {
        Hasher.update(Chunk);
        return Sink ? Sink(Chunk) : Error::success();
      }))
    return Err;
  RecordEntry Got = Hasher.finish(E.Name);
  auto It = Record.find(E.Name);
  if (It == Record.end())
    return Got;
  const RecordEntry &Want = It->second;
  auto Fail = [&](const Twine &Msg) {
    return makeError("'" + Path + "': " + quoteInput(E.Name) + ": " + Msg);
  };
  // open() refused rows without a hash.
  if (!StringRef(Want.Hash).starts_with("sha256="))
    return Fail("RECORD hash " + quoteInput(Want.Hash) +
                " is not sha256 (the only algorithm checked here)");
  if (Want.Hash != Got.Hash)
    return Fail("contents do not match RECORD (computed " + Got.Hash +
                ", RECORD says " + quoteInput(Want.Hash) + ")");
  if (!Want.Size.empty() && Want.Size != Got.Size)
    return Fail("size " + Got.Size + " does not match RECORD (" +
                quoteInput(Want.Size) + ")");
  return Got;
}

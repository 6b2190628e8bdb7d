//===- Windows.cpp - kpack/Platform.h on Windows (mingw-w64) --------------===//
//
// FORMAT.md §3.4 and seed 001: the binary holding an address is found with
// GetModuleHandleExW(FROM_ADDRESS | UNCHANGED_REFCOUNT) + GetModuleFileNameW;
// file names are UTF-16 at the system call (UTF-8 everywhere else);
// ROCM_KPACK_PATH is ';'-separated; archives are read-only mappings
// (CreateFileMappingW + MapViewOfFile); the readable-memory bound is
// VirtualQuery's. A mapped file cannot be truncated while the view exists
// (SetEndOfFile fails with ERROR_USER_MAPPED_FILE), so a read from the view
// never runs past the file.
//
//===----------------------------------------------------------------------===//

#include "kpack/Platform.h"

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <algorithm>
#include <cstring>
#include <cwchar>
#include <vector>

namespace kpack::platform {

const char PathListSeparator = ';';

namespace {

std::wstring widen(std::string_view Utf8) {
  if (Utf8.empty())
    return std::wstring();
  int N = MultiByteToWideChar(CP_UTF8, 0, Utf8.data(),
                              static_cast<int>(Utf8.size()), nullptr, 0);
  if (N <= 0)
    return std::wstring();
  std::wstring Out(static_cast<size_t>(N), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, Utf8.data(), static_cast<int>(Utf8.size()),
                      Out.data(), N);
  return Out;
}

std::string narrow(std::wstring_view Wide) {
  if (Wide.empty())
    return std::string();
  int N = WideCharToMultiByte(CP_UTF8, 0, Wide.data(),
                              static_cast<int>(Wide.size()), nullptr, 0,
                              nullptr, nullptr);
  if (N <= 0)
    return std::string();
  std::string Out(static_cast<size_t>(N), '\0');
  WideCharToMultiByte(CP_UTF8, 0, Wide.data(), static_cast<int>(Wide.size()),
                      Out.data(), N, nullptr, nullptr);
  return Out;
}

std::string messageOf(DWORD Code) {
  wchar_t *Buffer = nullptr;
  DWORD N = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER |
                               FORMAT_MESSAGE_FROM_SYSTEM |
                               FORMAT_MESSAGE_IGNORE_INSERTS,
                           nullptr, Code, 0,
                           reinterpret_cast<wchar_t *>(&Buffer), 0, nullptr);
  std::string Text;
  if (N && Buffer)
    Text = narrow(std::wstring_view(Buffer, N));
  if (Buffer)
    LocalFree(Buffer);
  while (!Text.empty() && (Text.back() == '\n' || Text.back() == '\r' ||
                           Text.back() == ' ' || Text.back() == '.'))
    Text.pop_back();
  if (Text.empty())
    Text = "error " + std::to_string(Code);
  return Text;
}

bool isNotFound(DWORD Code) {
  return Code == ERROR_FILE_NOT_FOUND || Code == ERROR_PATH_NOT_FOUND ||
         Code == ERROR_INVALID_NAME || Code == ERROR_BAD_NETPATH ||
         Code == ERROR_DIRECTORY;
}

/// A file opened for reading (sharing everything, as a reader should: the
/// archive may be replaced while open).
HANDLE openForRead(const std::string &Path, DWORD Flags = 0) {
  return CreateFileW(widen(Path).c_str(), GENERIC_READ,
                     FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                     nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | Flags,
                     nullptr);
}

} // namespace

std::optional<std::string> getEnv(const char *Name) {
  // The process environment block in UTF-16 (a non-ASCII path survives;
  // the C runtime's getenv would give the ANSI code page's rendering).
  const std::wstring WideName = widen(Name);
  std::vector<wchar_t> Value(256);
  for (;;) {
    SetLastError(ERROR_SUCCESS);
    DWORD N = GetEnvironmentVariableW(WideName.c_str(), Value.data(),
                                      static_cast<DWORD>(Value.size()));
    if (N == 0) {
      if (GetLastError() == ERROR_ENVVAR_NOT_FOUND)
        return std::nullopt;
      return std::string();
    }
    if (N < Value.size())
      return narrow(std::wstring_view(Value.data(), N));
    Value.resize(N);
  }
}

bool isDirectorySeparator(char C) { return C == '/' || C == '\\'; }

bool isAbsolutePath(std::string_view Path) {
  if (Path.size() >= 2 && isDirectorySeparator(Path[0]) &&
      isDirectorySeparator(Path[1]))
    return true; // \\server\share\..., \\?\...
  if (Path.size() >= 3 && Path[1] == ':' && isDirectorySeparator(Path[2]) &&
      ((Path[0] >= 'A' && Path[0] <= 'Z') || (Path[0] >= 'a' && Path[0] <= 'z')))
    return true; // C:\... or C:/...
  // "\x" is relative to the current drive and "C:x" to C:'s current
  // directory: neither is absolute, but neither is relative to a binary's
  // directory either; treat a leading separator as absolute, like POSIX.
  return !Path.empty() && isDirectorySeparator(Path[0]);
}

std::string lastErrorMessage() { return messageOf(GetLastError()); }

size_t readableBytesAt(const void *Address, size_t Max) {
  const uintptr_t Addr = reinterpret_cast<uintptr_t>(Address);
  if (Addr == 0 || Max == 0)
    return 0;
  // The run of committed, readable regions from Address on, at most Max
  // bytes: in a loaded image each section is its own region (with its own
  // protection), so metadata in .kpackrf ends where the section's pages end.
  uintptr_t Cursor = Addr;
  size_t Readable = 0;
  while (Readable < Max) {
    MEMORY_BASIC_INFORMATION Info;
    if (VirtualQuery(reinterpret_cast<const void *>(Cursor), &Info,
                     sizeof(Info)) != sizeof(Info))
      break;
    const DWORD Protect = Info.Protect & 0xff;
    const bool Ok = Info.State == MEM_COMMIT &&
                    !(Info.Protect & (PAGE_GUARD | PAGE_NOACCESS)) &&
                    (Protect == PAGE_READONLY || Protect == PAGE_READWRITE ||
                     Protect == PAGE_WRITECOPY ||
                     Protect == PAGE_EXECUTE_READ ||
                     Protect == PAGE_EXECUTE_READWRITE ||
                     Protect == PAGE_EXECUTE_WRITECOPY);
    if (!Ok)
      break;
    const uintptr_t End =
        reinterpret_cast<uintptr_t>(Info.BaseAddress) + Info.RegionSize;
    if (End <= Cursor)
      break;
    Readable += static_cast<size_t>(End - Cursor);
    Cursor = End;
    if (Cursor == 0) // wrapped at the top of the address space
      break;
  }
  return std::min(Readable, Max);
}

Status binaryPathOf(const void *Address, std::string &Path, uint64_t &Offset) {
  HMODULE Module = nullptr;
  if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                              GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          static_cast<LPCWSTR>(Address), &Module) ||
      !Module)
    return Status(KPACK_ERROR_PATH_DISCOVERY_FAILED,
                  "address is not in a loaded module: " + lastErrorMessage());
  std::vector<wchar_t> Name(MAX_PATH);
  for (;;) {
    DWORD N = GetModuleFileNameW(Module, Name.data(),
                                 static_cast<DWORD>(Name.size()));
    if (N == 0)
      return Status(KPACK_ERROR_PATH_DISCOVERY_FAILED,
                    "GetModuleFileNameW failed: " + lastErrorMessage());
    if (N < Name.size()) {
      Path = narrow(std::wstring_view(Name.data(), N));
      break;
    }
    if (Name.size() >= 32768)
      return Status(KPACK_ERROR_PATH_DISCOVERY_FAILED, "module name too long");
    Name.resize(Name.size() * 2);
  }
  // The offset in the loaded image (its RVA): a PE file's sections are not
  // mapped at their file offsets, and upstream reports no file offset here.
  Offset = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(Address) -
                                 reinterpret_cast<uintptr_t>(Module));
  return Status::ok();
}

Status canonicalPath(const std::string &Path, std::string &Canonical) {
  // A directory is opened too (FILE_FLAG_BACKUP_SEMANTICS), as realpath
  // resolves one; opening it as an archive then fails as IO_ERROR.
  HANDLE H = openForRead(Path, FILE_FLAG_BACKUP_SEMANTICS);
  if (H == INVALID_HANDLE_VALUE)
    return Status(KPACK_ERROR_FILE_NOT_FOUND,
                  "cannot resolve: " + lastErrorMessage());
  std::vector<wchar_t> Name(MAX_PATH);
  DWORD N = 0;
  for (;;) {
    N = GetFinalPathNameByHandleW(H, Name.data(),
                                  static_cast<DWORD>(Name.size()),
                                  FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    if (N == 0 || N < Name.size())
      break;
    Name.resize(N + 1);
  }
  const DWORD Err = GetLastError();
  CloseHandle(H);
  if (N == 0)
    return Status(KPACK_ERROR_FILE_NOT_FOUND,
                  "cannot resolve: " + messageOf(Err));
  std::wstring_view Final(Name.data(), N);
  // "\\?\C:\dir\file" -> "C:\dir\file"; "\\?\UNC\srv\x" -> "\\srv\x".
  if (Final.substr(0, 8) == L"\\\\?\\UNC\\")
    Canonical = "\\\\" + narrow(Final.substr(8));
  else if (Final.substr(0, 4) == L"\\\\?\\")
    Canonical = narrow(Final.substr(4));
  else
    Canonical = narrow(Final);
  return Status::ok();
}

bool isDirectory(const std::string &Path) {
  DWORD A = GetFileAttributesW(widen(Path).c_str());
  return A != INVALID_FILE_ATTRIBUTES && (A & FILE_ATTRIBUTE_DIRECTORY);
}

Status listDirectory(const std::string &Dir, std::vector<std::string> &Names) {
  WIN32_FIND_DATAW Found;
  HANDLE H = FindFirstFileW(widen(Dir + "\\*").c_str(), &Found);
  if (H == INVALID_HANDLE_VALUE) {
    const DWORD Err = GetLastError();
    return Status(isNotFound(Err) ? KPACK_ERROR_FILE_NOT_FOUND
                                  : KPACK_ERROR_IO_ERROR,
                  "cannot list '" + Dir + "': " + messageOf(Err));
  }
  do {
    std::string Name = narrow(Found.cFileName);
    if (Name != "." && Name != "..")
      Names.push_back(std::move(Name));
  } while (FindNextFileW(H, &Found));
  FindClose(H);
  return Status::ok();
}

FileIdentity FileIdentity::of(const std::string &Path) {
  FileIdentity S;
  HANDLE H = openForRead(Path, FILE_FLAG_BACKUP_SEMANTICS);
  if (H == INVALID_HANDLE_VALUE)
    return S;
  BY_HANDLE_FILE_INFORMATION Info;
  if (GetFileInformationByHandle(H, &Info)) {
    auto U64 = [](DWORD High, DWORD Low) {
      return (static_cast<uint64_t>(High) << 32) | Low;
    };
    S.Exists = true;
    S.Device = Info.dwVolumeSerialNumber;
    S.Inode = U64(Info.nFileIndexHigh, Info.nFileIndexLow);
    S.Size = U64(Info.nFileSizeHigh, Info.nFileSizeLow);
    // 100 ns ticks; the change time is not in this record: the creation
    // time stands in (a file renamed over the path has another one).
    const uint64_t Modified = U64(Info.ftLastWriteTime.dwHighDateTime,
                                  Info.ftLastWriteTime.dwLowDateTime);
    const uint64_t Created = U64(Info.ftCreationTime.dwHighDateTime,
                                 Info.ftCreationTime.dwLowDateTime);
    S.ModifiedSec = static_cast<int64_t>(Modified / 10000000);
    S.ModifiedNsec = static_cast<int64_t>(Modified % 10000000) * 100;
    S.ChangedSec = static_cast<int64_t>(Created / 10000000);
    S.ChangedNsec = static_cast<int64_t>(Created % 10000000) * 100;
  }
  CloseHandle(H);
  return S;
}

namespace {

/// The whole archive as a read-only view. Nothing is read at open: pages
/// come in as a read touches them.
class MappedFile final : public ReadOnlyFile {
public:
  MappedFile(HANDLE File, HANDLE Mapping, const unsigned char *View,
             uint64_t FileSize)
      : File(File), Mapping(Mapping), View(View) {
    Size = FileSize;
  }
  ~MappedFile() override {
    if (View)
      UnmapViewOfFile(View);
    if (Mapping)
      CloseHandle(Mapping);
    CloseHandle(File);
  }

  Status readAt(uint64_t Offset, void *Dest, size_t Length) const override {
    if (Offset > Size || Length > Size - Offset)
      return Status(KPACK_ERROR_INVALID_FORMAT, "read past end of file");
    if (Length)
      std::memcpy(Dest, View + Offset, Length);
    return Status::ok();
  }

private:
  HANDLE File;
  HANDLE Mapping;
  const unsigned char *View;
};

} // namespace

Status ReadOnlyFile::open(const std::string &Path,
                          std::unique_ptr<ReadOnlyFile> &Out) {
  // Only a disk file is an archive. CreateFileW does not wait on a named
  // pipe (\\.\pipe\..., busy or not) or a device (NUL, CON, COM1), unlike
  // POSIX open(2) on a FIFO, and GetFileType refuses them before anything
  // is read or mapped (WindowsRuntime.PipeAndDeviceAtASearchPath).
  HANDLE H = openForRead(Path);
  if (H == INVALID_HANDLE_VALUE) {
    const DWORD Err = GetLastError();
    return Status(isNotFound(Err) ? KPACK_ERROR_FILE_NOT_FOUND
                                  : KPACK_ERROR_IO_ERROR,
                  "cannot open '" + Path + "': " + messageOf(Err));
  }
  LARGE_INTEGER FileSize;
  if (GetFileType(H) != FILE_TYPE_DISK || !GetFileSizeEx(H, &FileSize) ||
      FileSize.QuadPart < 0 ||
      static_cast<uint64_t>(FileSize.QuadPart) > SIZE_MAX) {
    CloseHandle(H);
    return Status(KPACK_ERROR_IO_ERROR, "'" + Path + "' is not a regular file");
  }
  const uint64_t Bytes = static_cast<uint64_t>(FileSize.QuadPart);
  if (Bytes == 0) { // an empty file cannot be mapped; nothing to read anyway
    Out = std::make_unique<MappedFile>(H, nullptr, nullptr, 0);
    return Status::ok();
  }
  HANDLE Mapping =
      CreateFileMappingW(H, nullptr, PAGE_READONLY, 0, 0, nullptr);
  if (!Mapping) {
    Status E(KPACK_ERROR_IO_ERROR,
             "cannot map '" + Path + "': " + lastErrorMessage());
    CloseHandle(H);
    return E;
  }
  const void *View = MapViewOfFile(Mapping, FILE_MAP_READ, 0, 0, 0);
  if (!View) {
    Status E(KPACK_ERROR_IO_ERROR,
             "cannot map '" + Path + "': " + lastErrorMessage());
    CloseHandle(Mapping);
    CloseHandle(H);
    return E;
  }
  Out = std::make_unique<MappedFile>(
      H, Mapping, static_cast<const unsigned char *>(View), Bytes);
  return Status::ok();
}

void registerForkHandlers(void (*)(), void (*)(), void (*)()) {}

} // namespace kpack::platform

//===- kpack/ToolCommandLine.h - Command-line conventions ----*- C++ -*-===//
//
// What every tool of the toolchain (kpack and its subcommands, kpack-convert,
// ld.kpack, hipcc, kpack-ready, kpack-offload-wrapper) does the same way:
//   - errors are one line each, "<tool>: error: <message>", <tool> being
//     "kpack <subcommand>" for kpack;
//   - a usage error (a bad command line) is followed by one hint line,
//     "<tool>: run '<tool> --help' for usage", and exits with status 2;
//   - exit status 0 success, 1 failure, 2 usage error, stated at the end of
//     every --help (ExitStatusHelp);
//   - --version: "<tool> (rocm-kpack toolchain) <version>".
// llvm::cl's own diagnostics are rewritten into that form
// (parseToolCommandLine), so an option error reads like every other error.
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_TOOLCOMMANDLINE_H
#define KPACK_TOOLCOMMANDLINE_H

#include "kpack/Version.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

namespace kpack {

/// The exit statuses of every tool.
enum ToolExitStatus : int {
  ToolExitOk = 0,      ///< success
  ToolExitFailure = 1, ///< the work failed (or, for checkers, found problems)
  ToolExitUsage = 2,   ///< a bad command line: nothing was done
};

/// The last lines of every tool's --help.
inline constexpr const char *ExitStatusHelp =
    "\nEXIT STATUS: 0 success, 1 failure, 2 usage error (a bad command "
    "line; nothing done)\n";

/// Makes every llvm::cl --help of this process end with ExitStatusHelp.
inline void addExitStatusHelp() {
  static llvm::cl::extrahelp Help(ExitStatusHelp);
}

/// "<Tool> (rocm-kpack toolchain) <version>".
inline std::string toolVersion(llvm::StringRef Tool) {
  return (Tool + " (rocm-kpack toolchain) " KPACK_TOOLCHAIN_VERSION).str();
}

/// toolVersion(Tool), a line: what every tool's --version prints.
inline void printToolVersion(llvm::raw_ostream &OS, llvm::StringRef Tool) {
  OS << toolVersion(Tool) << "\n";
}

/// An error in how a tool was invoked: reported with the help hint, exit
/// status 2 (reportToolError).
class UsageError : public llvm::ErrorInfo<UsageError> {
public:
  inline static char ID = 0;
  explicit UsageError(std::string Message) : Message(std::move(Message)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string Message;
};

inline llvm::Error makeUsageError(const llvm::Twine &Message) {
  return llvm::make_error<UsageError>(Message.str());
}

/// E as a usage error (its messages kept); success stays success.
inline llvm::Error asUsageError(llvm::Error E) {
  if (!E)
    return E;
  return makeUsageError(llvm::toString(std::move(E)));
}

/// "<Tool>: run '<Tool> --help' for usage".
inline void printHelpHint(llvm::StringRef Tool) {
  llvm::errs() << Tool << ": run '" << Tool << " --help' for usage\n";
}

/// Prints "<Tool>: error: <message>" for every error in E, then the help
/// hint if one of them was a UsageError. Returns the exit status: 2 if one
/// was a usage error, else 1.
inline int reportToolError(llvm::StringRef Tool, llvm::Error E) {
  bool Usage = false;
  llvm::handleAllErrors(std::move(E), [&](const llvm::ErrorInfoBase &EI) {
    Usage |= EI.isA<UsageError>();
    llvm::WithColor::error(llvm::errs(), Tool) << EI.message() << "\n";
  });
  if (!Usage)
    return ToolExitFailure;
  printHelpHint(Tool);
  return ToolExitUsage;
}

/// Reports Message as a usage error; returns 2.
inline int reportUsageError(llvm::StringRef Tool, const llvm::Twine &Message) {
  return reportToolError(Tool, makeUsageError(Message));
}

namespace detail {

/// An llvm::cl sentence as a message: no "!" at the end, and the first
/// letter lowercase unless it starts an acronym.
inline std::string clSentence(llvm::StringRef S) {
  S = S.trim().rtrim('!').rtrim();
  std::string Out = S.str();
  if (Out.size() > 1 && std::isupper(static_cast<unsigned char>(Out[0])) &&
      std::islower(static_cast<unsigned char>(Out[1])))
    Out[0] =
        static_cast<char>(std::tolower(static_cast<unsigned char>(Out[0])));
  return Out;
}

/// "'abc' value invalid for uint argument" -> "'abc' is not an unsigned
/// integer"; anything else unchanged.
inline std::string clValueMessage(llvm::StringRef Msg) {
  size_t At = Msg.find("' value invalid for ");
  if (!Msg.starts_with("'") || At == llvm::StringRef::npos)
    return clSentence(Msg);
  llvm::StringRef Value = Msg.take_front(At + 1);
  llvm::StringRef Type = Msg.drop_front(At + 20).rtrim('!');
  Type.consume_back(" argument");
  const char *What = Type.starts_with("u")      ? "an unsigned integer"
                     : Type == "floating point" ? "a number"
                                                : "an integer";
  return (Value + " is not " + What).str();
}

/// The name in the first '...' of S, without leading dashes and "=value".
inline llvm::StringRef clQuotedName(llvm::StringRef S) {
  S = S.drop_until([](char C) { return C == '\''; }).drop_front();
  return S.take_until([](char C) { return C == '\''; })
      .ltrim('-')
      .split('=')
      .first;
}

} // namespace detail

/// What llvm::cl wrote while parsing a command line of ProgramName (argv[0]'s
/// file name, which llvm::cl puts before its messages), as messages in the
/// toolchain's form: one per diagnostic, "Did you mean" folded into the
/// message it belongs to (and dropped when the suggestion is far from what
/// was typed: llvm::cl always names the nearest option), cl's own "Try:
/// '... --help'" pointers dropped (the caller prints the help hint).
inline std::vector<std::string>
clDiagnosticMessages(llvm::StringRef Text, llvm::StringRef ProgramName) {
  using llvm::StringRef;
  llvm::SmallVector<StringRef, 8> Lines;
  Text.split(Lines, '\n', -1, /*KeepEmpty=*/false);
  std::vector<std::string> Out;
  std::string Prefix = (ProgramName + ": ").str();
  StringRef Unknown; // the name of the last unknown option or subcommand
  for (size_t I = 0; I < Lines.size(); ++I) {
    StringRef L = Lines[I].rtrim("\r");
    L.consume_front(Prefix);
    // "Unknown command line argument '-x'.  Try: 'kpack --help'"
    size_t Try = L.find(".  Try: '");
    if (Try != StringRef::npos)
      L = L.take_front(Try);
    if (L.starts_with("Did you mean ")) {
      // One edit in three characters typed, at most: "--jsn" suggests
      // "--json", "-x" does not suggest "-h".
      StringRef Suggested = detail::clQuotedName(L);
      if (!Out.empty() && !Unknown.empty() &&
          3 * Unknown.edit_distance(Suggested) <= Unknown.size())
        Out.back() +=
            "; did you mean " + L.drop_front(13).rtrim('?').str() + "?";
      continue;
    }
    Unknown = "";
    if (L.starts_with("Unknown "))
      Unknown = detail::clQuotedName(L);
    // "Not enough positional command line arguments specified!" / "Too many
    // positional arguments specified!", then "Must specify at least 1
    // positional argument: See: kpack --help".
    auto Counted = [&](StringRef Summary, StringRef Lead, StringRef What) {
      std::string Msg = Summary.str();
      // "at least 1 positional argument: See: ..." -> "at least 1"
      if (I + 1 < Lines.size() && Lines[I + 1].starts_with(Lead)) {
        StringRef Count = Lines[++I].drop_front(Lead.size());
        Count = Count.take_front(Count.find(" positional"));
        Msg += ": " + Count.str() + " " + What.str();
      }
      Out.push_back(Msg);
    };
    if (L.starts_with("Not enough positional")) {
      Counted("missing positional arguments", "Must specify ", "needed");
      continue;
    }
    if (L.starts_with("Too many positional")) {
      Counted("too many positional arguments", "Can specify ", "allowed");
      continue;
    }
    if (L.consume_front("Unknown command line argument ")) {
      Out.push_back((L.starts_with("'-") ? "unknown option " + L
                                         : "unexpected argument " + L)
                        .str());
      continue;
    }
    // "for the -o option: must be specified at least once!"
    if (L.consume_front("for the ")) {
      auto [Name, Msg] = L.split(" option: ");
      if (Msg.starts_with("must be specified at least once"))
        Out.push_back(("option '" + Name + "' is required").str());
      else if (Msg.starts_with("may only occur zero or one times"))
        Out.push_back(("option '" + Name + "' given more than once").str());
      else if (Msg.consume_front("Cannot find option named "))
        Out.push_back(
            ("option '" + Name + "': unknown value " + Msg.rtrim('!')).str());
      else
        Out.push_back(
            ("option '" + Name + "': " + detail::clValueMessage(Msg)).str());
      continue;
    }
    Out.push_back(detail::clSentence(L));
  }
  return Out;
}

namespace detail {

/// Runs Parse with the process's standard error going to a temporary file
/// and returns what was written there: llvm::cl writes some diagnostics to
/// the error stream ParseCommandLineOptions is given, others (an option's
/// own errors, cl::Option::error) to llvm::errs() always. If the redirection
/// cannot be made, Parse runs with standard error as it is and "" is
/// returned.
inline std::string captureStandardError(llvm::function_ref<void()> Parse) {
#ifdef _WIN32
  auto Dup = ::_dup;
  auto Dup2 = ::_dup2;
  auto Close = ::_close;
  auto FileNo = ::_fileno;
#else
  auto Dup = ::dup;
  auto Dup2 = ::dup2;
  auto Close = ::close;
  auto FileNo = ::fileno;
#endif
  llvm::errs().flush();
  std::FILE *Temp = std::tmpfile();
  int Saved = Temp ? Dup(2) : -1;
  if (Saved < 0 || Dup2(FileNo(Temp), 2) < 0) {
    if (Saved >= 0)
      Close(Saved);
    if (Temp)
      std::fclose(Temp);
    Parse();
    return "";
  }
  Parse();
  llvm::errs().flush();
  Dup2(Saved, 2);
  Close(Saved);
  std::string Text;
  std::rewind(Temp);
  char Buf[4096];
  for (size_t N; (N = std::fread(Buf, 1, sizeof(Buf), Temp)) > 0;)
    Text.append(Buf, N);
  std::fclose(Temp);
  return Text;
}

} // namespace detail

/// llvm::cl::ParseCommandLineOptions with its diagnostics in the toolchain's
/// form: on a bad command line every message is printed as "<tool>: error:
/// <message>", then the help hint, and false is returned (exit with
/// ToolExitUsage). ToolName() names the tool once the command line is
/// parsed, e.g. "kpack ls" from the subcommand llvm::cl selected.
inline bool parseToolCommandLine(int Argc, const char *const *Argv,
                                 llvm::StringRef Overview,
                                 llvm::function_ref<std::string()> ToolName) {
  bool Ok = false;
  std::string Text = detail::captureStandardError([&] {
    Ok = llvm::cl::ParseCommandLineOptions(Argc, Argv, Overview, &llvm::errs());
  });
  if (Ok) {
    llvm::errs() << Text; // anything llvm::cl said without failing
    return true;
  }
  std::string Tool = ToolName();
  std::vector<std::string> Messages =
      clDiagnosticMessages(Text, llvm::sys::path::filename(Argv[0]));
  if (Messages.empty())
    Messages.push_back("invalid command line");
  for (const std::string &M : Messages)
    llvm::WithColor::error(llvm::errs(), Tool) << M << "\n";
  printHelpHint(Tool);
  return false;
}

} // namespace kpack

#endif

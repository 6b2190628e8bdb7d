//===- Doctor.h - kpack doctor: shared between its files --------*- C++ -*-===//
//
// `kpack doctor` (docs/doctor.md): for every HIP binary of an install and
// every GPU, which code object it loads and why, or why none and what to
// install. Doctor.cpp evaluates and prints, DoctorInputs.cpp finds the
// binaries (files, trees, installed distributions), DoctorRemedy.cpp reads
// installed Python distributions for the remedies. The archive choice is the
// runtime's own (LoaderCache and its account, kpack/Resolution.h).
//
//===----------------------------------------------------------------------===//
#ifndef KPACK_UTILS_KPACK_DOCTOR_H
#define KPACK_UTILS_KPACK_DOCTOR_H

#include "kpack/AtomicFile.h"
#include "kpack/Resolution.h"
#include "kpack/TargetId.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kpack {
namespace doctor {

/// A file to examine: found in a walk, named on the command line, or listed
/// in an installed distribution's RECORD.
struct Candidate {
  std::string Path;  ///< absolute, as found (the tree's spelling)
  bool Named = false; ///< named on the command line: report even if no HIP
};

/// A symbolic link a walk did not follow because it leads out of the tree.
struct NotFollowed {
  std::string Link, Target;
};

/// What collecting the inputs made: the links not followed, and the
/// scratch trees wheels were extracted into (removed at exit, and on
/// SIGINT, SIGTERM, SIGHUP) with the spelling each stands for in the output
/// ("<scratch>/" -> "<wheel>:").
struct InputContext {
  std::vector<std::string> Args; ///< every PATH argument
  std::vector<NotFollowed> Skipped;
  OutputDirectories Scratch;
  /// The scratch site-packages every wheel argument is extracted into, as
  /// pip would install them together, and the wheels.
  std::string WheelSite;
  std::vector<std::string> Wheels;
  std::vector<std::pair<std::string, std::string>> Display;
};

/// Finds the files to examine for one PATH argument: a file, a directory
/// (walked without following symbolic links; links out of the tree go to
/// Ctx.Skipped), a wheel (its host images, archives and .dist-info files
/// extracted into a scratch tree, examined as a site-packages directory),
/// or the name of an installed Python distribution (its RECORD's files, in
/// the site-packages directories of `python3` and of the directories among
/// Ctx.Args). Errors name the argument.
llvm::Error collectInputs(llvm::StringRef Arg, InputContext &Ctx,
                          std::vector<Candidate> &Out);

/// Is Head (the first bytes of a file) an x86-64 ELF or PE host image?
bool looksLikeHostImage(llvm::StringRef Head);

/// An installed distribution whose device extra for a GPU is installed in
/// part only (a family wheel missing: the code objects may all load, but
/// the kernel databases it ships are gone).
struct ExtraProblem {
  std::string Site, Distribution, Extra;
  std::vector<std::string> Installed; ///< the extra's distributions present
  std::vector<std::string> Missing;   ///< and those absent ("name (what)")
  std::string Remedy;
};

/// What can be installed to make a binary load, from the installed Python
/// distributions around it (site-packages: *.dist-info METADATA and
/// RECORD). One index per process; thread-safe.
class WheelIndex {
public:
  WheelIndex();
  ~WheelIndex();
  /// Remedies for Binary (its canonical path) on Gpu when the code objects
  /// in Missing (the candidate target IDs tried, most specific first) were
  /// not found: "pip install 'pkg[device-gfx942]'" and the like, with the
  /// reason. Empty when Binary belongs to no installed distribution.
  std::vector<std::string> remedies(const std::string &Binary,
                                    const TargetId &Gpu,
                                    const std::vector<std::string> &Missing);
  /// The installed distribution Binary belongs to ("" if none).
  std::string owner(const std::string &Binary);
  /// The distributions owning Binaries whose extra for Gpu
  /// ("device-<processor>") is partly installed.
  std::vector<ExtraProblem>
  incompleteExtras(const TargetId &Gpu,
                   const std::vector<std::string> &Binaries);

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace doctor
} // namespace kpack

#endif

//===- TestFiles.cpp - File helpers of the unit tests ---------------------===//

#include "TestFiles.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

std::vector<uint8_t> kpack::test::readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(In), {});
}

void kpack::test::writeFile(const std::string &Path,
                            const std::vector<uint8_t> &Bytes) {
  std::ofstream Out(Path, std::ios::binary);
  Out.write(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
}

std::string kpack::test::makeTempDir() {
  const char *Base = std::getenv("TMPDIR");
  std::string Template = std::string(Base ? Base : "/tmp") + "/kpackfmt.XXXXXX";
  std::vector<char> Buf(Template.begin(), Template.end());
  Buf.push_back('\0');
  if (!mkdtemp(Buf.data()))
    return "";
  return Buf.data();
}

void kpack::test::TempDirTest::TearDown() {
  std::string Cmd = "rm -rf '" + Dir + "'";
  (void)std::system(Cmd.c_str());
}

#include <cstdio>
#include <string>
int main(int argc, char **) {
  std::string s = "plain";
  std::printf("%s %d\n", s.c_str(), argc);
  return 0;
}

#include <cstdio>
extern "C" const char *greeting(void);
int main() {
  std::printf("%s and C++\n", greeting());
  return 0;
}

// reloc.exe: imports reloc.dll (whose preferred ImageBase is this EXE's
// own), prints where the loader put both, then runs the DLL's kernels.
#include <stdio.h>
#include <windows.h>
int run_a(float *);
int run_b(int *);
int main(void) {
  printf("reloc.exe at 0x%llx\n", (unsigned long long)(UINT_PTR)GetModuleHandleA(NULL));
  printf("reloc.dll at 0x%llx\n", (unsigned long long)(UINT_PTR)GetModuleHandleA("reloc.dll"));
  fflush(stdout);
  float f = 1;
  int i = 1;
  return run_a(&f) + run_b(&i) == 3 ? 0 : 1;
}

// The MSVC-style test program's C runtime, enough for a HIP program linked
// with lld-link /nodefaultlib: it runs the .CRT$XCU constructors (the HIP
// registration) and the atexit handlers (the unregistration), then exits.
#pragma section(".CRT$XCA", read)
#pragma section(".CRT$XCZ", read)
typedef void (*Fn)(void);
__declspec(allocate(".CRT$XCA")) Fn StartCtors = 0;
__declspec(allocate(".CRT$XCZ")) Fn EndCtors = 0;
__declspec(dllimport) void __stdcall ExitProcess(unsigned);
int main(void);
int _fltused;
static Fn AtExit[64];
static int NumAtExit;
int atexit(Fn F) {
  if (NumAtExit == 64)
    return -1;
  AtExit[NumAtExit++] = F;
  return 0;
}
void mainCRTStartup(void) {
  for (Fn *P = &StartCtors + 1; P < &EndCtors; ++P)
    if (*P)
      (*P)();
  int R = main();
  while (NumAtExit)
    AtExit[--NumAtExit]();
  ExitProcess((unsigned)R);
}

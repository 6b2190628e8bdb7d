// libfoo, TU c: a template kernel instantiated twice.
#include "demo.h"
template <typename T> __global__ void fooFill(T *P) { P[0] = T(3); }
extern "C" int foo_c() {
  return LAUNCH(fooFill<int>) + LAUNCH(fooFill<double>);
}

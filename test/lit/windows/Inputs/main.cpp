extern "C" int run_a(float *);
extern "C" int run_b(int *);
int main() {
  float f = 1;
  int i = 1;
  return run_a(&f) + run_b(&i) == 3 ? 0 : 1;
}

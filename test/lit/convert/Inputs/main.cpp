// Calls the kernels of tu_a/tu_b/tu_c.hip.
void launch_a();
void launch_b();
void launch_c();
int main() {
  launch_a();
  launch_b();
  launch_c();
  return 0;
}

// Calls the kernel of tu_b.hip only (the single-TU "tiny" variant).
void launch_b();
int main() {
  launch_b();
  return 0;
}

// A shared library without device code (most of a real wheel's libraries):
// the split copies it unchanged.
extern "C" int pkg_plain_answer() { return 42; }

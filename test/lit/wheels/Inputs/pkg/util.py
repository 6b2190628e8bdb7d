"""Pure-Python module of the test package (kept unchanged by the split)."""
ANSWER = 42

const char *greeting(void) { return "hello from C"; }

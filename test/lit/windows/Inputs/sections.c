// Ten data sections of their own: with them the section table of the
// mingw test program fills its headers (test/lit/windows/header-growth.test).
// __attribute__((used)) keeps them through lld's --gc-sections.
__attribute__((used, section(".xs0"))) int xs0 = 1;
__attribute__((used, section(".xs1"))) int xs1 = 2;
__attribute__((used, section(".xs2"))) int xs2 = 3;
__attribute__((used, section(".xs3"))) int xs3 = 4;
__attribute__((used, section(".xs4"))) int xs4 = 5;
__attribute__((used, section(".xs5"))) int xs5 = 6;
__attribute__((used, section(".xs6"))) int xs6 = 7;
__attribute__((used, section(".xs7"))) int xs7 = 8;
__attribute__((used, section(".xs8"))) int xs8 = 9;
__attribute__((used, section(".xs9"))) int xs9 = 10;

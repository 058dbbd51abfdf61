#include "cs_platform.h"
#include "cs_test.h"
int main(void) { return cs_test_finish(); }

/* No directive: copied as is. */
#include <stdio.h>
#pragma once
int main(void) { puts("#pragma omp parallel"); return 0; }

/* expect: 3:27: error: expected '(variable, ...)' after 'omp threadprivate' */
int counter;
#pragma omp threadprivate counter
int main(void) { return counter; }

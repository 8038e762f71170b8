/* expect: 3:26: error: expected '(variable, ...)' after 'omp threadprivate' */
int counter, other;
#pragma omp threadprivate(counter other)
int main(void) { return counter + other; }

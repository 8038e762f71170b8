/* expect: 3:13: error: 'omp threadprivate' is not supported by CAPE: not supported yet, see issue 6 */
int counter;
#pragma omp threadprivate(counter)
int main(void) { return counter; }

/* A critical section writing the caller's variable through a pointer, in another file. */
void add_to(long *sum, long v) {
#pragma omp critical
  *sum += v;
}

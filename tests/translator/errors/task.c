/* expect: 5:15: error: 'omp task' is not supported by CAPE: tasks need a shared task pool */
void work(void);
int main(void) {
#pragma omp parallel
  #pragma omp task
  work();
  return 0;
}

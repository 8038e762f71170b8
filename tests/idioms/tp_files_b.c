static int tp = 5;
#pragma omp threadprivate(tp)
void add(int v) { tp += v; }
int get(void) { return tp; }
int tick(void) {
  static int calls = 100;
#pragma omp threadprivate(calls)
  return ++calls;
}

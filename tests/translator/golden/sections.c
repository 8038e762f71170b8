void p1(void);
void p2(void);
void p3(void);
void run(void) {
#pragma omp parallel sections
  {
#pragma omp section
    p1();
#pragma omp section
    {
      p2();
      p3();
    }
  }
}

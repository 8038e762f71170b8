/* Which critical bodies tell their writes (cape_critical_enter_writes: no capture at the entry,
 * docs/critical.md "Bodies with known writes") and which are captured whole. */
struct pt {
  unsigned flag : 1;
  long v;
  struct pt *next;
};
long total, best, where, hist[8], n, list[64];
struct pt one, *head;
long f(long);

void work(int t, long *out, struct pt *p, int i) {
#pragma omp parallel
  {
    /* known: a variable, an element, a bit-field (its struct), through pointers, an if/else */
#pragma omp critical
    total += t;
#pragma omp critical
    hist[t % 8]++;
#pragma omp critical
    one.flag = 1;
#pragma omp critical
    *out += t;
#pragma omp critical
    {
      p->next = head;
      head = p;
    }
#pragma omp critical
    if (t < best || (t == best && i < where)) {
      best = t;
      where = i;
    } else
      ;
    /* captured whole: a call, an index the body writes, ++ inside, two writes through
     * pointers, a declaration, a nested construct */
#pragma omp critical
    total += f(t);
#pragma omp critical
    {
      list[n % 64] = t;
      n++;
    }
#pragma omp critical
    list[n++] = t;
#pragma omp critical
    {
      p->v = 1;
      out[1] = 2;
    }
    /* a plain target may be what a deeper address reads: captured whole; alone, known */
#pragma omp critical
    {
      one.next = p;
      head->next->v = 1;
    }
#pragma omp critical
    head->next->v = 2;
#pragma omp critical
    hist[list[i]] += 1;
#pragma omp critical
    {
      long k = t * 2;
      total += k;
    }
#pragma omp critical(outer)
    {
#pragma omp critical(inner)
      total++;
    }
    /* atomics through the lock service: the location first (it names the lock), then the
     * statement's targets; `v = x++` is captured whole (++ inside an expression) */
    long v;
#pragma omp atomic update
    hist[i % 8] += 2;
#pragma omp atomic read
    v = best;
#pragma omp atomic capture
    v = n++;
    total += v;
  }
}

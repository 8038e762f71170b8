struct cell {
  struct cell *next;
  long v;
};
void lib_print(int round);
struct cell *lib_list_in_single(int n);
long lib_local(long k);
struct cell *lib_cell(long v, struct cell *next);
long lib_walk(const struct cell *c);

/* No OpenMP at all: cape-cc must give the program gcc gives. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  char buf[64];
  const char *s = "#pragma omp parallel for is only text here";
  strncpy(buf, s, sizeof buf - 1);
  buf[sizeof buf - 1] = 0;
  unsigned h = 5381;
  for (size_t i = 0; i < strlen(buf); i++) h = h * 33 + (unsigned char)buf[i];
  printf("noomp %u args %d\n", h, argc);
  return 0;
}

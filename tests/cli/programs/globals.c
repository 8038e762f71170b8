/* Prints the addresses of its globals; run without address randomisation (setarch -R),
 * they are where `cape ckpt dump --elf` must find them. */
#include <stdio.h>

double matrix_a[64];
long counter = 7;
static char message[40] = "hello";

int main(void) {
  printf("%p %p %p %p\n", (void *)matrix_a, (void *)&counter, (void *)message, (void *)main);
  return message[0] == 'h' ? 0 : 1;
}

/* Rodinia-like backprop: one layer forward, the output error, the hidden layer's weights adjusted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#define IN 2048
#define HID 32
static double w[IN + 1][HID + 1], dw[IN + 1][HID + 1], in[IN + 1], hid[HID + 1], hdelta[HID + 1];
int main(void) {
  unsigned s = 3;
  for (int i = 0; i <= IN; i++) {
    s = s * 1103515245u + 12345u; in[i] = (s >> 16) % 1000 / 1000.0;
    for (int j = 0; j <= HID; j++) { s = s * 1103515245u + 12345u; w[i][j] = ((int)((s >> 16) % 2000) - 1000) / 20000.0; }
  }
  in[0] = 1.0;
  for (int epoch = 0; epoch < 3; epoch++) {
#pragma omp parallel for
    for (int j = 1; j <= HID; j++) {
      double sum = 0;
      for (int i = 0; i <= IN; i++) sum += w[i][j] * in[i];
      hid[j] = 1.0 / (1.0 + exp(-sum));
    }
    for (int j = 1; j <= HID; j++) hdelta[j] = hid[j] * (1 - hid[j]) * (0.5 - hid[j]);
#pragma omp parallel for
    for (int i = 0; i <= IN; i++)
      for (int j = 1; j <= HID; j++) {
        double nd = 0.3 * hdelta[j] * in[i] + 0.3 * dw[i][j];
        w[i][j] += nd; dw[i][j] = nd;
      }
    double err = 0;
    for (int j = 1; j <= HID; j++) err += fabs(hdelta[j]);
    printf("backprop epoch %d: hidden[1] %.6g hidden[%d] %.6g error %.6g\n", epoch, hid[1], HID, hid[HID], err);
  }
  return 0;
}

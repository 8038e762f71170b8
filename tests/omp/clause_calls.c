/* Clause calls in many small regions, and more of them in one region than one trap carries
 * (issue 14, session 11: libcape defers each clause call onto the region's start() trap,
 * up to CAPE_MAX_DEFERRED_CALLS = 128 per trap; runtime/src/protocol.h). Reductions (+, max,
 * a pi sum), private, firstprivate, lastprivate and shared locals in every region; then one
 * `parallel for` with 120 reduction variables and 10 shared locals (131 deferred calls with
 * the region's begin: the list fills, a trap carries 128 and the rest ride on start(); 120:
 * --model=cape1, which runs this corpus too, takes at most 128 reductions per region); then sections with lastprivate (cape_set_order).
 * (cape_critical_shared rides the same way: tests/critical; --model=cape1 runs this corpus and
 * refuses `critical`.)
 * e2e-tolerance: 1e-12  (the pi sums depend on the order partial results are combined) */
#include <omp.h>
#include <stdio.h>

#define N 3000

int main(void) {
  int v[64];
  long total = 0, lastsum = 0;
  double pi = 0;
  for (int k = 0; k < 64; k++) v[k] = k;
  for (int r = 0; r < 40; r++) {
    long s = 0, m = -1000000, t = 0;
    int f = r * 3, l = -1, i;
    double h = 0, step = 1.0 / N;
#pragma omp parallel for reduction(+: s, h) reduction(max: m) private(t) firstprivate(f) lastprivate(l) shared(v)
    for (i = 0; i < N; i++) {
      double x = (i + 0.5) * step;
      t = (long)i * v[i % 64] + f;
      s += t;
      if (t % 1009 > m) m = t % 1009;
      h += 4.0 / (1.0 + x * x);
      l = i + f;
    }
    v[r % 64] += (int)(s % 7);
    total += s + m;
    lastsum += l;
    pi += h * step;
  }
  printf("regions: total %ld last %ld pi %.12f v %d %d\n", total, lastsum, pi / 40, v[0], v[39]);

  long r0 = 0, r1 = 1, r2 = 2, r3 = 3, r4 = 4, r5 = 5, r6 = 6, r7 = 7, r8 = 8, r9 = 9, r10 = 10, r11 =
       11, r12 = 12, r13 = 13, r14 = 14, r15 = 15, r16 = 16, r17 = 17, r18 = 18, r19 = 19, r20 = 20,
       r21 = 21, r22 = 22, r23 = 23, r24 = 24, r25 = 25, r26 = 26, r27 = 27, r28 = 28, r29 = 29, r30 =
       30, r31 = 31, r32 = 32, r33 = 33, r34 = 34, r35 = 35, r36 = 36, r37 = 37, r38 = 38, r39 = 39,
       r40 = 40, r41 = 41, r42 = 42, r43 = 43, r44 = 44, r45 = 45, r46 = 46, r47 = 47, r48 = 48, r49 =
       49, r50 = 50, r51 = 51, r52 = 52, r53 = 53, r54 = 54, r55 = 55, r56 = 56, r57 = 57, r58 = 58,
       r59 = 59, r60 = 60, r61 = 61, r62 = 62, r63 = 63, r64 = 64, r65 = 65, r66 = 66, r67 = 67, r68 =
       68, r69 = 69, r70 = 70, r71 = 71, r72 = 72, r73 = 73, r74 = 74, r75 = 75, r76 = 76, r77 = 77,
       r78 = 78, r79 = 79, r80 = 80, r81 = 81, r82 = 82, r83 = 83, r84 = 84, r85 = 85, r86 = 86, r87 =
       87, r88 = 88, r89 = 89, r90 = 90, r91 = 91, r92 = 92, r93 = 93, r94 = 94, r95 = 95, r96 = 96,
       r97 = 97, r98 = 98, r99 = 99, r100 = 100, r101 = 101, r102 = 102, r103 = 103, r104 = 104, r105 =
       105, r106 = 106, r107 = 107, r108 = 108, r109 = 109, r110 = 110, r111 = 111, r112 = 112, r113 =
       113, r114 = 114, r115 = 115, r116 = 116, r117 = 117, r118 = 118, r119 = 119;
  long q0 = 2, q1 = 3, q2 = 4, q3 = 5, q4 = 6, q5 = 7, q6 = 8, q7 = 9, q8 = 10, q9 = 11;
  int i;
#pragma omp parallel for reduction(+: r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15, r16, r17, r18, r19, \
    r20, r21, r22, r23, r24, r25, r26, r27, r28, r29, r30, r31, r32, r33, r34, r35, r36, r37, \
    r38, r39, r40, r41, r42, r43, r44, r45, r46, r47, r48, r49, r50, r51, r52, r53, r54, r55, \
    r56, r57, r58, r59, r60, r61, r62, r63, r64, r65, r66, r67, r68, r69, r70, r71, r72, r73, \
    r74, r75, r76, r77, r78, r79, r80, r81, r82, r83, r84, r85, r86, r87, r88, r89, r90, r91, \
    r92, r93, r94, r95, r96, r97, r98, r99, r100, r101, r102, r103, r104, r105, r106, r107, \
    r108, r109, r110, r111, r112, r113, r114, r115, r116, r117, r118, r119) \
    shared(q0, q1, q2, q3, q4, q5, q6, q7, q8, q9)
  for (i = 0; i < N; i++) {
    r0 += i * q0;
    r1 += i * q1;
    r2 += i * q2;
    r3 += i * q3;
    r4 += i * q4;
    r5 += i * q5;
    r6 += i * q6;
    r7 += i * q7;
    r8 += i * q8;
    r9 += i * q9;
    r10 += i * q0;
    r11 += i * q1;
    r12 += i * q2;
    r13 += i * q3;
    r14 += i * q4;
    r15 += i * q5;
    r16 += i * q6;
    r17 += i * q7;
    r18 += i * q8;
    r19 += i * q9;
    r20 += i * q0;
    r21 += i * q1;
    r22 += i * q2;
    r23 += i * q3;
    r24 += i * q4;
    r25 += i * q5;
    r26 += i * q6;
    r27 += i * q7;
    r28 += i * q8;
    r29 += i * q9;
    r30 += i * q0;
    r31 += i * q1;
    r32 += i * q2;
    r33 += i * q3;
    r34 += i * q4;
    r35 += i * q5;
    r36 += i * q6;
    r37 += i * q7;
    r38 += i * q8;
    r39 += i * q9;
    r40 += i * q0;
    r41 += i * q1;
    r42 += i * q2;
    r43 += i * q3;
    r44 += i * q4;
    r45 += i * q5;
    r46 += i * q6;
    r47 += i * q7;
    r48 += i * q8;
    r49 += i * q9;
    r50 += i * q0;
    r51 += i * q1;
    r52 += i * q2;
    r53 += i * q3;
    r54 += i * q4;
    r55 += i * q5;
    r56 += i * q6;
    r57 += i * q7;
    r58 += i * q8;
    r59 += i * q9;
    r60 += i * q0;
    r61 += i * q1;
    r62 += i * q2;
    r63 += i * q3;
    r64 += i * q4;
    r65 += i * q5;
    r66 += i * q6;
    r67 += i * q7;
    r68 += i * q8;
    r69 += i * q9;
    r70 += i * q0;
    r71 += i * q1;
    r72 += i * q2;
    r73 += i * q3;
    r74 += i * q4;
    r75 += i * q5;
    r76 += i * q6;
    r77 += i * q7;
    r78 += i * q8;
    r79 += i * q9;
    r80 += i * q0;
    r81 += i * q1;
    r82 += i * q2;
    r83 += i * q3;
    r84 += i * q4;
    r85 += i * q5;
    r86 += i * q6;
    r87 += i * q7;
    r88 += i * q8;
    r89 += i * q9;
    r90 += i * q0;
    r91 += i * q1;
    r92 += i * q2;
    r93 += i * q3;
    r94 += i * q4;
    r95 += i * q5;
    r96 += i * q6;
    r97 += i * q7;
    r98 += i * q8;
    r99 += i * q9;
    r100 += i * q0;
    r101 += i * q1;
    r102 += i * q2;
    r103 += i * q3;
    r104 += i * q4;
    r105 += i * q5;
    r106 += i * q6;
    r107 += i * q7;
    r108 += i * q8;
    r109 += i * q9;
    r110 += i * q0;
    r111 += i * q1;
    r112 += i * q2;
    r113 += i * q3;
    r114 += i * q4;
    r115 += i * q5;
    r116 += i * q6;
    r117 += i * q7;
    r118 += i * q8;
    r119 += i * q9;
  }
  unsigned long all = 0;
  all = all * 31 + (unsigned long)r0;
  all = all * 31 + (unsigned long)r1;
  all = all * 31 + (unsigned long)r2;
  all = all * 31 + (unsigned long)r3;
  all = all * 31 + (unsigned long)r4;
  all = all * 31 + (unsigned long)r5;
  all = all * 31 + (unsigned long)r6;
  all = all * 31 + (unsigned long)r7;
  all = all * 31 + (unsigned long)r8;
  all = all * 31 + (unsigned long)r9;
  all = all * 31 + (unsigned long)r10;
  all = all * 31 + (unsigned long)r11;
  all = all * 31 + (unsigned long)r12;
  all = all * 31 + (unsigned long)r13;
  all = all * 31 + (unsigned long)r14;
  all = all * 31 + (unsigned long)r15;
  all = all * 31 + (unsigned long)r16;
  all = all * 31 + (unsigned long)r17;
  all = all * 31 + (unsigned long)r18;
  all = all * 31 + (unsigned long)r19;
  all = all * 31 + (unsigned long)r20;
  all = all * 31 + (unsigned long)r21;
  all = all * 31 + (unsigned long)r22;
  all = all * 31 + (unsigned long)r23;
  all = all * 31 + (unsigned long)r24;
  all = all * 31 + (unsigned long)r25;
  all = all * 31 + (unsigned long)r26;
  all = all * 31 + (unsigned long)r27;
  all = all * 31 + (unsigned long)r28;
  all = all * 31 + (unsigned long)r29;
  all = all * 31 + (unsigned long)r30;
  all = all * 31 + (unsigned long)r31;
  all = all * 31 + (unsigned long)r32;
  all = all * 31 + (unsigned long)r33;
  all = all * 31 + (unsigned long)r34;
  all = all * 31 + (unsigned long)r35;
  all = all * 31 + (unsigned long)r36;
  all = all * 31 + (unsigned long)r37;
  all = all * 31 + (unsigned long)r38;
  all = all * 31 + (unsigned long)r39;
  all = all * 31 + (unsigned long)r40;
  all = all * 31 + (unsigned long)r41;
  all = all * 31 + (unsigned long)r42;
  all = all * 31 + (unsigned long)r43;
  all = all * 31 + (unsigned long)r44;
  all = all * 31 + (unsigned long)r45;
  all = all * 31 + (unsigned long)r46;
  all = all * 31 + (unsigned long)r47;
  all = all * 31 + (unsigned long)r48;
  all = all * 31 + (unsigned long)r49;
  all = all * 31 + (unsigned long)r50;
  all = all * 31 + (unsigned long)r51;
  all = all * 31 + (unsigned long)r52;
  all = all * 31 + (unsigned long)r53;
  all = all * 31 + (unsigned long)r54;
  all = all * 31 + (unsigned long)r55;
  all = all * 31 + (unsigned long)r56;
  all = all * 31 + (unsigned long)r57;
  all = all * 31 + (unsigned long)r58;
  all = all * 31 + (unsigned long)r59;
  all = all * 31 + (unsigned long)r60;
  all = all * 31 + (unsigned long)r61;
  all = all * 31 + (unsigned long)r62;
  all = all * 31 + (unsigned long)r63;
  all = all * 31 + (unsigned long)r64;
  all = all * 31 + (unsigned long)r65;
  all = all * 31 + (unsigned long)r66;
  all = all * 31 + (unsigned long)r67;
  all = all * 31 + (unsigned long)r68;
  all = all * 31 + (unsigned long)r69;
  all = all * 31 + (unsigned long)r70;
  all = all * 31 + (unsigned long)r71;
  all = all * 31 + (unsigned long)r72;
  all = all * 31 + (unsigned long)r73;
  all = all * 31 + (unsigned long)r74;
  all = all * 31 + (unsigned long)r75;
  all = all * 31 + (unsigned long)r76;
  all = all * 31 + (unsigned long)r77;
  all = all * 31 + (unsigned long)r78;
  all = all * 31 + (unsigned long)r79;
  all = all * 31 + (unsigned long)r80;
  all = all * 31 + (unsigned long)r81;
  all = all * 31 + (unsigned long)r82;
  all = all * 31 + (unsigned long)r83;
  all = all * 31 + (unsigned long)r84;
  all = all * 31 + (unsigned long)r85;
  all = all * 31 + (unsigned long)r86;
  all = all * 31 + (unsigned long)r87;
  all = all * 31 + (unsigned long)r88;
  all = all * 31 + (unsigned long)r89;
  all = all * 31 + (unsigned long)r90;
  all = all * 31 + (unsigned long)r91;
  all = all * 31 + (unsigned long)r92;
  all = all * 31 + (unsigned long)r93;
  all = all * 31 + (unsigned long)r94;
  all = all * 31 + (unsigned long)r95;
  all = all * 31 + (unsigned long)r96;
  all = all * 31 + (unsigned long)r97;
  all = all * 31 + (unsigned long)r98;
  all = all * 31 + (unsigned long)r99;
  all = all * 31 + (unsigned long)r100;
  all = all * 31 + (unsigned long)r101;
  all = all * 31 + (unsigned long)r102;
  all = all * 31 + (unsigned long)r103;
  all = all * 31 + (unsigned long)r104;
  all = all * 31 + (unsigned long)r105;
  all = all * 31 + (unsigned long)r106;
  all = all * 31 + (unsigned long)r107;
  all = all * 31 + (unsigned long)r108;
  all = all * 31 + (unsigned long)r109;
  all = all * 31 + (unsigned long)r110;
  all = all * 31 + (unsigned long)r111;
  all = all * 31 + (unsigned long)r112;
  all = all * 31 + (unsigned long)r113;
  all = all * 31 + (unsigned long)r114;
  all = all * 31 + (unsigned long)r115;
  all = all * 31 + (unsigned long)r116;
  all = all * 31 + (unsigned long)r117;
  all = all * 31 + (unsigned long)r118;
  all = all * 31 + (unsigned long)r119;
  printf("120 reductions: %ld %ld %lu\n", r0, r119, all);

  int who = -1;
#pragma omp parallel sections lastprivate(who)
  {
#pragma omp section
    who = 1;
#pragma omp section
    who = 2;
#pragma omp section
    who = 3;
  }
  printf("lastprivate section %d\n", who);
  return 0;
}

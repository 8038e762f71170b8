/* The shape of NPB CG (conj_grad and the norms of its main loop, issue 12): one parallel
 * region per call with worksharing loops over a sparse matrix in CSR form, reductions into
 * shared doubles (rho, d, sum), a master block and barriers inside a sequential loop of the
 * region, private scalars (suml, alpha, beta), arrays passed as parameters. NPB CG under
 * --ckpt=tickpt logged `wait_for("after"): 1 ranges written differently` on a stack word per
 * slave; the e2e test runs this with --strict, which fails on such a message.
 * e2e-tolerance: 1e-9 */
#include <math.h>
#include <omp.h>
#include <stdio.h>

#define NA 300
#define NZ_PER_ROW 7
#define NZ (NA * NZ_PER_ROW)
#define CGITMAX 4
#define NITER 15

static int naa = NA, firstrow = 0, lastrow = NA - 1, firstcol = 0, lastcol = NA - 1;
static int colidx[NZ], rowstr[NA + 1];
static double a[NZ], x[NA + 2], z[NA + 2], p[NA + 2], q[NA + 2], r[NA + 2], w[NA + 2];

/* A symmetric, diagonally dominant matrix with a deterministic pattern. */
static void makea(void) {
  unsigned seed = 12345;
  int k = 0;
  for (int i = 0; i < NA; i++) {
    rowstr[i] = k;
    colidx[k] = i;
    a[k++] = 2.0 + i % 5;
    for (int m = 1; m < NZ_PER_ROW; m++) {
      seed = seed * 1103515245u + 12345u;
      int j = (int)((i + 1 + (seed >> 16) % (NA - 1)) % NA);
      colidx[k] = j;
      a[k++] = ((double)((seed >> 8) % 1000) / 1000.0 - 0.5) * 0.5;
    }
  }
  rowstr[NA] = k;
}

/* As NPB2.3-omp-C's CG: conj_grad is orphaned (called from the region in main), its
 * scalars static, its loops worksharing constructs with single and nowait between them.
 * NPB declares the scalars static inside conj_grad; under TICKPT such block-scope statics
 * of a function called from a region are not registered shared (only file-scope ones are:
 * docs/translator.md, Limits), so they are at file scope here. */
static double d, sum, rho, rho0, alpha, beta;

static void conj_grad(int colidx[], int rowstr[], double x[], double z[], double a[], double p[], double q[],
                      double r[], double w[], double *rnorm) {
  int j, k;
  int cgit, cgitmax = CGITMAX;

  /* NPB has `single nowait` here, a race with the reduction below (a thread may add its
     partial sum before rho is cleared), which makes even gcc's result vary. */
#pragma omp single
  rho = 0.0;
#pragma omp for nowait
  for (j = 0; j < naa + 1; j++) {
    q[j] = 0.0;
    z[j] = 0.0;
    r[j] = x[j];
    p[j] = r[j];
    w[j] = 0.0;
  }
#pragma omp for reduction(+ : rho)
  for (j = 0; j < lastcol - firstcol + 1; j++) rho = rho + x[j] * x[j];

  for (cgit = 1; cgit <= cgitmax; cgit++) {
    /* NPB: `single nowait`, a race with the matrix-vector product below, which reads
       elements of p that other threads may still be writing. */
#pragma omp single
    {
      rho0 = rho;
      d = 0.0;
      rho = 0.0;
    }
#pragma omp for private(sum, k)
    for (j = 0; j < lastrow - firstrow + 1; j++) {
      sum = 0.0;
      for (k = rowstr[j]; k < rowstr[j + 1]; k++) sum = sum + a[k] * p[colidx[k]];
      w[j] = sum;
    }
#pragma omp for nowait
    for (j = 0; j < lastcol - firstcol + 1; j++) q[j] = w[j];
#pragma omp for nowait
    for (j = 0; j < lastcol - firstcol + 1; j++) w[j] = 0.0;
#pragma omp for reduction(+ : d)
    for (j = 0; j < lastcol - firstcol + 1; j++) d = d + p[j] * q[j];
#pragma omp single
    alpha = rho0 / d;
#pragma omp for nowait
    for (j = 0; j < lastcol - firstcol + 1; j++) {
      z[j] = z[j] + alpha * p[j];
      r[j] = r[j] - alpha * q[j];
    }
#pragma omp for reduction(+ : rho)
    for (j = 0; j < lastcol - firstcol + 1; j++) rho = rho + r[j] * r[j];
#pragma omp single
    beta = rho / rho0;
#pragma omp for nowait
    for (j = 0; j < lastcol - firstcol + 1; j++) p[j] = r[j] + beta * p[j];
  }

#pragma omp single nowait
  sum = 0.0;
#pragma omp for private(d, k)
  for (j = 0; j < lastrow - firstrow + 1; j++) {
    d = 0.0;
    for (k = rowstr[j]; k < rowstr[j + 1]; k++) d = d + a[k] * z[colidx[k]];
    w[j] = d;
  }
#pragma omp for nowait
  for (j = 0; j < lastcol - firstcol + 1; j++) r[j] = w[j];
#pragma omp for reduction(+ : sum) private(d)
  for (j = 0; j < lastcol - firstcol + 1; j++) {
    d = x[j] - r[j];
    sum = sum + d * d;
  }
#pragma omp single
  { (*rnorm) = sqrt(sum); }
}

int main(void) {
  int i, j, k, it;
  int nthreads = 1;
  double zeta, rnorm, norm_temp11, norm_temp12;
  const double shift = 10.0;

  makea();
#pragma omp parallel default(shared) private(i, j, k)
  {
#pragma omp for nowait
    for (j = 0; j < lastrow - firstrow + 1; j++)
      for (k = rowstr[j]; k < rowstr[j + 1]; k++) colidx[k] = colidx[k] - firstcol;
#pragma omp for nowait
    for (i = 0; i < NA + 1; i++) x[i] = 1.0;
#pragma omp single
    zeta = 0.0;
    /* One untimed iteration, as NPB does (its `it` is shared here: every thread writes
       the same values). */
    for (it = 1; it <= 1; it++) {
      conj_grad(colidx, rowstr, x, z, a, p, q, r, w, &rnorm);
#pragma omp single
      {
        norm_temp11 = 0.0;
        norm_temp12 = 0.0;
      }
#pragma omp for reduction(+ : norm_temp11, norm_temp12)
      for (j = 0; j < lastcol - firstcol + 1; j++) {
        norm_temp11 = norm_temp11 + x[j] * z[j];
        norm_temp12 = norm_temp12 + z[j] * z[j];
      }
#pragma omp single
      norm_temp12 = 1.0 / sqrt(norm_temp12);
#pragma omp for
      for (j = 0; j < lastcol - firstcol + 1; j++) x[j] = norm_temp12 * z[j];
    }
#pragma omp for nowait
    for (i = 0; i < NA + 1; i++) x[i] = 1.0;
#pragma omp single
    zeta = 0.0;
  }

#pragma omp parallel default(shared) private(it, i, j, k)
  {
    for (it = 1; it <= NITER; it++) {
      conj_grad(colidx, rowstr, x, z, a, p, q, r, w, &rnorm);
#pragma omp single
      {
        norm_temp11 = 0.0;
        norm_temp12 = 0.0;
      }
#pragma omp for reduction(+ : norm_temp11, norm_temp12)
      for (j = 0; j < lastcol - firstcol + 1; j++) {
        norm_temp11 = norm_temp11 + x[j] * z[j];
        norm_temp12 = norm_temp12 + z[j] * z[j];
      }
#pragma omp single
      {
        norm_temp12 = 1.0 / sqrt(norm_temp12);
        zeta = shift + 1.0 / norm_temp11;
      }
#pragma omp master
      printf("%5d %20.14e %20.13e\n", it, rnorm, zeta);
#pragma omp for
      for (j = 0; j < lastcol - firstcol + 1; j++) x[j] = norm_temp12 * z[j];
    }
#pragma omp master
    nthreads = omp_get_num_threads();
  }
  printf("zeta %.12e (%d threads)\n", zeta, nthreads);
  return 0;
}

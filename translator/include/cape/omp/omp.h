/* omp.h for programs compiled by cape-cc: the part of the OpenMP runtime API that CAPE
 * provides (libcape_cc). Nodes are threads: see docs/translator.md. Locks go through the
 * master's lock service (docs/critical.md); tasks and the other routines need shared memory
 * and are refused by the translator. */
#ifndef CAPE_OMP_H
#define CAPE_OMP_H

#ifdef __cplusplus
extern "C" {
#endif

int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
void omp_set_num_threads(int n);
int omp_in_parallel(void);
int omp_get_num_procs(void);
int omp_get_level(void);
int omp_get_dynamic(void);
void omp_set_dynamic(int on);
int omp_get_nested(void);
void omp_set_nested(int on);
double omp_get_wtime(void);
double omp_get_wtick(void);

/* Locks: a lock is named by its address (the same on every node); nothing is stored in it. */
typedef struct { int cape_unused; } omp_lock_t;
typedef struct { int cape_unused[4]; } omp_nest_lock_t;
void omp_init_lock(omp_lock_t *lock);
void omp_destroy_lock(omp_lock_t *lock);
void omp_set_lock(omp_lock_t *lock);
void omp_unset_lock(omp_lock_t *lock);
int omp_test_lock(omp_lock_t *lock);
void omp_init_nest_lock(omp_nest_lock_t *lock);
void omp_destroy_nest_lock(omp_nest_lock_t *lock);
void omp_set_nest_lock(omp_nest_lock_t *lock);
void omp_unset_nest_lock(omp_nest_lock_t *lock);
int omp_test_nest_lock(omp_nest_lock_t *lock);

#ifdef __cplusplus
}
#endif

#endif /* CAPE_OMP_H */

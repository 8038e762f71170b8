/* cape.h: the CAPE runtime calls, linked into every CAPE program as libcape.
 *
 * The papers' functions (001_3036025dc34c4021.txt Sect. III.B, 004_9e6a480351e099dd.txt 3.2)
 * with a cape_ prefix, so that a program written by hand can follow the templates
 * literally. Each call traps to the monitor (`cape monitor` / `cape node`), which does the
 * work while the program is stopped; nothing is written into the program's memory by the
 * protocol. A program started without a monitor fails at its first call with a message
 * saying how to run it.
 */
#ifndef CAPE_CAPE_H
#define CAPE_CAPE_H

#ifdef __cplusplus
extern "C" {
#endif

int cape_master(void);          /* 1 on the master node (rank 0), 0 on slaves */
void cape_start(void);          /* clear the checkpointer's buffer, begin tracking writes */
void cape_stop(void);           /* end tracking and clear the buffer */
void cape_create(const char *ck);              /* checkpoint of writes since start()/last create() */
void cape_inject(const char *ck);              /* write checkpoint `ck` into this program */
void cape_send(const char *ck, int node);      /* send checkpoint `ck` to node */
void cape_receive(const char *ck);             /* wait until checkpoint `ck` has arrived */
void cape_wait_for(const char *ck);            /* master: receive `ck` from every slave, merge */
void cape_merge(const char *into, const char *from); /* apply `from`'s changes to `into` */
void cape_broadcast(const char *ck);           /* master: send `ck` to every slave */
int cape_last_parallel(void);   /* 1 when the current parallel region is the program's last */
int cape_node_id(void);         /* this node's rank, 0 .. cape_num_nodes()-1 */
int cape_num_nodes(void);       /* number of nodes in the job */
/* A parallel region at `where` ("file:line", or NULL) is about to begin: every node's memory
 * must be the same here, and the monitor checks that it is (a sequential part that read the
 * clock or a random seed is reported, not left to give wrong results). Returns the number
 * of nodes. The messages about the region name `where`. */
int cape_region_begin(const char *where);
/* The same for a region whose nodes deal themselves their shares of a loop (no `before`
 * checkpoint): `loop` (a hash of the loop's trip count and chunk size) is part of what every
 * node must agree on, and a node that computed other bounds is reported as memory is. */
int cape_region_begin_loop(const char *where, unsigned long long loop);
/* cape_start() of a window in which this node runs its share at once: no `before` is made
 * in it (the monitor may prepare for the share at start: --sync=lazy's kept pages). */
void cape_start_own_share(void);
/* 1 in a process the program forked: no monitor traces it, and it runs as a program alone on
 * one node (cape_num_nodes() is 1, a region is a team of one); 0 in the program itself. */
int cape_alone(void);

/* CAPE-1's create(file) (003_45ed75503520c8f4.txt Fig. 2), "very similar to fork": a
 * complete checkpoint of this whole process (registers, memory map, every writable mapping)
 * saved to `file`; returns 1 after saving, and 0 in a process restarted from `file` (`cape
 * restart FILE`). Outside parallel regions only; docs/cape1.md. */
int cape_create_complete(const char *file);
/* The rest of 003 Fig. 2, on complete checkpoint files (docs/cape1.md shows the template). */
void cape1_copy(const char *from, const char *to);      /* copy a checkpoint file */
void cape1_diff(const char *original, const char *after, const char *delta); /* delta = after - original */
void cape1_merge(const char *target, const char *delta); /* apply delta's changes to target */
void cape1_wait_for(const char *file);                    /* return once `file` exists */
void cape1_restart_on(const char *file, int node);        /* a new process from `file` as node `node` */
void cape1_restart(const char *file);                     /* continue from `file`; never returns */
/* Beyond Fig. 2 (a region's barriers, docs/cape1.md): `file` to node `node`, whose
 * cape1_wait_for(file) takes it; alone (no `cape run`) the file is already there. */
void cape1_send(const char *file, int node);
/* A slave node of `cape run`: become the process of the next checkpoint the master sends with
 * cape1_restart_on(file, this node); returns only when the master's program has ended (then
 * the caller exits). The master's cape1_restart_on(NULL, node) says that. */
void cape1_serve(void);

/* Data sharing and reductions (002_2c61c2cb27f62a9a.txt Table 2, Fig. 6-7): the clause
 * calls come before the region's cape_start() and hold until its cape_stop(). `size` is
 * sizeof the variable. They answer nothing and make no trap of their own (issue 14): each
 * rides on the calling thread's next runtime call (cape_start()'s), which the monitor serves
 * after them, so make them from the thread that calls cape_start() (the main thread defers
 * them; another thread's calls still trap one by one). cape_set_order and
 * cape_critical_shared ride the same way. Under the TICKPT model only shared, lastprivate, copyin, copyprivate
 * and reduction data travel; under DICKPT every tracked write does, and the calls still make
 * private data stay private and reductions come out right. */
void cape_set_shared(void *addr, unsigned long size);
void cape_set_private(void *addr, unsigned long size);
void cape_set_firstprivate(void *addr, unsigned long size);
void cape_set_lastprivate(void *addr, unsigned long size);
void cape_set_copyin(void *addr, unsigned long size);
void cape_set_copyprivate(void *addr, unsigned long size);
void cape_set_threadprivate(void *addr, unsigned long size);
void cape_set_default_none(void);

/* reduction(op: v); op and type numbered as in the DICKPT format (docs/dickpt-format.md). */
enum cape_reduce_op {
  CAPE_RED_ADD = 1, CAPE_RED_MUL, CAPE_RED_SUB, CAPE_RED_BAND, CAPE_RED_BOR, CAPE_RED_BXOR,
  CAPE_RED_LAND, CAPE_RED_LOR, CAPE_RED_MIN, CAPE_RED_MAX
};
enum cape_elem_type {
  CAPE_T_INT8 = 1, CAPE_T_UINT8, CAPE_T_INT16, CAPE_T_UINT16, CAPE_T_INT32, CAPE_T_UINT32,
  CAPE_T_INT64, CAPE_T_UINT64, CAPE_T_FLOAT, CAPE_T_DOUBLE
};
void cape_reduction(void *addr, unsigned long size, int op, int type);

/* lastprivate: this node's share's position in the sequential order of the current
 * loop's iterations (0 = first). Among the nodes' values of a lastprivate variable the
 * highest order wins (its runs carry a later timestamp, Def. 4.2). Default: the node id,
 * which is right when node k runs the k-th chunk. Holds until changed. */
void cape_set_order(long order);

/* Critical sections across nodes (docs/critical.md), inside a region's window: enter blocks
 * until this node holds the lock `name` of the master's lock service and has the writes other
 * holders made under it; exit sends the body's writes back with the release. Call both
 * directly from the function whose frame holds the body's variables (like cape_create).
 * cape_critical_shared(&x, size): a local of that function the next body may write (other
 * stack memory never travels with a body's writes). */
void cape_critical_enter(const char *name);
void cape_critical_exit(const char *name);
void cape_critical_shared(void *addr, unsigned long size);
/* The same when the translator knows every byte the body can write: `writes` lists them,
 * {address, size} pairs ending with {0, 0}, at most 16 (the exit then looks at those pages
 * only; docs/critical.md, "Bodies with known writes"). Left with cape_critical_exit, or for
 * name "atomic" (the lock of the first pair's address) with cape_atomic_exit. */
struct cape_write {
  void *addr;
  unsigned long size;
};
void cape_critical_enter_writes(const char *name, const struct cape_write *writes);
/* `atomic` on the location x through the same service: one lock per location. */
void cape_atomic_enter(void *x);
void cape_atomic_exit(void *x);
/* The omp_*_lock API (libcape_cc) on the same service: one lock per lock variable. test
 * answers 1 when this node holds the lock now, 0 when another node does. */
void cape_lock_set(void *lock);
void cape_lock_unset(void *lock);
int cape_lock_test(void *lock);
/* `ordered` in a loop with the ordered clause: the block of logical iteration `iteration`
 * (0, 1, ... in the loop's sequential order) runs after those of every earlier iteration, on
 * whichever node. `name` names the loop (the same on every node). */
void cape_ordered_enter(const char *name, unsigned long long iteration);
void cape_ordered_exit(const char *name);
/* The same without waiting: 1 when iteration's turn has come (the block is entered, end it
 * with cape_ordered_exit), 0 when an earlier iteration's block has not run yet. A node's
 * threads (cape-cc --model=mt) poll with it: a monitor waiting for one thread's turn would
 * keep the thread whose turn comes first stopped (docs/critical.md, "Threads of a node"). */
int cape_ordered_try(const char *name, unsigned long long iteration);

/* The checkpoint model the program was compiled for (cape-cc --ckpt=tickpt|dickpt). */
enum cape_ckpt_model { CAPE_CKPT_DICKPT = 0, CAPE_CKPT_TICKPT = 1 };
void cape_set_ckpt_model(int model);

/* The two-level model (000_2e1115959baa0e7d.txt Fig. 5-6): a thread other than the one that
 * called cape_start() joins the window of node `rank` for its allocations (they then come
 * from that node's arena, as the window's own thread's do); 1 when it joined (call
 * cape_thread_leave_window() before the window ends), 0 when it was in a window already.
 * No trap: the monitor sees the thread's writes as any others. */
int cape_thread_enter_window(int rank);
void cape_thread_leave_window(void);
/* The runtime calls this thread makes until cape_unmark_frame() take the caller's frame
 * of cape_mark_frame() as their frame boundary: the frames below it (libgomp's, the
 * outlined body of a `parallel` region with its thread's private copies) are never tracked
 * nor captured, so one thread can make a region's exchanges from inside the node's team. */
void cape_mark_frame(void);
void cape_unmark_frame(void);
/* For libcape_cc's exchanges: the next stop, send, wait_for or inject this thread makes
 * makes no trap of its own; it rides on the trap of the runtime call after it (the monitor
 * serves it first). Only for a caller that makes that next call before the program reads or
 * writes anything the deferred call affects (issue 14: fewer ptrace stops per region). */
void cape_defer_next(void);

#ifdef __cplusplus
}
#endif

#endif /* CAPE_CAPE_H */

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

#ifdef __cplusplus
}
#endif

#endif /* CAPE_CAPE_H */

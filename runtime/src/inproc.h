/* --tracker inproc (inproc.c): libcape's side. Hidden, as heap.h. */
#ifndef CAPE_INPROC_H
#define CAPE_INPROC_H
#pragma GCC visibility push(hidden)
/* start() answered CAPE_INPROC_ARMED: protect the areas the monitor listed in the scratch. */
void cape_inproc_arm(void);
#pragma GCC visibility pop
#endif

/* CAPE-1's values that a merge of writes cannot give (rt/cape1_values.c, docs/cape1.md
 * "Regions"): reductions combined from each part's partial result (002_2c61c2cb27f62a9a.txt
 * Def. 4.4), and threadprivate variables kept per part from region to region. */
#ifndef CAPE1_VALUES_H
#define CAPE1_VALUES_H

#define CAPE1_MAX_PARTS 64

/* Before main (cape1_cc_init): the parts' slots. */
void cape1_values_init(void);
/* A region starts (the master, before its create(original)): no registrations. */
void cape1_values_begin(void);
/* Before this part's create(after) at a barrier (end 0) or at the region's end (end 1):
 * each reduction's partial result into the part's slot and the variable back to its value
 * before the region; each threadprivate variable out of the checkpoint (kept, or into the
 * part's slot at the end). */
void cape1_values_out(int me, int end);
/* After the exchange, in the part that goes on: each reduction's value combined from every
 * part's slot (in part order), threadprivate variables back. */
void cape1_values_in(int me, int end);

/* cape_cc.c: the value of the threadprivate variable at addr before main (1), or 0 when it
 * is not one of the translated files' entries. */
int cape_cc_tp_initial(const void *addr, unsigned long size, void *out);

#endif

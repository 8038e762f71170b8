/* The trap protocol between libcape (in the program) and the monitor (cape monitor/node).
 *
 * A runtime call executes `int3` with:
 *   rax = CAPE_TRAP_MAGIC | operation     rdi, rsi = the call's arguments
 *   rdx = the caller's frame boundary (lowest stack address that belongs to the program's
 *         own frames; everything below is libcape's and is never captured or injected)
 *   rcx = address of cape_syscall_gadget (`syscall; int3`), where the monitor runs
 *         remote syscalls (monitor/remote_syscall.h)
 * The monitor answers by setting rax and resuming after the int3. Nothing is written
 * into program memory by the protocol. Shared by runtime/ and monitor/ (plain C header).
 */
#ifndef CAPE_PROTOCOL_H
#define CAPE_PROTOCOL_H

#define CAPE_TRAP_MAGIC 0x43415045ca000000ULL /* "CAPE" | 0xca in the upper bytes */
#define CAPE_TRAP_MAGIC_MASK 0xffffffffff000000ULL

/* After the gadget (libcape's cape.c): the resume stub, entered with rax/rdi/rsi/rdx = one
 * syscall and rsp = the address of a frame {rax, rcx, r11, rdi, rsi, rdx, rip, cs, rflags,
 * rsp, ss} in monitor-owned memory; the syscall's result goes to the word below the frame
 * (the monitor sets it to 1 first: 1 = not run yet, 0 or -errno = done). The tag at
 * CAPE_RESUME_TAG_OFFSET tells the monitor the stub is there (older libcape: it is not). */
#define CAPE_RESUME_STUB_OFFSET 5
#define CAPE_RESUME_TAG_OFFSET 32
#define CAPE_RESUME_TAG "cape-resume-1"
/* The copy gadget: rdx = a list of {source, length} pairs ending with a zero length,
 * rdi = the destination; the runs are copied back to back, then int3 (at
 * CAPE_COPY_TRAP_OFFSET, the rip after it is that + 1). Tagged like the resume stub. */
#define CAPE_COPY_GADGET_OFFSET 48
#define CAPE_COPY_TRAP_OFFSET 72
#define CAPE_COPY_TAG_OFFSET 80
#define CAPE_COPY_TAG "cape-copy-1"

enum cape_op {
  CAPE_OP_HELLO = 1, /* unused by the program; reserved for probing */
  CAPE_OP_MASTER,
  CAPE_OP_START,
  CAPE_OP_STOP,
  CAPE_OP_CREATE,
  CAPE_OP_INJECT,
  CAPE_OP_SEND,
  CAPE_OP_RECEIVE,
  CAPE_OP_WAIT_FOR,
  CAPE_OP_MERGE,
  CAPE_OP_BROADCAST,
  CAPE_OP_LAST_PARALLEL,
  CAPE_OP_NODE_ID,
  CAPE_OP_NUM_NODES,
  /* Data sharing (002_2c61c2cb27f62a9a.txt Table 2): rdi = address, rsi = size. */
  CAPE_OP_SET_SHARED,
  CAPE_OP_SET_PRIVATE,
  CAPE_OP_SET_FIRSTPRIVATE,
  CAPE_OP_SET_LASTPRIVATE,
  CAPE_OP_SET_COPYIN,
  CAPE_OP_SET_COPYPRIVATE,
  CAPE_OP_SET_THREADPRIVATE,
  CAPE_OP_SET_DEFAULT_NONE,
  /* rdi = address, rsi = size | op << 48 | type << 56 (CAPE_RED_SIZE_BITS). */
  CAPE_OP_REDUCTION,
  CAPE_OP_SET_CKPT_MODEL, /* rdi = model */
  CAPE_OP_SET_ORDER,      /* rdi = order */
  CAPE_OP_COUNT
};

#define CAPE_RED_SIZE_BITS 48

#endif /* CAPE_PROTOCOL_H */

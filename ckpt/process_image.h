// The process section of a complete checkpoint (CAPE-1, 003_45ed75503520c8f4.txt Fig. 2:
// `create(file)` saves "the whole process", like fork). The runs of a complete checkpoint
// hold the memory; this section holds what else a restart needs: the executable and its
// build id, the whole memory map, the files it maps, the open files, the FPU/vector state,
// brk, signals, cwd. docs/dickpt-format.md ("Complete checkpoints") is the spec.
//
//   section := length u64 (bytes of records, multiple of 8) | records
//   record  := tag u16 | 0 u16 | length u32 | payload (length bytes, zero-padded to 8)
//
// Nothing here knows about processes: monitor/complete.cpp fills it, monitor/restart.cpp
// reads it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"

namespace cape::ckpt {

struct ProcessMapping {
  enum class What : uint8_t { anon = 0, file = 1, heap = 2, stack = 3, vdso = 4, vvar = 5, vsyscall = 6, special = 7 };
  uint64_t start = 0, end = 0, offset = 0;
  uint8_t prot = 0;  // PROT_READ 1 | PROT_WRITE 2 | PROT_EXEC 4
  bool shared = false;
  What what = What::anon;
  std::string path;  // the file (What::file), or the kernel's name ("[vvar]", "[anon:x]")
  bool operator==(const ProcessMapping&) const = default;
};
const char* to_string(ProcessMapping::What w);

// A file the program maps (and its executable), so that a restart can tell it has the same one.
struct ProcessFile {
  std::string path;
  uint64_t size = 0;
  uint64_t hash = 0;  // XXH3-64 of its content
  bool operator==(const ProcessFile&) const = default;
};

// An open descriptor other than the standard streams: reopened by path at `offset` on restart.
struct ProcessFd {
  int32_t fd = 0;
  uint32_t flags = 0;  // open(2) flags as /proc/PID/fdinfo gives them (octal there)
  uint64_t offset = 0;
  std::string path;
  bool operator==(const ProcessFd&) const = default;
};

// A signal whose handler the program installed (struct kernel_sigaction, x86_64).
struct ProcessSigaction {
  uint32_t signo = 0;
  uint64_t handler = 0, flags = 0, restorer = 0, mask = 0;
  bool operator==(const ProcessSigaction&) const = default;
};

struct ProcessImage {
  std::string exe;               // the executable's path when the checkpoint was made
  std::vector<uint8_t> build_id; // its NT_GNU_BUILD_ID (empty when it has none)
  uint64_t exe_size = 0, exe_hash = 0;
  std::string cwd;
  uint32_t pid = 0;
  uint64_t start_brk = 0, brk = 0;          // brk is the exact break (brk(0)), not page aligned
  uint64_t sig_blocked = 0, sig_ignored = 0; // bit n-1 = signal n
  uint64_t vdso_hash = 0;                    // XXH3 of [vdso]: a restart needs the same kernel's
  uint64_t rseq_address = 0;                 // 0 = no rseq registered
  uint32_t rseq_length = 0, rseq_signature = 0;
  uint64_t tid_address = 0;  // where glibc caches the thread id (patched on restart), 0 = none
  // The kernel's record of the memory layout (/proc/PID/stat; PR_SET_MM_MAP on restart):
  // start_code, end_code, start_data, end_data, start_stack, arg_start, arg_end, env_start, env_end.
  std::vector<uint64_t> layout;  // 9 values, or empty
  // Made by cape's monitor (create() or --checkpoint-every): the program calls libcape, so a
  // restart runs it under a monitor again.
  bool under_monitor = false;
  // The main thread's block: static TLS blocks and libc's thread descriptor, [low, high),
  // page aligned (0, 0 = unknown): per-process state, which CAPE-1's merge keeps out of
  // another process's target.
  uint64_t thread_block_low = 0, thread_block_high = 0;
  // The frame a translated CAPE-1 region marked (cape_mark_frame; 0 = none): the stack from
  // here up holds the region's function and its callers, whose writes another part's merge
  // keeps (shared locals); below it are the part's own frames.
  uint64_t frame_boundary = 0;
  std::vector<uint8_t> xstate;  // NT_X86_XSTATE (FPU, SSE, AVX registers)
  std::vector<ProcessMapping> mappings;  // every mapping, sorted
  std::vector<ProcessFile> files;
  std::vector<ProcessFd> fds;
  std::vector<ProcessSigaction> sigactions;
  bool operator==(const ProcessImage&) const = default;
};

std::vector<uint8_t> encode_process(const ProcessImage& p);  // the records (no length prefix)
// Throws Error with what is wrong and where (offset inside the section).
ProcessImage decode_process(std::span<const uint8_t> records);

}  // namespace cape::ckpt

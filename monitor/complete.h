// Complete checkpoints of a whole process (CAPE-1: 003_45ed75503520c8f4.txt Fig. 2,
// `create(file)`, "very similar to fork"): registers, FPU/vector state, the whole memory map,
// the memory of every writable mapping, and what a restart needs besides (executable and
// build id, brk, signals, open files, cwd): docs/cape1.md. monitor/restart.h starts a new
// process from one.
//
//   // pid: single-threaded and in a ptrace stop of ours
//   CompleteStats stats;
//   ckpt::Checkpoint c = take_complete(pid, {}, &stats);
//   ckpt::write_file(c, "prog.ckpt");
//
// What is stored: every populated page of a writable mapping (pages never touched read as
// zeros or as the file, and are rebuilt so); of a read-only private file mapping, the pages
// that differ from the file (relocated RELRO data); of other anonymous mappings, populated
// pages. What is refused, with a message saying so: several threads, shared mappings,
// mappings of deleted files, open descriptors other than the standard streams and read-only
// regular files.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"

namespace cape::monitor {

struct CompleteOptions {
  std::string name = "complete";
  uint32_t node = 0;
  uint64_t sequence = 0, timestamp = 0;
  // The registers the restarted program resumes with (an in-program create() answers FALSE
  // there); unset: the thread's own, a system call it was in made to start again.
  std::optional<user_regs_struct> resume_registers;
  // Mappings that start inside these ranges are the monitor's, not the program's: left out
  // (a restart's monitor makes its own).
  std::vector<std::pair<uint64_t, uint64_t>> skip;
  bool under_monitor = false;  // the process section says so (ckpt/process_image.h)
};

struct CompleteStats {
  size_t mappings = 0;
  uint64_t mapped_bytes = 0;    // accessible mappings but [vvar]/[vdso]/[vsyscall] (not PROT_NONE reservations)
  uint64_t writable_bytes = 0;  // writable mappings
  uint64_t stored_bytes = 0;    // memory in the checkpoint's runs
  double milliseconds = 0;      // to take it (not to write it)
};

ckpt::Checkpoint take_complete(pid_t pid, const CompleteOptions& options, CompleteStats* stats = nullptr);

// The NT_GNU_BUILD_ID of an ELF file (empty when it has none); throws UserError when the
// file cannot be read or is not ELF.
std::vector<uint8_t> read_build_id(const std::string& path);
std::string hex(const std::vector<uint8_t>& bytes);
// Size and XXH3-64 of a file's content; throws UserError naming it.
void hash_file(const std::string& path, uint64_t& size, uint64_t& hash);

}  // namespace cape::monitor

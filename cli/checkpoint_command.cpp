// `cape checkpoint PID FILE`: a complete checkpoint (CAPE-1) of a running program, taken from
// outside: attach with ptrace, take it (monitor/complete.h), detach; the program goes on.
// `cape restart FILE` starts it again (cli/restart_command.cpp). docs/cape1.md.
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "ckpt/format.h"
#include "cli/command.h"
#include "monitor/complete.h"
#include "util/error.h"

namespace cape::cli {

void add_checkpoint_command(CLI::App& app, Context& ctx) {
  struct Args {
    int pid = 0;
    std::string file, name = "complete";
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand("checkpoint",
                                 "Save a complete checkpoint of a running single-threaded program (CAPE-1); it "
                                 "goes on running. Restart it with `cape restart FILE`");
  sub->add_option("pid", args->pid, "the program's process id")->required()->check(CLI::PositiveNumber);
  sub->add_option("file", args->file, "the checkpoint file to write")->required();
  sub->add_option("--name", args->name, "the checkpoint's name (default complete)");
  sub->add_flag("-q,--quiet", args->quiet, "print nothing when it worked");
  sub->callback([args, &ctx] {
    pid_t pid = args->pid;
    if (::ptrace(PTRACE_SEIZE, pid, nullptr, nullptr) != 0) {
      int e = errno;
      throw UserError("cannot attach to process " + std::to_string(pid) + ": " + std::strerror(e) +
                      (e == EPERM ? " (is it traced already, e.g. by cape monitor? then use its --checkpoint-every; "
                                    "or is it another user's?)"
                                  : ""));
    }
    struct Detach {
      pid_t pid;
      bool stopped = false;
      ~Detach() {
        if (stopped) ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
      }
    } detach{pid};
    if (::ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr) != 0) fail_errno("PTRACE_INTERRUPT");
    for (;;) {
      int st = 0;
      if (::waitpid(pid, &st, __WALL) < 0) {
        if (errno == EINTR) continue;
        fail_errno("waitpid");
      }
      if (WIFEXITED(st) || WIFSIGNALED(st))
        throw UserError("process " + std::to_string(pid) + " ended before it could be checkpointed");
      if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP) break;
      // A signal on its way: let it go and wait for the interrupt.
      int sig = WIFSTOPPED(st) ? WSTOPSIG(st) : 0;
      ::ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(sig)));
    }
    detach.stopped = true;
    monitor::CompleteOptions o;
    o.name = args->name;
    monitor::CompleteStats stats;
    ckpt::Checkpoint c = monitor::take_complete(pid, o, &stats);
    if (::ptrace(PTRACE_DETACH, pid, nullptr, nullptr) != 0) fail_errno("PTRACE_DETACH");
    detach.stopped = false;
    ckpt::write_file(c, args->file);
    struct stat st;
    uint64_t size = ::stat(args->file.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    if (!args->quiet)
      std::printf("%s: complete checkpoint of process %d: %zu mappings, %" PRIu64 " bytes mapped, %" PRIu64
                  " writable, %" PRIu64 " stored; file %" PRIu64 " bytes; taken in %.1f ms\n",
                  args->file.c_str(), pid, stats.mappings, stats.mapped_bytes, stats.writable_bytes,
                  stats.stored_bytes, size, stats.milliseconds);
    ctx.exit_status = 0;
  });
}

}  // namespace cape::cli

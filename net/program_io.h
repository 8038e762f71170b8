// The program's standard streams on a node of a job (docs/net.md, "Output and input").
//
// Output, as OpenMP and mpirun users expect it: what a program prints inside a parallel
// region appears once on `cape run`'s stdout/stderr, in whole lines, whichever node printed
// it; what the sequential part prints appears once, the master's (every node prints the same).
// libcape flushes stdout and stderr before every runtime call, and the monitor tells the node
// at every call whether the program was inside a region's window (OutputPump::at_call), so
// the node can tell the two apart:
//
//   master: sequential output -> its terminal as it comes; region output -> its terminal in
//           whole lines; slaves' region lines (forwarded) -> its terminal, whole
//   slave:  everything -> its log (--output-dir); region output -> forwarded to the master
//           in whole lines (a line still open when the window ends goes as it is)
//
// Input: what `cape run` reads on its stdin reaches every node's program identically, streamed:
// the master reads its stdin, writes each chunk into its own program's pipe and then sends it
// to every slave; a slave writes what arrives into its program's pipe (InputPump).
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "util/scoped_fd.h"

namespace cape::net {

enum class Stream : uint8_t { out = 1, err = 2 };

// A node's own stdout and stderr (the terminal of `cape run`, or a slave's log), written by
// several sources (the node's program, the slaves' forwarded lines) under one lock, so a
// batch of whole lines is never cut by another source's bytes. With a tag, each line starts
// with "[RANK]<stdout>: " (mpirun's --tag-output).
class Terminal {
 public:
  Terminal(int out_fd, int err_fd, bool tag) : out_(out_fd), err_(err_fd), tag_(tag) {}
  // False once the stream's reader is gone (EPIPE); other errors drop the bytes, as a shell
  // writing to a closed terminal would.
  bool write(int source, Stream s, std::string_view bytes);

 private:
  std::mutex mu_;
  int out_, err_;
  bool tag_;
  std::map<std::pair<int, Stream>, bool> mid_line_;  // the source's last byte was not '\n'
};

// The master's side of the slaves' region lines. Every node runs the sequential part itself,
// so a slave can begin region R and print in it while the master is still printing the
// sequential part before R. Lines printed in a region the master has not begun yet are held,
// and released, in the order they arrived, once the master's program reaches that region's
// start (after its own output before it has been written): the terminal shows what the
// program shows under OpenMP, the sequential part's lines before the region's.
class SlaveLines {
 public:
  explicit SlaveLines(Terminal& terminal) : terminal_(terminal) {}
  // What is still held goes out: a job that failed before the master's program began the
  // slave's region (a slave's last words, then `cape: node 1 ... exited`) must not lose them.
  ~SlaveLines() { release_all(); }
  // A slave's lines, printed in its `region`-th region (reader threads).
  void write(int from, Stream s, uint64_t region, std::string_view bytes);
  // The master's program has begun its `region`-th region (its output before it written).
  void reached(uint64_t region);
  // The master's program has ended: what is still held goes out.
  void release_all();

 private:
  struct Held {
    int from;
    Stream stream;
    uint64_t region;
    std::string bytes;
  };
  void release_locked(uint64_t up_to);
  Terminal& terminal_;
  std::mutex mu_;
  uint64_t reached_ = 0;
  std::deque<Held> held_;
};

// One output stream of the program: the read end of its pipe, drained by a thread and, at
// every runtime call, by at_call() while the program is stopped (so every byte is put in the
// phase it was written in).
class OutputPump {
 public:
  struct Options {
    Stream stream = Stream::out;
    int rank = 0;
    Terminal* terminal = nullptr;  // where every byte goes (whole lines when `lines`)
    // Region output in whole lines on the terminal (the master, whose terminal is shared
    // with the slaves' lines). Off: bytes as they come (a slave's log).
    bool region_lines = false;
    // Region output in whole lines to the master (slaves); empty: none.
    std::function<void(Stream, std::string_view)> forward;
  };
  OutputPump(util::ScopedFd pipe_read_end, Options o);
  ~OutputPump();  // waits for the program's end of the pipe to close (every writer gone)
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;

  // The program is stopped at a runtime call: what it wrote so far belongs to the phase it
  // was in (`was_in_region`); after the call it is in `now_in_region`. Returns when every
  // byte written before the call has been handled.
  void at_call(bool was_in_region, bool now_in_region);
  // at_call() for several pumps (a node's stdout and stderr) with one poll() of their pipes
  // instead of a read of each (issue 14: two reads of empty pipes per trap); `drain` false:
  // only the phase changes (the program has not run since the last drain, within one trap).
  static void at_call_all(std::span<OutputPump* const> pumps, bool was_in_region, bool now_in_region, bool drain = true);
  // The program has ended (or is about to be reported ended): handle what is left in the
  // pipe now, in the phase it was in, and close any open region line.
  void at_exit(bool was_in_region);

 private:
  void run();
  // Reads what is in the pipe now (non-blocking) and handles it; false at EOF. mu_ held.
  bool drain_locked();
  void handle_locked(std::string_view bytes);
  void end_region_locked();
  void broken_locked();
  void at_call_locked(bool was_in_region, bool now_in_region, bool drain);

  Options o_;
  util::ScopedFd fd_;
  util::ScopedFd wake_rd_, wake_wr_;
  std::mutex mu_;
  bool in_region_ = false;
  bool eof_ = false;
  std::string open_line_;  // region bytes after the last newline, not yet put anywhere
  std::thread thread_;
};

// The program's stdin. Master: reads `source` (its own stdin) and writes each chunk into the
// program's pipe, then hands it to `broadcast` (to every slave); at the end of `source`,
// broadcast({}, true) and closes the pipe. Slave: push() what arrives, in order; a writer
// thread feeds the program's pipe so that the network never waits on the program.
class InputPump {
 public:
  using Broadcast = std::function<void(std::string_view chunk, bool eof)>;
  // Master.
  InputPump(int source, util::ScopedFd pipe_write_end, Broadcast broadcast);
  // Slave.
  explicit InputPump(util::ScopedFd pipe_write_end);
  ~InputPump();
  InputPump(const InputPump&) = delete;
  InputPump& operator=(const InputPump&) = delete;

  // Slave: the next chunk from the master (eof: the master's stdin ended).
  void push(std::string_view chunk, bool eof);
  // Stops feeding (the program ended); a master's broadcast of what it had read stops too.
  void stop();

 private:
  void run_master(int source, Broadcast broadcast);
  void run_slave();
  util::ScopedFd pipe_;
  util::ScopedFd wake_rd_, wake_wr_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  bool eof_ = false, stopped_ = false;
  std::thread thread_;
};

}  // namespace cape::net

#include "net/program_io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "util/error.h"
#include "util/log.h"

namespace cape::net {

namespace {

constexpr size_t kChunk = 64 * 1024;

std::pair<util::ScopedFd, util::ScopedFd> wake_pipe() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) throw UserError(errno_message("pipe2"));
  return {util::ScopedFd(p[0]), util::ScopedFd(p[1])};
}

void wake(int fd) {
  char c = 1;
  if (::write(fd, &c, 1) < 0 && errno != EAGAIN) {
    CAPE_LOG_AT(debug, "net") << errno_message("wake");
  }
}

void set_nonblocking_fd(int fd) {
  int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || ::fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) throw UserError(errno_message("fcntl O_NONBLOCK"));
}

// Writes all of `bytes` to the non-blocking `fd`, waiting for room; false when the reader is
// gone (EPIPE) or `wake_fd` became readable (stop).
bool write_all(int fd, std::string_view bytes, int wake_fd) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return false;  // EPIPE: the program closed its stdin
    pollfd p[2] = {{fd, POLLOUT, 0}, {wake_fd, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) return false;
    if (p[1].revents) return false;
    if (p[0].revents & (POLLERR | POLLNVAL)) return false;
  }
  return true;
}

}  // namespace

// ---- Terminal ---------------------------------------------------------------------------

bool Terminal::write(int source, Stream s, std::string_view bytes) {
  if (bytes.empty()) return true;
  std::lock_guard lk(mu_);
  std::string tagged;
  if (tag_) {
    std::string tag = "[" + std::to_string(source) + "]" + (s == Stream::out ? "<stdout>: " : "<stderr>: ");
    bool& mid = mid_line_[{source, s}];
    for (char c : bytes) {
      if (!mid) tagged += tag;
      tagged += c;
      mid = c != '\n';
    }
    bytes = tagged;
  }
  int fd = s == Stream::out ? out_ : err_;
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EPIPE) return false;
    if (n <= 0) return true;  // a closed terminal: drop, as a shell would
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// ---- OutputPump -------------------------------------------------------------------------

OutputPump::OutputPump(util::ScopedFd pipe_read_end, Options o) : o_(std::move(o)), fd_(std::move(pipe_read_end)) {
  set_nonblocking_fd(fd_.get());
  std::tie(wake_rd_, wake_wr_) = wake_pipe();
  thread_ = std::thread([this] { run(); });
}

OutputPump::~OutputPump() {
  if (thread_.joinable()) thread_.join();
}

void OutputPump::run() {
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (eof_) break;
    }
    pollfd p[2] = {{fd_.get(), POLLIN, 0}, {wake_rd_.get(), POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) break;
    std::lock_guard lk(mu_);
    if (eof_) break;
    if (p[0].revents && !drain_locked()) eof_ = true;
  }
  std::lock_guard lk(mu_);
  // The program's end of the pipe is gone (or its reader broke): a region line still open
  // is put where it belongs, and the program's next write (a child's) fails as without cape.
  end_region_locked();
  fd_.reset();
}

bool OutputPump::drain_locked() {
  if (!fd_.valid() || eof_) return false;
  char buf[kChunk];
  for (;;) {
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n > 0) {
      handle_locked({buf, static_cast<size_t>(n)});
      if (eof_) return false;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    return false;  // EOF: every writer is gone
  }
}

void OutputPump::handle_locked(std::string_view bytes) {
  bool lines = in_region_ && (o_.region_lines || o_.forward);
  if (!lines || !o_.region_lines)
    if (!o_.terminal->write(o_.rank, o_.stream, bytes)) return broken_locked();
  if (!lines) return;
  open_line_.append(bytes);
  size_t nl = open_line_.rfind('\n');
  if (nl == std::string::npos) return;
  std::string_view whole(open_line_.data(), nl + 1);
  if (o_.region_lines && !o_.terminal->write(o_.rank, o_.stream, whole)) return broken_locked();
  if (o_.forward) o_.forward(o_.stream, whole);
  open_line_.erase(0, nl + 1);
}

void OutputPump::end_region_locked() {
  if (open_line_.empty()) return;
  if (o_.region_lines && !o_.terminal->write(o_.rank, o_.stream, open_line_)) {
    open_line_.clear();
    return broken_locked();
  }
  if (o_.forward) o_.forward(o_.stream, open_line_);
  open_line_.clear();
}

void OutputPump::broken_locked() {
  // The reader of our terminal is gone (`cape run ... | head -1` after head exits): stop
  // relaying; the thread closes the program's pipe, so its next write gets EPIPE/SIGPIPE as
  // it would with no cape in between.
  CAPE_LOG_AT(info, "net") << "the output's reader is gone (EPIPE); no longer relaying";
  eof_ = true;
  open_line_.clear();
  wake(wake_wr_.get());
}

void OutputPump::at_call(bool was_in_region, bool now_in_region) {
  std::lock_guard lk(mu_);
  at_call_locked(was_in_region, now_in_region, true);
}

void OutputPump::at_call_locked(bool was_in_region, bool now_in_region, bool drain) {
  in_region_ = was_in_region;
  if (drain && !drain_locked() && !eof_) {
    eof_ = true;
    wake(wake_wr_.get());
  }
  if (was_in_region && !now_in_region) end_region_locked();
  in_region_ = now_in_region;
}

void OutputPump::at_call_all(std::span<OutputPump* const> pumps, bool was_in_region, bool now_in_region, bool drain) {
  // Which pipes hold bytes: one poll() for all (a pipe whose pump has closed it polls as -1,
  // ignored; a number reused meanwhile only makes drain_locked() look, under the lock).
  std::array<pollfd, 4> p{};
  size_t n = drain ? std::min(pumps.size(), p.size()) : 0;
  for (size_t i = 0; i < n; ++i) {
    std::lock_guard lk(pumps[i]->mu_);
    p[i] = {pumps[i]->eof_ ? -1 : pumps[i]->fd_.get(), POLLIN, 0};
  }
  if (n > 0 && ::poll(p.data(), n, 0) < 0)
    for (size_t i = 0; i < n; ++i) p[i].revents = POLLIN;  // (EINTR, ENOMEM: read them all)
  for (size_t i = 0; i < pumps.size(); ++i) {
    std::lock_guard lk(pumps[i]->mu_);
    // (drain false: the pipes were read at this trap's first call, the program has not run
    // since; they were read again here, two reads of empty pipes per window opened or closed.)
    pumps[i]->at_call_locked(was_in_region, now_in_region, drain && (i >= n || p[i].revents != 0));
  }
}

void OutputPump::at_exit(bool was_in_region) { at_call(was_in_region, false); }

// ---- InputPump --------------------------------------------------------------------------

InputPump::InputPump(int source, util::ScopedFd pipe_write_end, Broadcast broadcast) : pipe_(std::move(pipe_write_end)) {
  set_nonblocking_fd(pipe_.get());
  std::tie(wake_rd_, wake_wr_) = wake_pipe();
  thread_ = std::thread([this, source, b = std::move(broadcast)] { run_master(source, b); });
}

InputPump::InputPump(util::ScopedFd pipe_write_end) : pipe_(std::move(pipe_write_end)) {
  set_nonblocking_fd(pipe_.get());
  std::tie(wake_rd_, wake_wr_) = wake_pipe();
  thread_ = std::thread([this] { run_slave(); });
}

InputPump::~InputPump() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void InputPump::stop() {
  {
    std::lock_guard lk(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  wake(wake_wr_.get());
  cv_.notify_all();
}

void InputPump::run_master(int source, Broadcast broadcast) {
  char buf[kChunk];
  bool program_reads = true;
  for (;;) {
    pollfd p[2] = {{source, POLLIN, 0}, {wake_rd_.get(), POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[1].revents) return;  // stopped: the program has ended
    ssize_t n = ::read(source, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // end of input (an unreadable stdin counts as empty, like /dev/null)
    std::string_view chunk(buf, static_cast<size_t>(n));
    // Our own program first: a chunk goes to the slaves only once the master's program has
    // room for it, so nobody buffers much more than the master's program has read.
    if (program_reads && !write_all(pipe_.get(), chunk, wake_rd_.get())) {
      std::lock_guard lk(mu_);
      if (stopped_) return;
      program_reads = false;  // it closed its stdin; so will the slaves' (same code)
    }
    if (!program_reads) break;
    broadcast(chunk, false);
  }
  pipe_.reset();
  broadcast({}, true);
}

void InputPump::run_slave() {
  bool program_reads = true;
  for (;;) {
    std::string chunk;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stopped_ || eof_ || !queue_.empty(); });
      if (stopped_) return;
      if (queue_.empty()) break;  // eof and everything written
      chunk = std::move(queue_.front());
      queue_.pop_front();
    }
    if (program_reads && !write_all(pipe_.get(), chunk, wake_rd_.get())) program_reads = false;
  }
  pipe_.reset();
}

void InputPump::push(std::string_view chunk, bool eof) {
  {
    std::lock_guard lk(mu_);
    if (eof)
      eof_ = true;
    else if (!chunk.empty())
      queue_.emplace_back(chunk);
  }
  cv_.notify_all();
}

}  // namespace cape::net

namespace cape::net {

void SlaveLines::write(int from, Stream s, uint64_t region, std::string_view bytes) {
  std::lock_guard lk(mu_);
  // Held lines go first, whatever this one's region: a node's lines keep their order.
  if (region <= reached_ && held_.empty()) {
    terminal_.write(from, s, bytes);
    return;
  }
  held_.push_back({from, s, region, std::string(bytes)});
  release_locked(reached_);
}

void SlaveLines::reached(uint64_t region) {
  std::lock_guard lk(mu_);
  reached_ = std::max(reached_, region);
  release_locked(reached_);
}

void SlaveLines::release_all() {
  std::lock_guard lk(mu_);
  reached_ = UINT64_MAX;  // and what still arrives goes straight out
  release_locked(reached_);
}

// Releases the held lines, in arrival order, up to the first one of a later region.
void SlaveLines::release_locked(uint64_t up_to) {
  while (!held_.empty() && held_.front().region <= up_to) {
    Held& h = held_.front();
    terminal_.write(h.from, h.stream, h.bytes);
    held_.pop_front();
  }
}

}  // namespace cape::net

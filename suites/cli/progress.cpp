#include "suites/cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cctype>
#include <cmath>
#include <set>
#include <string>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

namespace gnncheck::suites {
namespace {

using Clock = std::chrono::steady_clock;

std::string label_text(const TaskLabel& t) { return fmt::format("{}: {}/{}/{}", t.entry, t.system, t.target, t.check); }

// A replica's single check that does not catch it is no unmet expectation by itself (another check
// of the entry may catch it; the final table decides): progress shows what this check found.
bool visibly_unmet(const reports::ResultRecord& r) {
  return !r.expectation_held && r.expectation != reports::Expectation::caught;
}

std::string first_line(const std::string& s) {
  const auto nl = s.find('\n');
  std::string line = nl == std::string::npos ? s : s.substr(0, nl);
  return line.size() > 160 ? line.substr(0, 157) + "..." : line;
}

class ProgressBase : public ProgressSink {
 public:
  explicit ProgressBase(std::ostream& out) : out_(out), start_(Clock::now()) {}
  void planned(std::size_t tasks) override { total_ = tasks; }
  // Said at once, so that the wait for the tasks in progress is not a silent one.
  void stopping(const std::string& signal, const std::vector<TaskLabel>& in_progress, std::size_t not_started,
                bool stop_now_offered) override {
    clear_line();
    std::vector<std::string> names;
    for (const TaskLabel& t : in_progress) names.push_back(label_text(t));
    fmt::print(out_, "{}: stopping. {}; {} not started {} not tested. {}\n", signal,
               names.empty() ? std::string("no task in progress")
                             : names.size() == 1
                                 ? fmt::format("finishing the task in progress (its cases so far are kept): {}", names[0])
                                 : fmt::format("finishing the {} tasks in progress (their cases so far are kept): {}",
                                               names.size(), fmt::join(names, "; ")),
               not_started, not_started == 1 ? "is" : "are",
               stop_now_offered ? "Interrupt again to stop at once: the report still gets what has finished."
                                : "Interrupt again to stop at once.");
    out_ << std::flush;
  }

 protected:
  virtual void clear_line() {}
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // A result's message for its progress line: its first line the first time, then a pointer to it
  // (a system that could not start has one cause for every check of every entry: shown once).
  std::string shown_once(const std::string& message) {
    if (!message.empty() && !shown_.insert(message).second) return "the same as above";
    return first_line(message);
  }
  void count(const reports::ResultRecord& r) {
    ++done_;
    if (visibly_unmet(r)) ++unmet_;
    if (r.outcome == reports::Outcome::fail || r.outcome == reports::Outcome::error) ++failing_;
  }
  std::ostream& out_;
  Clock::time_point start_;
  std::size_t total_ = 0, done_ = 0, unmet_ = 0, failing_ = 0;
  std::set<std::string> shown_;
};

// A status line redrawn in place (carriage return + clear to end of line).
class TerminalProgress final : public ProgressBase {
 public:
  using ProgressBase::ProgressBase;
  ~TerminalProgress() override { clear_line(); }
  void clear_line() override {
    if (drawn_) out_ << "\r\033[K" << std::flush;
  }
  void started(const TaskLabel& t) override {
    running_ = label_text(t);
    draw();
  }
  void finished(const TaskLabel&, const reports::ResultRecord& r) override {
    count(r);
    if (visibly_unmet(r)) {  // keep unmet expectations on screen as they happen
      out_ << "\r\033[K";
      std::string outcome(reports::to_string(r.outcome));
      for (char& ch : outcome) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      fmt::print(out_, "{:<12} {}: {}/{}/{}: {}\n", outcome, r.entry, r.system, r.target, r.check, shown_once(r.message));
    }
    draw();
  }

 private:
  void draw() {
    const double e = elapsed();
    std::string estimate = "estimating";
    if (done_ > 0 && done_ < total_) estimate = "~" + format_duration(e / static_cast<double>(done_) * static_cast<double>(total_ - done_)) + " left";
    if (done_ == total_) estimate = "done";
    std::string line = fmt::format("[{}/{}] {} failing | {} unmet | {} elapsed | {} | {}", done_, total_, failing_, unmet_,
                                   format_duration(e), estimate, running_);
    // Never wrap: a wrapped status line cannot be redrawn in place.
    const std::size_t columns = terminal_columns();
    if (line.size() >= columns) line = line.substr(0, columns - 4) + "...";
    out_ << "\r\033[K" << line << std::flush;
    drawn_ = true;
  }
  static std::size_t terminal_columns() {
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
    return 100;
  }
  std::string running_;
  bool drawn_ = false;
};

// One line per finished task, for logs.
class PlainProgress final : public ProgressBase {
 public:
  using ProgressBase::ProgressBase;
  void finished(const TaskLabel& t, const reports::ResultRecord& r) override {
    count(r);
    std::string verdict(reports::to_string(r.outcome));
    if (r.expectation == reports::Expectation::caught && r.outcome == reports::Outcome::fail)
      verdict = "caught";
    else if (r.expectation == reports::Expectation::caught && r.outcome == reports::Outcome::pass)
      verdict = "not caught here";
    const bool neutral = r.outcome == reports::Outcome::skipped || r.outcome == reports::Outcome::not_applicable ||
                         r.outcome == reports::Outcome::not_tested || r.outcome == reports::Outcome::inconclusive;
    fmt::print(out_, "[{}/{}] {:<15} {:<5} {} ({} of {} cases conclusive, {:.2f} s){}\n", done_, total_, verdict,
               visibly_unmet(r) ? "UNMET" : "", label_text(t), r.conclusive, r.cases, r.seconds,
               neutral ? " — " + shown_once(r.message) : "");
    out_ << std::flush;
  }
};

}  // namespace

std::string format_duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.0f} s", std::floor(seconds));
  const long s = std::lround(seconds);
  if (s < 3600) return fmt::format("{}:{:02}", s / 60, s % 60);
  return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

std::unique_ptr<ProgressSink> make_progress(std::ostream& out, bool interactive) {
  if (interactive) return std::make_unique<TerminalProgress>(out);
  return std::make_unique<PlainProgress>(out);
}

}  // namespace gnncheck::suites

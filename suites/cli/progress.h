// gnncheck/suites/cli/progress.h — the progress display of `gnncheck run`.
//
// On a terminal one status line is redrawn in place — tasks done of total, failures so far,
// elapsed time, an estimate of the time left, and what is running. When the output is not a
// terminal (CI logs, pipes) each finished task prints one plain line instead, so logs stay readable.
//
//   auto progress = gnncheck::suites::make_progress(std::cout, /*interactive=*/isatty(1));
//   gnncheck::suites::run_suite(suite, registry, options, progress.get());
#pragma once

#include <memory>
#include <ostream>

#include "suites/runner.h"

namespace gnncheck::suites {

std::unique_ptr<ProgressSink> make_progress(std::ostream& out, bool interactive);

// "1:05" / "12 s": how the progress line and the final table show durations.
std::string format_duration(double seconds);

}  // namespace gnncheck::suites

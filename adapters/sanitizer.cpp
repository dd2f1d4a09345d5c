#include "adapters/sanitizer.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "platform/device_memory.h"
#include "core/error.h"

namespace gnncheck::sanitizer {
namespace fs = std::filesystem;

std::string_view to_string(Tool t) {
  switch (t) {
    case Tool::memcheck: return "memcheck";
    case Tool::racecheck: return "racecheck";
    case Tool::initcheck: return "initcheck";
  }
  return "?";
}

Tool parse_tool(std::string_view name) {
  for (Tool t : {Tool::memcheck, Tool::racecheck, Tool::initcheck})
    if (name == to_string(t)) return t;
  throw InputError(fmt::format("unknown sanitizer tool '{}'; expected memcheck, racecheck or initcheck", name));
}

fs::path find_program() {
  std::vector<std::string> looked;
  if (const char* env = std::getenv("GNNCHECK_COMPUTE_SANITIZER"); env && *env) {
    if (access(env, X_OK) == 0) return env;
    looked.push_back(fmt::format("$GNNCHECK_COMPUTE_SANITIZER = {} (not an executable file)", env));
  }
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env ? path_env : "";
  for (size_t begin = 0; begin <= path.size() && !path.empty();) {
    const size_t end = std::min(path.find(':', begin), path.size());
    const fs::path candidate = fs::path(end == begin ? "." : path.substr(begin, end - begin)) / "compute-sanitizer";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    begin = end + 1;
  }
  looked.push_back(fmt::format("compute-sanitizer on PATH ({})", path.empty() ? "PATH is empty" : path));
  const fs::path cuda = "/usr/local/cuda/bin/compute-sanitizer";
  if (access(cuda.c_str(), X_OK) == 0) return cuda;
  looked.push_back(cuda.string());
  throw InputError(fmt::format("--sanitize: NVIDIA compute-sanitizer (part of the CUDA toolkit) was not found; looked at: "
                               "{}. Install the toolkit or set GNNCHECK_COMPUTE_SANITIZER to its path.",
                               fmt::join(looked, "; ")));
}

void require_device() {
  std::string why;
  const std::optional<unsigned> devices = device_memory::device_count(&why);
  if (!devices || *devices == 0)
    throw InputError(fmt::format("--sanitize: no NVIDIA GPU can be used here ({}); compute-sanitizer checks GPU "
                                 "kernels as they run, so there is nothing to sanitize",
                                 devices ? "the driver sees no device" : why));
}

std::vector<std::string> wrapper(const fs::path& program, Tool tool, const fs::path& log_dir) {
  return {program.string(),
          "--tool",
          std::string(to_string(tool)),
          "--print-limit",
          std::to_string(kPrintLimit),
          "--error-exitcode",
          std::to_string(kErrorExitCode),
          "--log-file",
          (log_dir / "sanitizer.%p.log").string(),
          "--"};
}

namespace {

std::string trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The sanitizer's line prefix ("========= " by default); what follows it, or nullopt for a line without it.
std::optional<std::string_view> strip_prefix(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == '=') ++i;
  if (i < 3) return std::nullopt;
  std::string_view rest = line.substr(i);
  if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
  return rest;
}

// "at <where>" as both layouts print it: "at kernel(args)+0x1a0 in file.cu:13" (CUDA 12 and later)
// and "at 0x1a0 in file.cu:13:kernel(args)" / "at 0x1a0 in kernel(args)" (earlier).
void parse_site(std::string_view text, Finding& f) {
  const size_t at = text.find(" at ");
  if (at == std::string_view::npos && !starts_with(text, "at ")) return;
  std::string s(text.substr(at == std::string_view::npos ? 3 : at + 4));
  for (std::string_view stop : {" [", " and "})
    if (const size_t cut = s.find(stop); cut != std::string::npos) s.resize(cut);
  s = trim(s);
  static const std::regex file_line(R"(^(\S+\.\w+):(\d+)(?::(.*))?$)");
  if (starts_with(s, "0x")) {
    const size_t in = s.find(" in ");
    if (in == std::string::npos) return;
    const std::string rest = s.substr(in + 4);
    std::smatch m;
    if (std::regex_match(rest, m, file_line)) {
      f.location = fmt::format("{}:{}", fs::path(m[1].str()).filename().string(), m[2].str());
      f.kernel = trim(m[3].str());
    } else {
      f.kernel = rest;
    }
    return;
  }
  const size_t in = s.rfind(" in ");
  std::string where = in == std::string::npos ? s : s.substr(0, in);
  if (in != std::string::npos) {
    std::smatch m;
    const std::string file = s.substr(in + 4);
    if (std::regex_match(file, m, file_line))
      f.location = fmt::format("{}:{}", fs::path(m[1].str()).filename().string(), m[2].str());
  }
  if (const size_t plus = where.rfind("+0x"); plus != std::string::npos) where.resize(plus);
  f.kernel = trim(where);
}

// The library of a "Host Frame:" line: "Host Frame: name [0x1f] in libx.so" (CUDA 12 and later) or
// "Host Frame:/path/libx.so (name + 0x1f) [0x2a]" (earlier).
std::string host_frame_library(std::string_view text) {
  const size_t colon = text.find("Host Frame:");
  if (colon == std::string_view::npos) return {};
  std::string rest = trim(text.substr(colon + 11));
  std::string lib;
  if (const size_t in = rest.rfind(" in "); in != std::string::npos) {
    lib = trim(rest.substr(in + 4));
  } else {
    const size_t end = rest.find_first_of(" [(");
    lib = rest.substr(0, end);
  }
  return fs::path(lib).filename().string();
}

bool is_cuda_runtime_library(std::string_view lib) {
  const std::string l = lower(lib);
  return starts_with(l, "libcuda.so") || starts_with(l, "libcudart") || l.find("sanitizer") != std::string::npos ||
         l.empty();
}

void finish(std::vector<Finding>& findings, std::optional<Finding>& current) {
  if (!current) return;
  current->vendor = is_vendor(current->kernel, current->host_library);
  findings.push_back(std::move(*current));
  current.reset();
}

}  // namespace

bool is_vendor(std::string_view kernel, std::string_view host_library) {
  const std::string k = lower(kernel);
  for (std::string_view family : {"cusparse", "cublas", "cutlass", "curand", "cufft", "cudnn", "cusolver", "nccl"}) {
    // A namespace or a name prefix of the family (after an optional return type): "void cusparse::x<…>",
    // "cublasLt::…", "cutlass::Kernel<…>".
    for (const std::string& lead : {std::string(family), "void " + std::string(family)})
      if (starts_with(k, lead)) return true;
    if (k.find(std::string(family) + "::") != std::string::npos) return true;
  }
  const std::string lib = lower(host_library);
  for (std::string_view family : {"libcusparse", "libcublas", "libcurand", "libcufft", "libcudnn", "libcusolver", "libnccl"})
    if (starts_with(lib, family)) return true;
  return false;
}

LogReport parse_log(std::string_view text) {
  LogReport report;
  std::optional<Finding> current;
  static const std::regex error_summary(R"(^ERROR SUMMARY: (\d+) errors?)");
  static const std::regex race_summary(R"(^RACECHECK SUMMARY: (\d+) hazards? displayed)");
  std::istringstream in{std::string(text)};
  std::string raw;
  while (std::getline(in, raw)) {
    const std::optional<std::string_view> stripped = strip_prefix(raw);
    if (!stripped) continue;  // not a sanitizer line
    const std::string_view body = *stripped;
    if (trim(body).empty()) {
      finish(report.findings, current);
      continue;
    }
    if (body[0] == ' ' || body[0] == '\t') {  // a continuation of the current finding
      if (!current) continue;
      current->text += "\n" + std::string(body);
      const std::string line = trim(body);
      if (current->kernel.empty() && starts_with(line, "at ")) parse_site(line, *current);
      if (line.find("Host Frame:") != std::string::npos && current->host_library.empty()) {
        const std::string lib = host_frame_library(line);
        if (!is_cuda_runtime_library(lib)) current->host_library = lib;
      }
      continue;
    }
    finish(report.findings, current);
    const std::string line = trim(body);
    std::smatch m;
    if (std::regex_search(line, m, error_summary) || std::regex_search(line, m, race_summary)) {
      report.summary_count = std::max<std::int64_t>(report.summary_count.value_or(0), std::stoll(m[1].str()));
      report.complete = true;
      continue;
    }
    if (line == "COMPUTE-SANITIZER" || starts_with(line, "LEAK SUMMARY") || starts_with(line, "Target application returned") ||
        starts_with(line, "Process did not terminate successfully") || starts_with(line, "This can occur"))
      continue;
    const bool is_warning = starts_with(line, "Warning:");
    const bool is_error = starts_with(line, "Error:");
    if ((is_warning || is_error) && line.find("Race") == std::string::npos && line.find("hazard") == std::string::npos) {
      report.tool_messages.push_back(line);  // the sanitizer's own complaint, not a finding
      continue;
    }
    if (starts_with(line, "Internal Sanitizer Error")) {
      report.tool_messages.push_back(line);
      continue;
    }
    current = Finding{};
    current->headline = line;
    current->warning = is_warning;
    current->text = line;
    parse_site(line, *current);
  }
  finish(report.findings, current);
  return report;
}

SystemFindings read_logs(const fs::path& log_dir, Tool tool, std::optional<int> last_exit_code) {
  SystemFindings out;
  std::vector<fs::path> logs;
  std::error_code ec;
  for (fs::directory_iterator it(log_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (starts_with(name, "sanitizer.") && it->path().extension() == ".log") logs.push_back(it->path());
  }
  std::sort(logs.begin(), logs.end());
  out.logs = static_cast<int>(logs.size());
  if (logs.empty())
    out.problems.push_back(fmt::format("no compute-sanitizer log in {}: the system never ran under the sanitizer",
                                       log_dir.string()));
  std::vector<std::string> own_lines, vendor_lines;
  for (const fs::path& log : logs) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    const LogReport r = parse_log(text.str());
    if (!r.complete)
      out.problems.push_back(fmt::format("{} ends without the sanitizer's summary line (the process was killed or "
                                         "crashed before the sanitizer finished): its findings are incomplete",
                                         log.filename().string()));
    for (const std::string& m : r.tool_messages)
      out.problems.push_back(fmt::format("{}: compute-sanitizer: {}", log.filename().string(), m));
    for (const Finding& f : r.findings) {
      const std::string where = fmt::format("{}{}{}", f.kernel.empty() ? "(host API call)" : f.kernel,
                                            f.location.empty() ? "" : " at " + f.location,
                                            f.host_library.empty() ? "" : ", launched from " + f.host_library);
      (f.vendor ? vendor_lines : own_lines).push_back(fmt::format("{} — {}", f.headline, where));
      ++(f.vendor ? out.vendor : out.own);
    }
    if (r.summary_count && *r.summary_count > static_cast<std::int64_t>(r.findings.size()))
      out.unattributed += *r.summary_count - static_cast<std::int64_t>(r.findings.size());
  }
  if (last_exit_code && *last_exit_code == kErrorExitCode && out.own + out.vendor + out.unattributed == 0)
    out.problems.push_back(fmt::format("the sanitizer exited with code {} (--error-exitcode: it found something) but no "
                                       "finding could be read from its log",
                                       kErrorExitCode));
  constexpr size_t kListed = 20;
  auto list = [&](const std::vector<std::string>& lines, std::string_view title) {
    if (lines.empty()) return;
    out.details += fmt::format("\n{} ({}):", title, lines.size());
    for (size_t i = 0; i < std::min(lines.size(), kListed); ++i) out.details += "\n  " + lines[i];
    if (lines.size() > kListed) out.details += fmt::format("\n  … and {} more", lines.size() - kListed);
  };
  list(own_lines, fmt::format("{} findings in the system's own kernels (counted)", to_string(tool)));
  list(vendor_lines, fmt::format("{} findings inside vendor libraries (listed, not counted)", to_string(tool)));
  return out;
}

}  // namespace gnncheck::sanitizer

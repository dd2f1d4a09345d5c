// gnncheck/adapters/command_line.h — an adapter's command line, split without a shell and checked
// before anything starts (PROTOCOL.md §1).
//
//   std::vector<std::string> argv = split_command_line("python3 'my adapter.py' --device cuda");
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gnncheck {

// Splits a command line into arguments as PROTOCOL.md §1 documents, without a shell: blanks separate
// arguments, '…' is literal, "…" allows \" and \\, a backslash outside quotes escapes the next
// character. Throws InputError on an unterminated quote or an empty command.
std::vector<std::string> split_command_line(const std::string& command);

// Why `command` cannot be run, found without starting anything; nullopt when it can be tried. Says
// which: an empty command, an unterminated quote, a program not found on PATH (naming PATH), a path
// that does not exist, is a directory or is not executable, or a script whose #! interpreter is
// missing. The CLI and the suite loader call it before a run starts, to refuse a bad --adapter with
// exit code 2 instead of a run whose every verdict is "not tested".
// A relative program path (one with a '/') is looked up in `working_directory` when it is given.
std::optional<std::string> adapter_command_problem(const std::string& command,
                                                   const std::filesystem::path& working_directory = {});

}  // namespace gnncheck

#include "adapters/command_line.h"

#include <fmt/format.h>

#include "adapters/child_process.h"
#include "core/error.h"

namespace gnncheck {

std::vector<std::string> split_command_line(const std::string& command) {
  std::vector<std::string> args;
  std::string current;
  bool in_argument = false;
  for (size_t i = 0; i < command.size(); ++i) {
    const char ch = command[i];
    if (ch == ' ' || ch == '\t') {
      if (in_argument) args.push_back(std::move(current));
      current.clear();
      in_argument = false;
    } else if (ch == '\'') {
      const size_t close = command.find('\'', i + 1);
      if (close == std::string::npos)
        throw InputError(fmt::format("command '{}': the single quote at position {} is never closed", command, i));
      current += command.substr(i + 1, close - i - 1);
      in_argument = true;
      i = close;
    } else if (ch == '"') {
      size_t k = i + 1;
      for (; k < command.size() && command[k] != '"'; ++k) {
        if (command[k] == '\\' && k + 1 < command.size() && (command[k + 1] == '"' || command[k + 1] == '\\')) ++k;
        current += command[k];
      }
      if (k >= command.size())
        throw InputError(fmt::format("command '{}': the double quote at position {} is never closed", command, i));
      in_argument = true;
      i = k;
    } else if (ch == '\\' && i + 1 < command.size()) {
      current += command[++i];
      in_argument = true;
    } else {
      current += ch;
      in_argument = true;
    }
  }
  if (in_argument) args.push_back(std::move(current));
  if (args.empty()) throw InputError("adapter command is empty: expected a program and its arguments");
  return args;
}


std::optional<std::string> adapter_command_problem(const std::string& command, const std::filesystem::path& working_directory) {
  std::vector<std::string> args;
  try {
    args = split_command_line(command);
  } catch (const InputError& e) {
    return e.what();
  }
  if (!working_directory.empty() && args[0].find('/') != std::string::npos && std::filesystem::path(args[0]).is_relative())
    args[0] = (working_directory / args[0]).lexically_normal().string();
  if (auto problem = program_problem(args[0])) return fmt::format("adapter command '{}': {}", command, *problem);
  return std::nullopt;
}

}  // namespace gnncheck

// gnncheck/core/error.h — the exception types every part of gnncheck throws.
//
// InputError: the user's input is wrong (a file, a suite, a flag, a tensor shape handed in by a
// system). Its message names the file/line/field and says what was expected; the command line
// maps it to exit code 2. InternalError: a broken invariant inside gnncheck itself.
//
//   throw gnncheck::InputError(fmt::format("{}:{}: expected 3 fields, found {}", path, line, n));
#pragma once

#include <stdexcept>
#include <string>

namespace gnncheck {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace gnncheck

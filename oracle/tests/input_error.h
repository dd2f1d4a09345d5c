// gnncheck/oracle/tests/input_error.h — the message of the InputError a call throws, for tests that
// check what an error says (the op, the argument, what was expected).
//
//   EXPECT_THAT(input_error_of([&] { spmm_forward(g, x); }), HasSubstr("spmm: input x"));
#pragma once

#include <string>

#include "core/error.h"

namespace gnncheck::oracle {

// fn's InputError message, or "(no InputError thrown)" when it returns normally.
template <class Fn>
std::string input_error_of(Fn fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError thrown)";
}

}  // namespace gnncheck::oracle

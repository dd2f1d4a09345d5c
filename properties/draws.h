// gnncheck/properties/draws.h — the RapidCheck draws the graph and case generators share
// (generators.h): choices that shrink toward their first entry, and draws that are uniform at every
// RapidCheck size (the fixed fractions of properties/README.md).
#pragma once

#include <cstddef>
#include <vector>

#include <rapidcheck.h>

namespace gnncheck::properties {

// One of 0..n-1, uniformly at every RapidCheck size (inRange alone scales toward 0 at small sizes),
// shrinking toward 0: the draw behind each fixed fraction of the README.
inline int fixed_fraction_draw(int n) { return *rc::gen::resize(100, rc::gen::inRange(0, n)); }

// gen::element/elementOf do not shrink in RapidCheck; an index from inRange shrinks toward 0, so
// choices shrink toward the first (simplest) entry.
template <class T>
T pick(const std::vector<T>& choices) {
  return choices[*rc::gen::inRange<std::size_t>(0, choices.size())];
}

// pick() at every RapidCheck size alike (inRange alone draws the first choices at small sizes): a
// drawn shape must reach its far choices — widths past 64 — in the first cases of a short run too.
template <class T>
T uniform_pick(const std::vector<T>& choices) {
  return choices[*rc::gen::resize(100, rc::gen::inRange<std::size_t>(0, choices.size()))];
}

}  // namespace gnncheck::properties

// A check task's cases come in chunks (suites/task.h); the record of several chunks together is the
// record the whole run would have made of them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.h"
#include "properties/case_loop.h"
#include "suites/task.h"

namespace gnncheck::suites {
namespace {

using reports::Outcome;
using reports::ResultRecord;

void fill_from_record(ResultRecord& r, const ResultRecord& from) {
  r.metric_name = from.metric_name;
  r.metric = from.metric;
  r.bound = from.bound;
  r.tolerance_model = from.tolerance_model;
}

// A message with the runner's notes (the last lines) taken off.
std::string without_notes(const std::string& message, const std::string& notes) {
  if (notes.empty()) return message;
  if (message == notes) return {};
  const std::string tail = "\n" + notes;
  if (message.size() >= tail.size() && message.compare(message.size() - tail.size(), tail.size(), tail) == 0)
    return message.substr(0, message.size() - tail.size());
  return message;
}

// The outcome of a task none of whose cases failed: only a task with a conclusive case passes.
void decide(const properties::CaseTally& tally, const std::string& target, ResultRecord& r) {
  r.cases = tally.drawn;
  r.conclusive = tally.conclusive;
  const std::string counts = properties::describe_tally(tally);
  switch (properties::conclusion_without_failure(tally)) {
    case checks::Conclusion::pass:
      r.outcome = Outcome::pass;
      r.message = counts;
      break;
    case checks::Conclusion::unsupported:
      r.outcome = Outcome::not_tested;
      r.message = fmt::format("{} — the system lists target '{}' as supported but answered none of its cases ({})", counts,
                              target, tally.first_unsupported.empty() ? "no case was drawn" : tally.first_unsupported);
      break;
    case checks::Conclusion::inconclusive:
      r.outcome = Outcome::inconclusive;
      // The counts list the causes; a tally without them (a shard of an earlier version) names the first.
      r.message = tally.inconclusive_causes.empty()
                      ? fmt::format("{} — nothing was verified (first: {})", counts, tally.first_inconclusive)
                      : fmt::format("{} — nothing was verified", counts);
      break;
    default:
      r.outcome = Outcome::not_applicable;
      r.message = fmt::format("{} — {}", counts, tally.first_not_applicable);
  }
}

}  // namespace

std::int64_t chunk_count(std::int64_t cases) { return std::max<std::int64_t>(1, (cases + kCasesPerChunk - 1) / kCasesPerChunk); }

ResultRecord combine_chunks(const std::vector<ResultRecord>& parts) {
  if (parts.empty() || !std::all_of(parts.begin(), parts.end(), [](const ResultRecord& p) { return p.chunked.has_value(); }))
    throw std::logic_error("combine_chunks: every part needs its chunks");
  const ResultRecord* lead = nullptr;  // the part holding the chunk that ended the drawing first
  for (const auto& p : parts)
    if (p.chunked->ended_at >= 0 && (!lead || p.chunked->ended_at < lead->chunked->ended_at)) lead = &p;
  const std::int64_t last = lead ? lead->chunked->ended_at : std::numeric_limits<std::int64_t>::max();
  const reports::ChunkedCases& first = *parts.front().chunked;
  ResultRecord r = lead ? *lead : parts.front();
  r.error_vs_bound.clear();
  r.seconds = 0;
  reports::ChunkedCases c{.of = first.of, .notes = first.notes};

  struct Piece {
    reports::CaseChunk chunk;
    const ResultRecord* from;
    std::size_t offset;  // its first point in from->error_vs_bound
  };
  std::vector<Piece> pieces;
  for (const auto& p : parts) {
    r.seconds += p.seconds;
    std::size_t offset = 0;
    for (const auto& k : p.chunked->ran) {
      pieces.push_back({k, &p, offset});
      offset += static_cast<std::size_t>(k.points);
    }
  }
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.chunk.index < b.chunk.index; });
  properties::CaseTally tally;
  for (const auto& piece : pieces) {
    if (piece.chunk.index > last) break;
    if (!c.ran.empty() && c.ran.back().index == piece.chunk.index)
      throw InputError(fmt::format("chunk {} of {} {} {} was run twice", piece.chunk.index, r.system, r.target, r.check));
    c.ran.push_back(piece.chunk);
    tally.drawn += piece.chunk.drawn;
    tally.conclusive += piece.chunk.conclusive;
    tally.unsupported += piece.chunk.unsupported;
    tally.not_applicable += piece.chunk.not_applicable;
    tally.inconclusive += piece.chunk.inconclusive;
    tally.moved += piece.chunk.moved;
    const auto& points = piece.from->error_vs_bound;
    r.error_vs_bound.insert(r.error_vs_bound.end(), points.begin() + static_cast<std::ptrdiff_t>(piece.offset),
                            points.begin() + static_cast<std::ptrdiff_t>(piece.offset + piece.chunk.points));
  }
  // The first reason of each kind among the chunks counted.
  auto first_reason = [&](reports::ChunkReason reports::ChunkedCases::*field) {
    reports::ChunkReason best;
    for (const auto& p : parts) {
      const reports::ChunkReason& reason = (*p.chunked).*field;
      if (reason.chunk >= 0 && reason.chunk <= last && (best.chunk < 0 || reason.chunk < best.chunk)) best = reason;
    }
    return best;
  };
  c.first_unsupported = first_reason(&reports::ChunkedCases::first_unsupported);
  c.first_not_applicable = first_reason(&reports::ChunkedCases::first_not_applicable);
  c.first_inconclusive = first_reason(&reports::ChunkedCases::first_inconclusive);
  tally.first_unsupported = c.first_unsupported.text;
  tally.first_not_applicable = c.first_not_applicable.text;
  tally.first_inconclusive = c.first_inconclusive.text;
  // Every counted chunk's causes, in chunk order: a cause's first reason is its earliest chunk's.
  for (const auto& p : parts)
    for (const auto& cause : p.chunked->inconclusive_causes)
      if (cause.chunk <= last) c.inconclusive_causes.push_back(cause);
  std::stable_sort(c.inconclusive_causes.begin(), c.inconclusive_causes.end(),
                   [](const reports::ChunkCause& a, const reports::ChunkCause& b) { return a.chunk < b.chunk; });
  for (const auto& cause : c.inconclusive_causes) properties::add_cause(tally.inconclusive_causes, cause.text, cause.cases);

  if (lead) {
    // An ended task shows the chunk that ended it: its failure (and counterexample), error or stop.
    c.ended_at = last;
    c.end = lead->chunked->end;
    c.end_text = lead->chunked->end_text;
    c.worst_chunk = lead->chunked->worst_chunk;
    if (c.end == reports::ChunkEnd::failure) {
      r.message = without_notes(lead->message, c.notes);
    } else if (c.end == reports::ChunkEnd::source_error) {
      r.outcome = Outcome::error;
      r.error_not_of_the_system = true;
      r.message = fmt::format("{}; {}", c.end_text, properties::describe_tally(tally));
    } else {
      r.outcome = Outcome::not_tested;
      r.message = fmt::format("{} ({} before the stop)", c.end_text, properties::describe_tally(tally));
    }
  } else {
    // The worst case over every chunk: the largest error/bound, the earliest chunk on a tie.
    const ResultRecord* worst = nullptr;
    double worst_ratio = -1;
    for (const auto& p : parts) {
      if (p.chunked->worst_chunk < 0 || !p.metric || !p.bound) continue;
      const double ratio = *p.bound > 0 ? *p.metric / *p.bound : (*p.metric > 0 ? INFINITY : 0);
      if (!worst || ratio > worst_ratio || (ratio == worst_ratio && p.chunked->worst_chunk < worst->chunked->worst_chunk)) {
        worst = &p;
        worst_ratio = ratio;
      }
    }
    r.metric_name.clear();
    r.metric.reset();
    r.bound.reset();
    r.tolerance_model.clear();
    if (worst) {
      fill_from_record(r, *worst);
      c.worst_chunk = worst->chunked->worst_chunk;
    }
    r.counterexample.clear();
    r.counterexample_case.reset();
    decide(tally, r.target, r);
  }
  r.cases = tally.drawn;
  r.conclusive = tally.conclusive;
  if (!c.notes.empty()) r.message = r.message.empty() ? c.notes : r.message + "\n" + c.notes;
  r.expectation_held = reports::expectation_held(r.expectation, r.outcome);
  r.chunked = std::move(c);
  return r;
}

}  // namespace gnncheck::suites

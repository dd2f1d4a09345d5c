#include "properties/case_loop.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gnncheck::properties {

CaseKind case_kind(const checks::Verdict& v) {
  switch (v.conclusion) {
    case checks::Conclusion::unsupported: return CaseKind::unsupported;
    case checks::Conclusion::not_applicable: return CaseKind::not_applicable;
    case checks::Conclusion::inconclusive: return CaseKind::inconclusive;
    default: return CaseKind::decided;  // pass, fail, and an error (which fails)
  }
}

bool is_decided_failure(const checks::Verdict& v) { return !v.passed() && case_kind(v) == CaseKind::decided; }

double failure_ratio(const checks::Verdict& v) {
  if (std::isnan(v.metric)) return INFINITY;
  if (v.bound > 0) return v.metric / v.bound;
  return v.metric > 0 ? INFINITY : 0.0;
}

checks::Conclusion conclusion_without_failure(const CaseTally& tally) {
  if (tally.conclusive > 0) return checks::Conclusion::pass;
  if (tally.drawn == 0 || tally.unsupported == tally.drawn) return checks::Conclusion::unsupported;
  if (tally.inconclusive > 0) return checks::Conclusion::inconclusive;
  return checks::Conclusion::not_applicable;
}

std::string cause_key(std::string_view reason) {
  // A number standing alone: "float16" and "att_src2" keep their digits.
  static const std::regex number(R"([-+]?\b\d+([.,]\d+)*(e[-+]?\d+)?)");
  return std::regex_replace(std::string(reason), number, "#");
}

std::vector<std::string> inconclusive_reasons(const checks::Verdict& v) {
  std::vector<std::string> out;
  for (const auto& tc : v.comparisons)
    if (tc.inconclusive() && !tc.reason.empty() &&
        std::none_of(out.begin(), out.end(), [&](const std::string& r) { return cause_key(r) == cause_key(tc.reason); }))
      out.push_back(tc.reason);
  if (out.empty() && !v.detail.empty()) out.push_back(v.detail);
  return out;
}

void add_cause(std::vector<InconclusiveCause>& causes, const std::string& reason, std::int64_t cases) {
  const std::string key = cause_key(reason);
  const auto it = std::find_if(causes.begin(), causes.end(), [&](const InconclusiveCause& c) { return c.key == key; });
  if (it != causes.end())
    it->cases += cases;
  else
    causes.push_back({reason, cases, key});
}

namespace {

// At most this many bytes of a cause's example in a message (cut at a character's start).
constexpr std::size_t kCauseExampleBytes = 240;
constexpr std::size_t kCausesShown = 3;

std::string shortened(const std::string& text) {
  if (text.size() <= kCauseExampleBytes) return text;
  std::size_t cut = kCauseExampleBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return text.substr(0, cut) + "…";
}

// "(18: reason; 6: reason; 2 more causes)", the most frequent first; "" without causes.
std::string describe_causes(const std::vector<InconclusiveCause>& causes) {
  if (causes.empty()) return {};
  std::vector<const InconclusiveCause*> order;
  for (const auto& c : causes) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->cases > b->cases; });
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < order.size() && i < kCausesShown; ++i)
    shown.push_back(fmt::format("{}: {}", order[i]->cases, shortened(order[i]->example)));
  if (order.size() > kCausesShown)
    shown.push_back(fmt::format("{} more cause{}", order.size() - kCausesShown, order.size() - kCausesShown == 1 ? "" : "s"));
  return fmt::format(" ({})", fmt::join(shown, "; "));
}

}  // namespace

std::string describe_tally(const CaseTally& tally) {
  std::vector<std::string> rest;
  if (tally.unsupported) rest.push_back(fmt::format("{} unsupported by the system", tally.unsupported));
  if (tally.not_applicable) rest.push_back(fmt::format("{} not applicable to the check", tally.not_applicable));
  if (tally.inconclusive)
    rest.push_back(fmt::format("{} inconclusive{}", tally.inconclusive, describe_causes(tally.inconclusive_causes)));
  const std::string moved =
      tally.moved ? fmt::format(" ({} with the logits scaled within the softmax analysis)", tally.moved) : "";
  return fmt::format("{} of {} cases conclusive{}{}{}", tally.conclusive, tally.drawn, moved, rest.empty() ? "" : ": ",
                     fmt::join(rest, ", "));
}

checks::Verdict check_case(checks::CheckKind check, System& system, const Case& c, const checks::CheckOptions& options) {
  try {
    return checks::run_check(check, system, c, options);
  } catch (const std::exception& e) {
    checks::Verdict v;
    v.check = check;
    v.system = system.name();
    v.target = c.target;
    v.seed = c.seed;
    v.conclusion = checks::Conclusion::error;
    v.message = fmt::format("{} check raised an error on this case: {}", to_string(check), e.what());
    v.detail = fmt::format("The check raised an error on this case: {}", e.what());  // failure_message prints detail
    return v;
  }
}

namespace {

// Counts what the source draws; after the first decided failure looks ahead (a wrong answer) or
// ends the drawing (an error) and remembers the clearest failure.
class CountingJudge final : public CaseJudge {
 public:
  explicit CountingJudge(const CaseLoopOptions& options) : options_(options) {}

  CaseAnswer judge(const Case& c, checks::Verdict& verdict) override {
    if (stopping()) return CaseAnswer::stop;
    verdict = options_.check(c);
    if (stopping()) return CaseAnswer::stop;  // an answer cut short by the stop is no result of the system
    const std::int64_t draw = tally.drawn++;
    if (verdict.system_status == Status::ok && verdict.conclusion != checks::Conclusion::unsupported) answered_ = true;
    switch (case_kind(verdict)) {
      case CaseKind::unsupported: note(tally.unsupported, tally.first_unsupported, verdict.detail); break;
      case CaseKind::not_applicable: note(tally.not_applicable, tally.first_not_applicable, verdict.detail); break;
      case CaseKind::inconclusive:
        note(tally.inconclusive, tally.first_inconclusive, verdict.detail);
        for (const std::string& reason : inconclusive_reasons(verdict)) add_cause(tally.inconclusive_causes, reason, 1);
        break;
      case CaseKind::decided:
        ++tally.conclusive;
        if (verdict.compared_moved) ++tally.moved;
        if (!verdict.passed()) return failed(c, verdict, draw);
        break;
    }
    if (options_.on_counted) options_.on_counted(verdict);
    return looked_ahead_enough();
  }

  void not_applicable(const std::string& why) override {
    ++tally.drawn;
    note(tally.not_applicable, tally.first_not_applicable, why);
  }

  std::optional<checks::Verdict> recheck(const Case& c) override {
    if (stopping()) return std::nullopt;
    return options_.check(c);
  }

  const std::optional<Chosen>& chosen() const override { return chosen_; }

  std::string why_not_shrunk() const override { return why_not_shrunk_; }

  bool stopping() const { return options_.stopping && options_.stopping(); }

  // What the look-ahead found, for the failure's story; empty when it found one failure.
  std::string look_ahead_note() const {
    if (failures_ < 2 || !chosen_) return {};
    const double ratio = failure_ratio(chosen_->verdict);
    if (chosen_->draw == first_draw_)
      return fmt::format("The first of {} failing cases is also the clearest ({:.3g}× its bound); the {} cases drawn "
                         "after it were checked too.", failures_, ratio, tally.drawn - 1 - first_draw_);
    return fmt::format("Led by the clearest of {} failing cases: case {} at {:.3g}× its bound; the first failure, case "
                       "{}, was at {:.3g}× (the {} cases drawn after it were checked too).",
                       failures_, chosen_->draw + 1, ratio, first_draw_ + 1, first_ratio_, tally.drawn - 1 - first_draw_);
  }

  CaseTally tally;

 private:
  CaseAnswer failed(const Case& c, const checks::Verdict& verdict, std::int64_t draw) {
    const bool wrong_answer = verdict.conclusion == checks::Conclusion::fail;
    if (!chosen_) {
      first_draw_ = draw;
      first_ratio_ = failure_ratio(verdict);
      failures_ = 1;
      chosen_ = Chosen{.c = c, .verdict = verdict, .draw = draw};
      if (!wrong_answer) {
        // An error ends the drawing at once: each more case of a crashing or hanging system costs a
        // crash or a timeout. One that never answered a case understandably is not shrunk either.
        if (!answered_ && verdict.system_status != Status::ok)
          why_not_shrunk_ = fmt::format("the system gave no understandable answer to any case of this check ({}), so each "
                                        "smaller case would only cost another one",
                                        to_string(verdict.system_status));
        return CaseAnswer::failed;
      }
      left_ = options_.look_ahead;
      return left_ > 0 ? CaseAnswer::go_on : CaseAnswer::failed;
    }
    // Looking ahead: an error ends it (the clearest wrong answer so far leads); a clearer wrong answer leads.
    if (!wrong_answer) return CaseAnswer::failed_earlier;
    ++failures_;
    if (failure_ratio(verdict) > failure_ratio(chosen_->verdict)) chosen_ = Chosen{.c = c, .verdict = verdict, .draw = draw};
    if (--left_ > 0) return CaseAnswer::go_on;
    return chosen_->draw == draw ? CaseAnswer::failed : CaseAnswer::failed_earlier;
  }

  // After a passing (or undecided) case: go on, unless the look-ahead after a failure is used up.
  CaseAnswer looked_ahead_enough() {
    if (!chosen_) return CaseAnswer::go_on;
    return --left_ > 0 ? CaseAnswer::go_on : CaseAnswer::failed_earlier;
  }

  // Keeps the first non-empty reason of a kind, for the result's message.
  static void note(std::int64_t& count, std::string& first, const std::string& why) {
    ++count;
    if (first.empty()) first = why;
  }

  const CaseLoopOptions& options_;
  std::optional<Chosen> chosen_;
  std::int64_t first_draw_ = 0;
  double first_ratio_ = 0;
  int failures_ = 0;
  int left_ = 0;
  bool answered_ = false;  // some case got an answer the check could read
  std::string why_not_shrunk_;
};

}  // namespace

CaseLoopResult run_case_loop(CaseSource& source, const CaseLoopOptions& options) {
  CountingJudge judge(options);
  CaseLoopResult out;
  out.failure = source.draw(judge);
  out.tally = judge.tally;
  out.stopped = judge.stopping();
  out.source_error = source.source_error();
  if (out.stopped) {
    out.failure.reset();  // a failure the stop cut short is no failure of the system
    return out;
  }
  if (!out.failure && judge.chosen())  // a source that does not shrink, or ran out while looking ahead
    out.failure = CaseFailure{.c = judge.chosen()->c, .verdict = judge.chosen()->verdict, .how_found = "", .provenance = {}};
  if (out.failure && judge.chosen() && !out.failure->how_found.empty())  // shrunk from the chosen case
    out.failure->as_drawn = judge.chosen()->c;
  if (out.failure) {
    std::string& story = out.failure->how_found;
    for (const std::string& note : {judge.look_ahead_note(), judge.why_not_shrunk().empty() ? std::string()
                                                                  : "Not shrunk: " + judge.why_not_shrunk() + "."})
      if (!note.empty()) story += (story.empty() ? "" : " ") + note;
  }
  return out;
}

}  // namespace gnncheck::properties

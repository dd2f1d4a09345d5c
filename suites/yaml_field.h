// gnncheck/suites/yaml_field.h — one value of a suite file, with the key path that led to it
// ("entries[2].cases") and the file it is in, so that every error names file, line and key. Used by
// the suite loader (suites/suite.cpp) only.
//
//   YamlField f(root, "", &file_name);
//   std::int64_t cases = f.mapping({"cases"}).at("cases").positive_integer();
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "core/case.h"
#include "core/error.h"
#include "suites/suite.h"

namespace gnncheck::suites {

// A YAML node together with the path of keys that led to it ("entries[2].cases") and the file it
// is in, so every error can say exactly where it is.
class YamlField {
 public:
  YamlField(YAML::Node node, std::string key_path, const std::string* file)
      : node_(std::move(node)), key_path_(std::move(key_path)), file_(file) {}

  const YAML::Node& node() const { return node_; }
  const std::string& key_path() const { return key_path_; }
  int line() const { return node_.Mark().is_null() ? 0 : node_.Mark().line + 1; }
  SourceLocation location() const { return {*file_, line()}; }

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("{}:{}: {}: {}", *file_, line(), key_path_, what));
  }

  std::string describe() const {
    if (node_.IsScalar()) return fmt::format("'{}'", node_.Scalar());
    if (node_.IsSequence()) return "a list";
    if (node_.IsMap()) return "a mapping";
    return "nothing";
  }

  bool is_map() const { return node_.IsMap(); }
  bool is_list() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }

  // A key's text. YAML allows a list or a mapping as a key ("? [a, b]"), which yaml-cpp's as<string>
  // would throw on; no suite key is one, so it is refused with the key's line (a fuzz finding).
  std::string key_text(const YAML::Node& key) const {
    if (key.IsSequence() || key.IsMap()) {
      const YamlField at(key, key_path_, file_);
      at.fail(fmt::format("a key must be a name, got {}", at.describe()));
    }
    return key.as<std::string>();
  }

  // The mapping's fields, refusing any key not in `allowed` (the message lists the allowed ones).
  std::map<std::string, YamlField> mapping(const std::vector<std::string>& allowed) const {
    if (!node_.IsMap()) fail(fmt::format("expected a mapping with keys {}, got {}", fmt::join(allowed, ", "), describe()));
    std::map<std::string, YamlField> out;
    for (const auto& kv : node_) {
      const std::string key = key_text(kv.first);
      const std::string child_path = key_path_.empty() ? key : key_path_ + "." + key;
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        YamlField at(kv.first, child_path, file_);
        at.fail(fmt::format("unknown key '{}'; expected one of: {}", key, fmt::join(allowed, ", ")));
      }
      if (out.count(key)) YamlField(kv.first, child_path, file_).fail("key given twice");
      out.emplace(key, YamlField(kv.second, child_path, file_));
    }
    return out;
  }

  // A mapping whose keys are names chosen by the user (graph families, attributes).
  std::vector<std::pair<std::string, YamlField>> named_mapping(const std::string& what) const {
    if (!node_.IsMap()) fail(fmt::format("expected a mapping of {}, got {}", what, describe()));
    std::vector<std::pair<std::string, YamlField>> out;
    for (const auto& kv : node_) {
      const std::string key = key_text(kv.first);
      out.emplace_back(key, YamlField(kv.second, key_path_ + "." + key, file_));
    }
    return out;
  }

  std::vector<YamlField> list() const {
    if (!node_.IsSequence()) fail(fmt::format("expected a list, got {}", describe()));
    std::vector<YamlField> out;
    for (std::size_t i = 0; i < node_.size(); ++i) out.emplace_back(node_[i], fmt::format("{}[{}]", key_path_, i), file_);
    return out;
  }

  // A list, or a single scalar accepted as a list of one.
  std::vector<YamlField> list_or_one() const {
    if (node_.IsSequence()) return list();
    return {*this};
  }

  std::string string() const {
    if (!node_.IsScalar()) fail(fmt::format("expected a string, got {}", describe()));
    return node_.Scalar();
  }

  std::string nonempty_string() const {
    std::string s = string();
    if (s.empty()) fail("expected a non-empty string");
    return s;
  }

  std::int64_t integer() const {
    if (!node_.IsScalar()) fail(fmt::format("expected an integer, got {}", describe()));
    std::int64_t v = 0;
    if (!YAML::convert<std::int64_t>::decode(node_, v)) fail(fmt::format("expected an integer, got {}", describe()));
    return v;
  }

  std::uint64_t unsigned_integer() const {
    if (!node_.IsScalar()) fail(fmt::format("expected a non-negative integer, got {}", describe()));
    const std::string& s = node_.Scalar();
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
      fail(fmt::format("expected a non-negative integer, got {}", describe()));
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
    if (errno == ERANGE) fail(fmt::format("expected an integer below 2^64, got {}", describe()));
    return v;
  }

  std::int64_t positive_integer() const {
    std::int64_t v = 0;
    if (!node_.IsScalar() || !YAML::convert<std::int64_t>::decode(node_, v) || v <= 0)
      fail(fmt::format("expected a positive integer, got {}", describe()));
    return v;
  }

  double real() const {
    double v = 0;
    if (!node_.IsScalar() || !YAML::convert<double>::decode(node_, v))
      fail(fmt::format("expected a number, got {}", describe()));
    return v;
  }

  bool boolean() const {
    bool v = false;
    if (!node_.IsScalar() || !YAML::convert<bool>::decode(node_, v))
      fail(fmt::format("expected true or false, got {}", describe()));
    return v;
  }

  // A number, a [min, max] pair or {min: .., max: ..}.
  IntRange int_range() const {
    IntRange r;
    if (node_.IsScalar()) {
      r.min = r.max = integer();
    } else if (node_.IsSequence()) {
      auto items = list();
      if (items.size() != 2) fail(fmt::format("expected a number or a [min, max] pair, got a list of {}", items.size()));
      r = {items[0].integer(), items[1].integer()};
    } else {
      auto m = mapping({"min", "max"});
      if (!m.count("min") || !m.count("max")) fail("expected both min and max");
      r = {m.at("min").integer(), m.at("max").integer()};
    }
    if (r.min > r.max) fail(fmt::format("min {} is greater than max {}", r.min, r.max));
    return r;
  }

  // A scalar as the attribute value it spells: true/false, an integer, a number, else a string.
  AttrValue attr_value() const {
    if (!node_.IsScalar()) fail(fmt::format("expected a scalar value, got {}", describe()));
    const bool quoted = node_.Tag() == "!";
    if (!quoted) {
      bool b = false;
      std::int64_t i = 0;
      double d = 0;
      if (YAML::convert<bool>::decode(node_, b)) return b;
      if (YAML::convert<std::int64_t>::decode(node_, i)) return i;
      if (YAML::convert<double>::decode(node_, d)) return d;
    }
    return node_.Scalar();
  }

 private:
  YAML::Node node_;
  std::string key_path_;
  const std::string* file_;
};

}  // namespace gnncheck::suites

// gnncheck/suites/cli/skeleton.h — what `gnncheck skeleton` writes, one file per language: the
// target's tensors, attributes and shapes read from the catalogue (skeleton.cpp), and the writers of
// a Python adapter and a torch check (skeleton_python.cpp) and of a C plugin (skeleton_c.cpp).
// Internal to suites/cli.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "oracle/targets.h"

namespace gnncheck::suites {

struct SkeletonTensor {
  std::string name;
  std::string role;   // input, parameter, output
  std::string lives;  // src_nodes, dst_nodes, edges, edges_csc, parameter
  std::string shape;  // "[n_src, features]"
  bool differentiable = true;
  std::string absent_when;  // "bias = false" for a tensor a case may lack; empty when always present
  std::string index_range;  // an index tensor's bound attribute ("relations"); empty for a value tensor
};

struct SkeletonAttribute {
  std::string name;
  std::string variable;  // the name, or name_attribute where a tensor has the same name
  int type = 0;          // the AttrValue alternative: 0 bool, 1 int, 2 double, 3 string
  std::string default_text;
  std::string help;
};

struct Skeleton {
  const oracle::TargetDef* def = nullptr;
  std::vector<SkeletonTensor> tensors;
  std::vector<SkeletonAttribute> attributes;

  std::vector<const SkeletonTensor*> with_role(std::initializer_list<const char*> roles) const {
    std::vector<const SkeletonTensor*> out;
    for (const auto& t : tensors)
      for (const char* r : roles)
        if (t.role == r) out.push_back(&t);
    return out;
  }
};

// The skeleton of a target: its tensors (with when an optional one is absent) and attributes.
Skeleton make_skeleton(const oracle::TargetDef& def);

// `text` with every line prefixed (trailing blanks of empty lines dropped).
std::string prefixed(const std::string& text, const std::string& prefix);
// The message a stub answers `unsupported` with until its math is written.
std::string not_implemented_message(const std::string& target);
// A tensor's shape, where it lives and when it is absent, for a comment. as_int64: the Python
// package hands an index tensor over as int64; the adapter kit and a plugin get its integers stored
// as numbers, as every tensor.
std::string tensor_comment(const SkeletonTensor& t, bool as_int64 = false);
// An example attribute declaration for the comments: the target's first enumerated attribute (a
// convention or a mode) at its default, else its first attribute; empty for a target without any.
std::pair<std::string, std::string> example_declaration(const oracle::TargetSpec& spec);

// The writers, one per --lang.
std::string python_skeleton(const Skeleton& s, const std::string& precision, const std::filesystem::path& kit_dir);
std::string torch_skeleton(const Skeleton& s, const std::string& precision);
std::string c_skeleton(const Skeleton& s, const std::string& precision);

}  // namespace gnncheck::suites

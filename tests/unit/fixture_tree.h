// A throwaway directory tree for tests that canonicalize real paths.
//
//   FixtureTree t;            // creates /tmp/agentbox-test-XXXXXX (canonical)
//   t.Dir("home/proj/src");   t.File("home/.bashrc");   t.Link("home/l", "../etc");
//   t.Path("home/proj")       // absolute path inside the tree
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace agentbox::testing {

class FixtureTree {
 public:
  FixtureTree() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "agentbox-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    root_ = std::filesystem::canonical(tmpl).string();
  }
  ~FixtureTree() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  FixtureTree(const FixtureTree&) = delete;
  FixtureTree& operator=(const FixtureTree&) = delete;

  std::string Path(const std::string& relative = "") const {
    return relative.empty() ? root_ : root_ + "/" + relative;
  }
  std::string Dir(const std::string& relative) const {
    std::filesystem::create_directories(Path(relative));
    return Path(relative);
  }
  std::string File(const std::string& relative, const std::string& text = "x\n") const {
    std::filesystem::create_directories(std::filesystem::path(Path(relative)).parent_path());
    std::ofstream(Path(relative)) << text;
    return Path(relative);
  }
  // A symlink at `relative` whose content is `target`, verbatim.
  std::string Link(const std::string& relative, const std::string& target) const {
    std::filesystem::create_directories(std::filesystem::path(Path(relative)).parent_path());
    std::filesystem::create_symlink(target, Path(relative));
    return Path(relative);
  }

 private:
  std::string root_;
};

}  // namespace agentbox::testing

// histeq completion bash: the bash completion script, written from the CLI11 app itself (its
// commands, their options, the choices of those that have them), so it never lags behind the
// options. The build writes it to share/bash-completion/completions/histeq (cmake/install.cmake).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "app/commands/commands.h"
#include "core/histogram/histogram.h"

namespace histeq::app {
namespace {

// What completion offers for one command: its words (subcommands, options) and, per option taking
// a value, the choices of that value ("" = a file name).
struct CommandWords {
  std::string name;  // "" = histeq itself
  std::vector<std::string> words;
  // Per option taking a value: its spellings and the bash that completes the value.
  std::vector<std::pair<std::vector<std::string>, std::string>> values;
};

bool safe_word(const std::string& w) {
  if (w.empty()) return false;
  for (char c : w)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ':' || c == '+')) return false;
  return true;
}

// CLI11 writes an IsMember option's choices into its type name: "TEXT:{global,clahe}".
std::string choices_of(const CLI::Option& o) {
  const std::string t = o.get_type_name();
  const size_t open = t.find('{'), close = t.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  std::string out, item;
  for (char c : t.substr(open + 1, close - open - 1) + ",") {
    if (c != ',') { item += c; continue; }
    if (safe_word(item)) out += (out.empty() ? "" : " ") + item;
    item.clear();
  }
  return out;
}

// The registry's kernels: --kernel checks its value itself, so CLI11 knows no choices for it.
std::string kernel_names() {
  std::string out;
  for (const auto& e : hist::registry())
    if (safe_word(e.info.name)) out += (out.empty() ? "" : " ") + e.info.name;
  return out;
}

// A value of `o`: one of its choices (or kernels), a file name for text, nothing to offer for a number.
std::string value_completion(const CLI::Option& o) {
  const std::string choices = o.check_lname("kernel") ? kernel_names() : choices_of(o);
  if (!choices.empty()) return "COMPREPLY=($(compgen -W '" + choices + "' -- \"$cur\"))";
  const std::string type = o.get_type_name();
  for (const char* number : {"INT", "UINT", "FLOAT", "NUMBER"})
    if (type.rfind(number, 0) == 0) return "COMPREPLY=()";
  return "COMPREPLY=($(compgen -f -- \"$cur\"))";
}

// The options of `cmd` and of its option groups (nameless subcommands in CLI11).
void add_options(const CLI::App& cmd, CommandWords& w) {
  for (const CLI::Option* o : cmd.get_options()) {
    std::vector<std::string> spellings;
    for (const auto& l : o->get_lnames()) spellings.push_back("--" + l);
    for (const auto& s : o->get_snames()) spellings.push_back("-" + s);
    spellings.erase(std::remove_if(spellings.begin(), spellings.end(), [](const std::string& s) { return !safe_word(s); }),
                    spellings.end());
    w.words.insert(w.words.end(), spellings.begin(), spellings.end());
    if (o->get_items_expected_max() > 0 && !spellings.empty()) w.values.emplace_back(spellings, value_completion(*o));
  }
  for (const CLI::App* g : cmd.get_subcommands(std::function<bool(const CLI::App*)>()))
    if (g->get_name().empty()) add_options(*g, w);
}

std::vector<CommandWords> collect(const CLI::App& app) {
  CommandWords top;
  std::vector<CommandWords> subs;
  for (const CLI::App* c : app.get_subcommands(std::function<bool(const CLI::App*)>())) {
    if (c->get_name().empty() || c->get_group().empty() || !safe_word(c->get_name())) continue;  // hidden, or an option group
    top.words.push_back(c->get_name());
    CommandWords w{c->get_name(), {}, {}};
    add_options(*c, w);
    subs.push_back(std::move(w));
  }
  add_options(app, top);
  subs.insert(subs.begin(), std::move(top));
  return subs;
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

void print_bash(const std::vector<CommandWords>& commands) {
  std::printf(
      "# bash completion for histeq: written by `histeq completion bash` from the command line's own\n"
      "# definition (its commands, options and choices); do not edit.\n"
      "_histeq() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd='' words='' i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n"
      "  done\n"
      "  case \"$cmd $prev\" in\n");
  for (const CommandWords& c : commands)
    for (const auto& [spellings, bash] : c.values) {
      std::string pattern;
      for (const std::string& s : spellings) pattern += (pattern.empty() ? "'" : "|'") + c.name + " " + s + "'";
      std::printf("    %s) %s; return ;;\n", pattern.c_str(), bash.c_str());
    }
  std::printf("  esac\n  case $cmd in\n");
  for (const CommandWords& c : commands) std::printf("    '%s') words='%s' ;;\n", c.name.c_str(), join(c.words).c_str());
  std::printf(
      "  esac\n"
      "  if [[ -z $cmd || $cur == -* ]]; then COMPREPLY=($(compgen -W \"$words\" -- \"$cur\")); return; fi\n"
      "  COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "}\n"
      "complete -o filenames -o bashdefault -F _histeq histeq\n");
}

}  // namespace

void add_completion_command(CLI::App& app, std::string& shell) {
  CLI::App* c = app.add_subcommand("completion", "print the shell completion script (bash), made from these options");
  c->group("");  // hidden: the build installs its output, users need not call it
  c->add_option("shell", shell, "the shell")->required()->check(CLI::IsMember({"bash"}));
}

int run_completion(const CLI::App& app, const std::string& shell) {
  if (shell != "bash") return fail("completion: only bash is supported", 2);
  print_bash(collect(app));
  return std::fflush(stdout) == 0 ? 0 : fail("completion: cannot write the script");
}

}  // namespace histeq::app

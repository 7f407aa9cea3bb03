// histeq completion bash|zsh|fish: the shell completion scripts, written from the CLI11 app itself
// (its commands, their options and help, the choices of those that have them), so they never lag
// behind the options. The build writes them (cmake/cli_docs.cmake) and installs them where each shell
// looks (cmake/install.cmake): share/bash-completion/completions/histeq, share/zsh/vendor-completions/
// _histeq, share/fish/vendor_completions.d/histeq.fish.
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

// One option as every shell needs it.
struct OptionWords {
  std::vector<std::string> longs;   // "--mode"
  std::vector<std::string> shorts;  // "-k"
  std::string help;                 // one line
  bool takes_value = false;
  bool repeatable = false;          // may be given more than once (a list)
  std::string choices;              // its values, space-separated; "" = none known
  bool numeric = false;             // a number: nothing to offer
};

// One command (name "" = histeq itself): its options, and whether it takes file arguments.
struct CommandWords {
  std::string name;
  std::string help;
  std::vector<OptionWords> options;
  bool files = false;
};

bool safe_word(const std::string& w) {
  if (w.empty()) return false;
  for (char c : w)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ':' || c == '+')) return false;
  return true;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s;
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

OptionWords option_words(const CLI::Option& o) {
  OptionWords w;
  for (const auto& l : o.get_lnames())
    if (safe_word("--" + l)) w.longs.push_back("--" + l);
  for (const auto& s : o.get_snames())
    if (safe_word("-" + s)) w.shorts.push_back("-" + s);
  w.help = one_line(o.get_description());
  w.takes_value = o.get_items_expected_max() > 0;
  w.repeatable = o.get_expected_max() > 1 || o.get_items_expected_max() > 1;
  w.choices = o.check_lname("kernel") ? kernel_names() : choices_of(o);
  const std::string type = o.get_type_name();
  for (const char* number : {"INT", "UINT", "FLOAT", "NUMBER"})
    if (type.rfind(number, 0) == 0) w.numeric = true;
  return w;
}

// The options of `cmd` and of its option groups (nameless subcommands in CLI11); a positional makes
// the command take files.
void add_options(const CLI::App& cmd, CommandWords& w) {
  for (const CLI::Option* o : cmd.get_options()) {
    if (!o->nonpositional()) {
      w.files = true;
      continue;
    }
    OptionWords ow = option_words(*o);
    if (!ow.longs.empty() || !ow.shorts.empty()) w.options.push_back(std::move(ow));
  }
  for (const CLI::App* g : cmd.get_subcommands(std::function<bool(const CLI::App*)>()))
    if (g->get_name().empty()) add_options(*g, w);
}

// histeq itself first, then its visible commands in their order.
std::vector<CommandWords> collect(const CLI::App& app) {
  std::vector<CommandWords> out(1);
  for (const CLI::App* c : app.get_subcommands(std::function<bool(const CLI::App*)>())) {
    if (c->get_name().empty() || c->get_group().empty() || !safe_word(c->get_name())) continue;  // hidden, or an option group
    CommandWords w{c->get_name(), one_line(c->get_description()), {}, false};
    add_options(*c, w);
    out.push_back(std::move(w));
  }
  add_options(app, out[0]);
  out[0].files = false;  // histeq takes a command first
  return out;
}

std::vector<std::string> spellings(const OptionWords& o) {
  std::vector<std::string> s = o.longs;
  s.insert(s.end(), o.shorts.begin(), o.shorts.end());
  return s;
}

std::string join(const std::vector<std::string>& words, const char* sep = " ") {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : sep) + w;
  return s;
}

// ---- bash -----------------------------------------------------------------------------------------

std::string bash_value(const OptionWords& o) {
  if (!o.choices.empty()) return "COMPREPLY=($(compgen -W '" + o.choices + "' -- \"$cur\"))";
  if (o.numeric) return "COMPREPLY=()";
  return "COMPREPLY=($(compgen -f -- \"$cur\"))";
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
    for (const OptionWords& o : c.options) {
      if (!o.takes_value) continue;
      std::string pattern;
      for (const std::string& s : spellings(o)) pattern += (pattern.empty() ? "'" : "|'") + c.name + " " + s + "'";
      std::printf("    %s) %s; return ;;\n", pattern.c_str(), bash_value(o).c_str());
    }
  std::printf("  esac\n  case $cmd in\n");
  for (const CommandWords& c : commands) {
    std::vector<std::string> words;
    if (c.name.empty())
      for (size_t i = 1; i < commands.size(); ++i) words.push_back(commands[i].name);
    for (const OptionWords& o : c.options)
      for (const std::string& s : spellings(o)) words.push_back(s);
    std::printf("    '%s') words='%s' ;;\n", c.name.c_str(), join(words).c_str());
  }
  std::printf(
      "  esac\n"
      "  if [[ -z $cmd || $cur == -* ]]; then COMPREPLY=($(compgen -W \"$words\" -- \"$cur\")); return; fi\n"
      "  COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "}\n"
      "complete -o filenames -o bashdefault -F _histeq histeq\n");
}

// ---- zsh ------------------------------------------------------------------------------------------

// `s` inside single quotes, for the shells that end a quote to write one ('\'').
std::string single_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Text inside an _arguments explanation ([...]) or a _describe item: brackets and colons escaped.
std::string zsh_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '[' || c == ']' || c == ':') out += '\\';
    out += c;
  }
  return out;
}

// One _arguments spec: '(-k --kernel)'{-k+,--kernel=}'[help]:kernel:(a b)' for an option with two
// spellings and a value, '--markdown[help]' for a flag.
std::string zsh_spec(const OptionWords& o) {
  std::vector<std::string> forms;
  for (const std::string& s : o.shorts) forms.push_back(o.takes_value ? s + "+" : s);
  for (const std::string& l : o.longs) forms.push_back(o.takes_value ? l + "=" : l);
  const bool ends = std::count(o.longs.begin(), o.longs.end(), "--help") || std::count(o.longs.begin(), o.longs.end(), "--version");
  const std::string head = ends ? "(- *)" : o.repeatable ? "*" : "(" + join(spellings(o)) + ")";  // (- *): nothing after it
  std::string spec = single_quoted(head);
  spec += forms.size() == 1 ? forms[0] : "{" + join(forms, ",") + "}";
  std::string tail = "[" + zsh_text(o.help) + "]";
  if (o.takes_value) {
    const std::string what = o.longs.empty() ? "value" : zsh_text(o.longs[0].substr(2));
    if (!o.choices.empty()) tail += ":" + what + ":(" + o.choices + ")";
    else if (o.numeric) tail += ":" + what + ": ";
    else tail += ":" + what + ":_files";
  }
  return spec + single_quoted(tail);
}

void print_zsh_arguments(const CommandWords& c, const char* indent) {
  std::printf("%s_arguments -s -S", indent);
  for (const OptionWords& o : c.options) std::printf(" \\\n%s  %s", indent, zsh_spec(o).c_str());
  if (c.files) std::printf(" \\\n%s  '*:file:_files'", indent);
}

void print_zsh(const std::vector<CommandWords>& commands) {
  std::printf(
      "#compdef histeq\n"
      "# zsh completion for histeq: written by `histeq completion zsh` from the command line's own\n"
      "# definition (its commands, options, help and choices); do not edit.\n"
      "_histeq() {\n"
      "  local curcontext=$curcontext state state_descr line ret=1\n"
      "  typeset -A opt_args\n");
  print_zsh_arguments(commands[0], "  ");
  std::printf(" \\\n    '1: :->command' '*:: :->args' && ret=0\n  case $state in\n    command)\n      local -a commands=(\n");
  for (size_t i = 1; i < commands.size(); ++i)
    std::printf("        %s\n", single_quoted(zsh_text(commands[i].name) + ":" + commands[i].help).c_str());
  std::printf("      )\n      _describe -t commands 'histeq command' commands && ret=0 ;;\n    args)\n"
              "      curcontext=${curcontext%%:*:*}:histeq-$words[1]:\n      case $words[1] in\n");
  for (size_t i = 1; i < commands.size(); ++i) {
    std::printf("        %s)\n", commands[i].name.c_str());
    print_zsh_arguments(commands[i], "          ");
    std::printf(" && ret=0 ;;\n");
  }
  std::printf(
      "      esac ;;\n  esac\n  return ret\n}\n"
      "# Autoloaded from $fpath (the installed _histeq), or sourced by hand.\n"
      "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _histeq \"$@\"; else compdef _histeq histeq; fi\n");
}

// ---- fish -----------------------------------------------------------------------------------------

std::string fish_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

void print_fish_option(const std::string& condition, const OptionWords& o) {
  std::string line = "complete -c histeq -n " + condition;
  for (const std::string& s : o.shorts) line += " -s " + s.substr(1);
  for (const std::string& l : o.longs) line += " -l " + l.substr(2);
  if (o.takes_value) {
    if (!o.choices.empty()) line += " -x -a " + fish_quoted(o.choices);
    else if (o.numeric) line += " -x";
    else line += " -r -F";
  }
  std::printf("%s -d %s\n", line.c_str(), fish_quoted(o.help).c_str());
}

void print_fish(const std::vector<CommandWords>& commands) {
  std::printf(
      "# fish completion for histeq: written by `histeq completion fish` from the command line's own\n"
      "# definition (its commands, options, help and choices); do not edit.\n"
      "complete -c histeq -f\n");
  for (const OptionWords& o : commands[0].options) print_fish_option("__fish_use_subcommand", o);
  for (size_t i = 1; i < commands.size(); ++i)
    std::printf("complete -c histeq -n __fish_use_subcommand -a %s -d %s\n", commands[i].name.c_str(),
                fish_quoted(commands[i].help).c_str());
  for (size_t i = 1; i < commands.size(); ++i) {
    const std::string condition = fish_quoted("__fish_seen_subcommand_from " + commands[i].name);
    for (const OptionWords& o : commands[i].options) print_fish_option(condition, o);
    if (commands[i].files) std::printf("complete -c histeq -n %s -F\n", condition.c_str());
  }
}

}  // namespace

void add_completion_command(CLI::App& app, std::string& shell) {
  CLI::App* c = app.add_subcommand("completion", "print the shell completion script (bash, zsh, fish), made from these options");
  c->group("");  // hidden: the build installs its output, users need not call it
  c->add_option("shell", shell, "the shell")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
}

int run_completion(const CLI::App& app, const std::string& shell) {
  const std::vector<CommandWords> commands = collect(app);
  if (shell == "bash") print_bash(commands);
  else if (shell == "zsh") print_zsh(commands);
  else if (shell == "fish") print_fish(commands);
  else return fail("completion: unknown shell '" + shell + "' (bash, zsh, fish)", 2);
  return std::fflush(stdout) == 0 ? 0 : fail("completion: cannot write the script");
}

}  // namespace histeq::app

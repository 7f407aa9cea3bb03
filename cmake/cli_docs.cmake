# Writes the man page and the shell completions of histeq from the binary itself (run by the build,
# cmake/install.cmake; never edited by hand, so they cannot lag behind the options):
#   cmake -DHISTEQ=path/to/histeq -DOUT_DIR=dir [-DHELP2MAN=path/to/help2man] -P cli_docs.cmake
# OUT_DIR/histeq.bash   `histeq completion bash`
# OUT_DIR/_histeq       `histeq completion zsh`
# OUT_DIR/histeq.fish   `histeq completion fish`
# OUT_DIR/histeq.1      help2man on `histeq --help`, plus a section per command made from that
#                       command's `histeq CMD --help` (the commands as `histeq --help` lists them),
#                       as filled roff that man wraps to the reader's width, then EXIT STATUS,
#                       EXAMPLES, FILES and SEE ALSO (cmake/man_sections.h2m and below)
cmake_minimum_required(VERSION 3.25)

function(run_histeq out_var)
  execute_process(COMMAND ${HISTEQ} ${ARGN} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cli_docs: `histeq ${ARGN}` failed (${rc})")
  endif()
  # The usage lines name the binary as it was called; the page names the command.
  string(REPLACE "${HISTEQ}" "histeq" out "${out}")
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# Written beside, then renamed: a failed run leaves the old file or none, never half of one.
function(write_output name text)
  file(WRITE ${OUT_DIR}/${name}.part "${text}")
  file(RENAME ${OUT_DIR}/${name}.part ${OUT_DIR}/${name})
endfunction()

foreach(shell_file bash:histeq.bash zsh:_histeq fish:histeq.fish)
  string(REPLACE ":" ";" shell_file "${shell_file}")
  list(GET shell_file 0 shell)
  list(GET shell_file 1 file)
  run_histeq(completion completion ${shell})
  write_output(${file} "${completion}")
endforeach()

if(NOT HELP2MAN)
  return()
endif()

# Text as roff: backslashes are roff's escape character (\e), - is written \- (a minus sign one can
# copy), and a line starting with . or ' would be a request (\& before it).
function(roff_text out_var text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  set(${out_var} "\\&${text}" PARENT_SCOPE)
endfunction()

# One command's `--help` (CLI11's layout) as filled roff, so man wraps it to the reader's width:
#   text before "Usage:"          a paragraph
#   "Usage: ..."                  a paragraph, "Usage:" in bold
#   "Options:", "Positionals:"    .SS headings
#   "  SPEC  description"         .TP entries: SPEC in bold (a comma may break the line), then the
#   "<30 spaces>more"             description and its continuation lines, filled
# CMake's lists split on ";" and stop at unbalanced "[": both are swapped out while lines are lists.
function(help_to_roff out_var help)
  string(REPLACE ";" "<semicolon>" help "${help}")
  string(REPLACE "[" "<open>" help "${help}")
  string(REPLACE "]" "<close>" help "${help}")
  string(REPLACE "\n" ";" lines "${help}")
  set(roff "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^ *$")
      continue()
    elseif(line MATCHES "^Usage: (.*)$")
      roff_text(t "${CMAKE_MATCH_1}")
      string(APPEND roff ".PP\n.B Usage:\n${t}\n")
    elseif(line MATCHES "^([A-Za-z<][^:]*):$")
      roff_text(t "${CMAKE_MATCH_1}")
      string(APPEND roff ".SS \"${t}\"\n")
    elseif(line MATCHES "^    +([^ ].*)$" AND NOT roff STREQUAL "")
      roff_text(t "${CMAKE_MATCH_1}")  # a description's continuation (at the description column)
      string(APPEND roff "${t}\n")
    elseif(line MATCHES "^  ([^ ]+( [^ ]+)*)(  +([^ ].*))?$")
      set(desc "${CMAKE_MATCH_4}")
      roff_text(s "${CMAKE_MATCH_1}")  # words apart by one space: the first two end it
      string(REPLACE "," ",\\:" s "${s}")
      string(APPEND roff ".TP\n\\fB${s}\\fR\n")  # not .B, which takes six words at most
      if(NOT desc STREQUAL "")
        roff_text(t "${desc}")
        string(APPEND roff "${t}\n")
      endif()
    else()
      string(STRIP "${line}" line)
      roff_text(t "${line}")
      string(APPEND roff ".PP\n${t}\n")
    endif()
  endforeach()
  string(REPLACE "<semicolon>" ";" roff "${roff}")
  string(REPLACE "<open>" "[" roff "${roff}")
  string(REPLACE "<close>" "]" roff "${roff}")
  set(${out_var} "${roff}" PARENT_SCOPE)
endfunction()

# The commands: the lines of `histeq --help` after "Subcommands:", "  NAME   description".
run_histeq(top --help)
string(FIND "${top}" "Subcommands:" at)
if(at LESS 0)
  message(FATAL_ERROR "cli_docs: `histeq --help` lists no subcommands")
endif()
string(SUBSTRING "${top}" ${at} -1 listing)
string(REGEX MATCHALL "\n  [a-z][a-z0-9_-]*" commands "${listing}")

# help2man's include file: a section per command ([histeq CMD]), then the sections of
# man_sections.h2m, FILES and SEE ALSO. No hyphenation in them (.nh): option names, file names and
# commands stay whole, as one would copy them.
set(include "[<DESCRIPTION]\n.nh\n")
foreach(c ${commands})
  string(STRIP "${c}" c)
  run_histeq(help ${c} --help)
  help_to_roff(roff "${help}")
  string(APPEND include "[histeq ${c}]\n.nh\n${roff}\n")
endforeach()
file(READ ${CMAKE_CURRENT_LIST_DIR}/man_sections.h2m sections)
string(APPEND include "${sections}")
string(APPEND include "[FILES]
.TP
.I PREFIX/share/histeq/
the scripts the commands run, found relative to the binary (PREFIX/bin/histeq):
.B quality.py
(\\fBhisteq quality\\fR's metrics) and
.B plot_paper.py
(\\fBhisteq bench \\-\\-paper\\fR's plots)
.TP
.I PREFIX/share/bash\\-completion/completions/histeq
.TQ
.I PREFIX/share/zsh/vendor\\-completions/_histeq
.TQ
.I PREFIX/share/fish/vendor_completions.d/histeq.fish
completion for bash, zsh and fish, written by the hidden \\fBhisteq completion bash\\fR|\\fBzsh\\fR|\\fBfish\\fR
.TP
.I PREFIX/share/doc/histeq/copyright
the licences: histeq's (MIT) and those of the code its binaries carry
[SEE ALSO]
The README, docs/api.md (the library: libhisteq, include/histeq/histeq.hpp and histeq.h) and
docs/controls.md of the source tree; \\fBhisteq controls\\fR lists every picture\\-quality control.
")
write_output(histeq.h2m "${include}")

# The version: the first line of `histeq --version` ("histeq 0.1.0"); the rest is this machine's.
run_histeq(version --version)
string(REGEX MATCH "^histeq ([^\n]+)" version "${version}")
execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=1 --version-string=${CMAKE_MATCH_1}
                        "--name=real-time GPU video histogram equalization"
                        --include=${OUT_DIR}/histeq.h2m --output=${OUT_DIR}/histeq.1.part ${HISTEQ}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cli_docs: help2man failed (${rc})")
endif()
file(RENAME ${OUT_DIR}/histeq.1.part ${OUT_DIR}/histeq.1)

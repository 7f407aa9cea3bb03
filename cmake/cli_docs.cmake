# Writes the man page and the bash completion of histeq from the binary itself (run by the build,
# cmake/install.cmake; never edited by hand, so they cannot lag behind the options):
#   cmake -DHISTEQ=path/to/histeq -DOUT_DIR=dir [-DHELP2MAN=path/to/help2man] -P cli_docs.cmake
# OUT_DIR/histeq.bash   `histeq completion bash`
# OUT_DIR/histeq.1      help2man on `histeq --help`, plus a section per command holding that
#                       command's `histeq CMD --help` (the commands as `histeq --help` lists them)
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

run_histeq(completion completion bash)
file(WRITE ${OUT_DIR}/histeq.bash.part "${completion}")
file(RENAME ${OUT_DIR}/histeq.bash.part ${OUT_DIR}/histeq.bash)

if(NOT HELP2MAN)
  return()
endif()

# The commands: the lines of `histeq --help` after "Subcommands:", "  NAME   description".
run_histeq(top --help)
string(FIND "${top}" "Subcommands:" at)
if(at LESS 0)
  message(FATAL_ERROR "cli_docs: `histeq --help` lists no subcommands")
endif()
string(SUBSTRING "${top}" ${at} -1 listing)
string(REGEX MATCHALL "\n  [a-z][a-z0-9_-]*" commands "${listing}")

# help2man's include file: a section per command, its help verbatim (.nf). Every line starts with
# \& so that no line of help text reads as a roff request or as one of help2man's [section] lines;
# backslashes are roff's escape character, and - is written \- (a minus sign one can copy).
set(include "")
foreach(c ${commands})
  string(STRIP "${c}" c)
  run_histeq(help ${c} --help)
  string(REPLACE "\\" "\\e" help "${help}")
  string(REPLACE "-" "\\-" help "${help}")
  string(REPLACE "\n" "\n\\&" help "${help}")
  string(APPEND include "[histeq ${c}]\n.nf\n\\&${help}\n.fi\n\n")
endforeach()
string(APPEND include "[FILES]
.TP
.I PREFIX/share/histeq/
the scripts the commands run, found relative to the binary (PREFIX/bin/histeq):
.B quality.py
(\\fBhisteq quality\\fR's metrics) and
.B plot_paper.py
(\\fBhisteq bench \\-\\-paper\\fR's plots)
.TP
.I PREFIX/share/bash-completion/completions/histeq
bash completion, written by the hidden \\fBhisteq completion bash\\fR
[SEE ALSO]
The README, docs/api.md (the library: libhisteq, include/histeq/histeq.hpp and histeq.h) and docs/controls.md of the
source tree; \\fBhisteq controls\\fR lists every picture\\-quality control.
")
file(WRITE ${OUT_DIR}/histeq.h2m "${include}")

execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=1
                        "--name=real-time GPU video histogram equalization"
                        --include=${OUT_DIR}/histeq.h2m --output=${OUT_DIR}/histeq.1.part ${HISTEQ}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cli_docs: help2man failed (${rc})")
endif()
file(RENAME ${OUT_DIR}/histeq.1.part ${OUT_DIR}/histeq.1)

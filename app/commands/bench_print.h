// What `histeq bench` (and its --paper and --equalize runs) show on the terminal: the lab's rows
// (lab/results.h) as aligned tables, and the --inputs list parsed with its notes.
#pragma once

#include <string>
#include <vector>

#include "lab/results.h"

namespace histeq::app {

void print_bench_header();
void print_bench_row(const lab::Row& r);  // flushed: a long bench shows each row as it ends
void print_predictability(const std::vector<lab::Predictability>& table);
// The --inputs list; 'real' is left out, with a note on stdout, when there are no frames.
Result<std::vector<lab::InputSpec>> parse_bench_inputs(const std::vector<std::string>& names, size_t real_frames);
// The command line as recorded in the result files: the arguments joined by spaces.
std::string command_line(const std::vector<std::string>& argv);

}  // namespace histeq::app

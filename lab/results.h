// The lab's results: the rows of a table of measurements, the predictability table drawn from them,
// and the files they are written to (CSV, JSON). No printing: app/commands formats them for the
// terminal.
//
// Thread: plain data and free functions; callers own the vectors. Units: microseconds, bytes,
// GB/s = 1e9 bytes per second.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "lab/engine.h"

namespace histeq::lab {

// One line of a results table.
struct Row {
  std::string experiment;  // paper mode: which figure/table; empty in the matrix
  std::string size, pitch_kind, input, kernel, backend;
  int width = 0, height = 0, bits = 8, bins = 256;
  size_t pitch = 0, bytes = 0;
  int buffers = 0;
  Measurement m;
  double x_cub = 0, x_ceiling = 0;
  // Predictability (fill_predictability): this run's p99 / median, and over the inputs of its
  // group (same experiment, size, pitch, bits and kernel) the largest median / the smallest.
  double p99_over_median = 0, maxmin_across_inputs = 0;
};
// A row with the case's fields filled in (experiment, size, pitch, bits, bins, input).
Row row_for(const CaseSpec& spec, const std::string& experiment);
// Called with each row once it is complete (its ratios filled), in table order; may be empty.
using RowSink = std::function<void(const Row&)>;

// One line of the predictability table: a kernel at one size, over the inputs it ran on.
struct Predictability {
  std::string experiment, size, pitch_kind, kernel;
  int bits = 8, inputs = 0;
  double min_median_us = 0, max_median_us = 0, max_over_min = 0, worst_p99_over_median = 0;
  std::string slowest_input, fastest_input, worst_p99_input;
};
// Fills p99_over_median and maxmin_across_inputs of every ok row and returns the table (groups of
// at least one input; max_over_min needs two).
std::vector<Predictability> fill_predictability(std::vector<Row>& rows);
// Fills x_cub and x_ceiling of rows[first..] from the "cub" and "read_ceiling" rows among them.
void fill_ratios(std::vector<Row>& rows, size_t first);

// Writes a file through `path`.tmp renamed over `path` when complete (no half-written results);
// the temporary file is removed on failure.
Status write_file(const std::string& path, const std::function<void(std::ostream&)>& body);
// Writes rows as CSV / JSON (through a temporary file renamed when complete). `command` and the
// device are recorded in both.
// The predictability columns are in both; the JSON also has the table ("predictability").
Status write_csv(const std::string& path, const std::vector<Row>& rows, const std::string& command, const std::string& device);
Status write_json(const std::string& path, const std::vector<Row>& rows, const std::string& command, const cuda::DeviceInfo* device,
                  const std::vector<Predictability>& predictability = {});

}  // namespace histeq::lab

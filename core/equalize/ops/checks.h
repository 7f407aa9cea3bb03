// The argument checks the operations' CPU and GPU entry points share (ops/*/): the LUT size, and a
// plane in the memory a function works on. Private to core/equalize; each returns a Status, never
// prints.
#pragma once

#include "core/cuda/status.h"
#include "core/equalize/lut.h"
#include "core/histogram/histogram.h"
#include "core/image/plane.h"

namespace histeq::eq {

// bins: a power of two in 2..kMaxBins.
inline Status check_bins(int bins) {
  if (hist::bins_log2(bins) < 1 || bins > kMaxBins) return HISTEQ_ERROR(Code::invalid_argument, "LUT size must be a power of two in 2..1024");
  return Status::ok();
}

// A host plane: not device memory, data where there are samples, rows no wider than the pitch.
template <class T>
Status check_host_plane(const PlaneView<T>& p) {
  if (p.memory == MemoryKind::device) return HISTEQ_ERROR(Code::invalid_argument, "a host plane is needed");
  if (!p.empty() && p.data == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null plane");
  if (p.height > 1 && p.pitch < p.row_bytes()) return HISTEQ_ERROR(Code::invalid_argument, "pitch smaller than a row");
  return Status::ok();
}

// A device plane: device memory, data where there are samples, a pitch of whole samples and rows.
template <class T>
Status check_device_plane(const PlaneView<T>& p) {
  if (p.memory != MemoryKind::device) return HISTEQ_ERROR(Code::invalid_argument, "a device plane is needed");
  if (!p.empty() && p.data == nullptr) return HISTEQ_ERROR(Code::invalid_argument, "null plane");
  if (p.height > 1 && p.pitch < p.row_bytes()) return HISTEQ_ERROR(Code::invalid_argument, "pitch smaller than a row");
  if (p.pitch % sizeof(T) != 0) return HISTEQ_ERROR(Code::invalid_argument, "pitch is not a whole number of samples");
  return Status::ok();
}

}  // namespace histeq::eq

#include "bench.h"

#include <cuda_runtime.h>

#include <chrono>
#include <vector>

#include "frames.h"

namespace histeq::py {

nb::tuple time_process(Equalizer& eq, nb::handle frames, nb::handle out, nb::handle stream_arg, int calls) {
  CallStream stream = parse_stream(stream_arg);
  nb::sequence seq = nb::borrow<nb::sequence>(frames);
  std::vector<Frames> in;
  for (size_t i = 0; i < nb::len(seq); ++i) in.push_back(parse_frames(seq[i], "frames[i]", stream, {}));
  if (in.empty()) value_error("frames: give at least one frame");
  Frames o = parse_frames(out, "out", stream, {});
  check_output(in[0], o);
  for (const Frames& f : {in[0], o})
    if (!f.direct || f.count != 1) value_error("frames: the benchmark takes single frames the equalizer reads as they are");
  std::vector<Image> images;
  for (const Frames& f : in) images.push_back(image_of(f, 0));
  const Image oi = image_of(o, 0);
  auto s = reinterpret_cast<cudaStream_t>(stream.stream);
  cudaEvent_t a = nullptr, b = nullptr;  // none without a GPU: host times only
  bool events = cudaEventCreate(&a) == cudaSuccess && cudaEventCreate(&b) == cudaSuccess;
  cudaGetLastError();
  Status status;
  std::vector<float> g(size_t(calls > 0 ? calls : 0));
  std::vector<double> h(g.size());
  {
    nb::gil_scoped_release unlocked;
    for (int i = 0; i < calls && status.ok(); ++i) {
      if (events) cudaEventRecord(a, s);
      auto t0 = std::chrono::steady_clock::now();
      status = eq.process(images[size_t(i) % images.size()], oi, stream.stream);
      auto t1 = std::chrono::steady_clock::now();
      if (events) {
        cudaEventRecord(b, s);
        cudaEventSynchronize(b);
        cudaEventElapsedTime(&g[i], a, b);
      }
      h[i] = std::chrono::duration<double, std::micro>(t1 - t0).count();
    }
  }
  nb::list gpu_us, host_us;
  for (size_t i = 0; i < g.size(); ++i) {
    if (events) gpu_us.append(double(g[i]) * 1000.0);
    host_us.append(h[i]);
  }
  if (events) {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  if (!status.ok()) value_error(status.message());
  return nb::make_tuple(gpu_us, host_us);
}

}  // namespace histeq::py

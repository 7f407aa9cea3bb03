// Equalizes a .y4m video (4:2:0 or gray, 8 or 10-bit) with libhisteq's C++ API on frames in CUDA
// device memory: each frame is copied into pitched device planes (as a decoder or a renderer would
// hold them), equalized there on the caller's stream, and copied back to be written. The frames
// are those `histeq export` writes with the same controls, bit for bit.
//   equalize_device IN.y4m OUT.y4m [CONTROL=VALUE ...]
// Exits 77 when there is no CUDA device (the tests report it as skipped).
#include <cuda_runtime.h>
#include <histeq/histeq.hpp>

#include <cstdio>
#include <vector>

#include "y4m_image.hpp"

namespace {

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

// The frame's planes in device memory, each row padded to the allocation's pitch.
struct DeviceFrame {
  void* planes[3] = {};
  size_t pitch[3] = {};
  ~DeviceFrame() {
    for (void* p : planes) cudaFree(p);
  }
};

// Host frame -> device planes -> equalized -> host frame, all on `stream`.
bool equalize_frame(histeq::Equalizer& eq, const y4m_video& v, histeq::Image image, DeviceFrame& dev,
                    unsigned char* frame, cudaStream_t stream) {
  const int bps = y4m_bytes_per_sample(&v);
  for (int p = 0; p < v.planes; ++p) {
    const size_t row = static_cast<size_t>(y4m_plane_width(&v, p)) * bps;
    if (!cuda_ok(cudaMemcpy2DAsync(dev.planes[p], dev.pitch[p], frame + y4m_plane_offset(&v, p), row, row,
                                   y4m_plane_height(&v, p), cudaMemcpyHostToDevice, stream), "upload"))
      return false;
  }
  const histeq::Status st = eq.process(image, stream);  // ordered after the uploads, before the downloads
  if (!st) return std::fprintf(stderr, "%s\n", st.message().c_str()), false;
  for (int p = 0; p < v.planes; ++p) {
    const size_t row = static_cast<size_t>(y4m_plane_width(&v, p)) * bps;
    if (!cuda_ok(cudaMemcpy2DAsync(frame + y4m_plane_offset(&v, p), row, dev.planes[p], dev.pitch[p], row,
                                   y4m_plane_height(&v, p), cudaMemcpyDeviceToHost, stream), "download"))
      return false;
  }
  return cuda_ok(cudaStreamSynchronize(stream), "synchronize");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: %s IN.y4m OUT.y4m [CONTROL=VALUE ...]\n", argv[0]), 2;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return std::fprintf(stderr, "no CUDA device\n"), 77;
  FILE* in = std::fopen(argv[1], "rb");
  y4m_video video;
  if (!in || y4m_open(&video, in) != 0) return std::fprintf(stderr, "%s: %s\n", argv[1], in ? video.error : "cannot open"), 1;

  histeq::Result<histeq::Settings> settings = settings_from_args(argc, argv, 3);
  if (!settings) return std::fprintf(stderr, "%s\n", settings.status().message().c_str()), 2;
  settings.value().set("backend", "gpu");  // the frames are on the GPU: equalize them there
  histeq::Result<histeq::Equalizer> equalizer = histeq::Equalizer::create(settings.value());
  if (!equalizer) return std::fprintf(stderr, "%s\n", equalizer.status().message().c_str()), 1;

  cudaStream_t stream = nullptr;
  DeviceFrame dev;
  histeq::Image image = image_of(video, histeq::Memory::device);  // on device 0, the current one
  if (!cuda_ok(cudaStreamCreate(&stream), "stream")) return 1;
  for (int p = 0; p < video.planes; ++p) {
    const size_t row = static_cast<size_t>(y4m_plane_width(&video, p)) * y4m_bytes_per_sample(&video);
    if (!cuda_ok(cudaMallocPitch(&dev.planes[p], &dev.pitch[p], row, y4m_plane_height(&video, p)), "allocate")) return 1;
    image.planes[p] = {dev.planes[p], dev.pitch[p]};
  }

  std::vector<unsigned char> frame(y4m_frame_bytes(&video));
  FILE* out = std::fopen(argv[2], "wb");
  if (!out || y4m_write_header(out, &video) != 0) return std::fprintf(stderr, "%s: cannot write\n", argv[2]), 1;
  int r = 0;
  for (long n = 0; (r = y4m_read_frame(&video, frame.data())) == 1; ++n) {
    image.time_s = frame_time(video, n);
    if (!equalize_frame(equalizer.value(), video, image, dev, frame.data(), stream)) return 1;
    if (y4m_write_frame(out, &video, frame.data()) != 0) return std::fprintf(stderr, "%s: cannot write\n", argv[2]), 1;
  }
  cudaStreamDestroy(stream);
  if (r < 0) return std::fprintf(stderr, "%s: %s\n", argv[1], video.error), 1;
  std::fclose(in);
  return std::fclose(out) == 0 ? 0 : 1;
}

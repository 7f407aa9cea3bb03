// Equalizes a .y4m video (4:2:0 or gray, 8 or 10-bit) frame by frame with libhisteq's C++ API, on
// host memory; the frames are those `histeq export` writes with the same controls.
//   equalize_host IN.y4m OUT.y4m [CONTROL=VALUE ...]      e.g. mode=clahe clip-limit=2 backend=cpu
#include <histeq/histeq.hpp>

#include <cstdio>
#include <vector>

#include "y4m_image.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s IN.y4m OUT.y4m [CONTROL=VALUE ...]\n", argv[0]);
    return 2;
  }
  FILE* in = std::fopen(argv[1], "rb");
  y4m_video video;
  if (!in || y4m_open(&video, in) != 0) {
    std::fprintf(stderr, "%s: %s\n", argv[1], in ? video.error : "cannot open");
    return 1;
  }
  // Every control of `histeq controls` by name, with its value as text.
  histeq::Result<histeq::Settings> settings = settings_from_args(argc, argv, 3);
  if (!settings) return std::fprintf(stderr, "%s\n", settings.status().message().c_str()), 2;
  histeq::Result<histeq::Equalizer> equalizer = histeq::Equalizer::create(settings.value());
  if (!equalizer) return std::fprintf(stderr, "%s\n", equalizer.status().message().c_str()), 1;

  std::vector<unsigned char> frame(y4m_frame_bytes(&video));
  histeq::Image image = image_of(video, histeq::Memory::host);  // the planes: tight, in `frame`
  for (int p = 0; p < video.planes; ++p) image.planes[p].data = frame.data() + y4m_plane_offset(&video, p);

  FILE* out = std::fopen(argv[2], "wb");
  if (!out || y4m_write_header(out, &video) != 0) return std::fprintf(stderr, "%s: cannot write\n", argv[2]), 1;
  int r = 0;
  for (long n = 0; (r = y4m_read_frame(&video, frame.data())) == 1; ++n) {
    image.time_s = frame_time(video, n);
    const histeq::Status st = equalizer.value().process(image);  // in place
    if (!st) return std::fprintf(stderr, "frame %ld: %s\n", n, st.message().c_str()), 1;
    if (y4m_write_frame(out, &video, frame.data()) != 0) return std::fprintf(stderr, "%s: cannot write\n", argv[2]), 1;
  }
  if (r < 0) return std::fprintf(stderr, "%s: %s\n", argv[1], video.error), 1;
  std::fclose(in);
  return std::fclose(out) == 0 ? 0 : 1;
}

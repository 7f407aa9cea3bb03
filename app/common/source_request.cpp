#include "app/common/source_request.h"

#include <CLI/CLI.hpp>

#include "app/common/run_common.h"
#include "core/cuda/device.h"

namespace histeq::app {

bool webcam_asked(const PlayOptions& o) { return o.webcam_opt != nullptr && o.webcam_opt->count() > 0; }

pipeline::SourceRequest open_request(const PlayOptions& o, const std::string& path) {
  pipeline::SourceRequest r;
  r.input = path;
  r.hwdec = hwdec_for(o.hwdec, o.eq);
  r.cuda_device = o.eq.device;  // --device: NVDEC and the GPU source there
  r.live_timeout_s = o.live_timeout;
  return r;
}

Result<pipeline::SourceRequest> play_source_request(const PlayOptions& o) {
  pipeline::SourceRequest r = open_request(o, o.input);
  r.live = o.live;
  r.webcam = webcam_asked(o);
  r.device = o.webcam;
  if (!r.webcam && o.input.empty()) {
    video::SyntheticOptions& so = r.synthetic;
    HISTEQ_TRY(parse_size(o.size, so.width, so.height));
    so.fps = o.fps;
    so.bit_depth = o.bit_depth;
    so.duration_s = o.endless ? 0 : o.synthetic_s;  // the synthetic source's own length
    so.on_gpu = o.synthetic_on == "gpu" || (o.synthetic_on == "auto" && !o.eq.cpu && cuda::have_device());
  }
  if (auto kind = pipeline::classify(r); !kind) return kind.status();
  return r;
}

}  // namespace histeq::app

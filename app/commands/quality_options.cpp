// The picture-quality options shared by play, export and quality.
#include <CLI/CLI.hpp>

#include "app/commands/commands.h"

namespace histeq::app {

void add_quality_options(CLI::App* cmd, QualityArgs& q) {
  const std::string g = "Picture quality (defaults: docs/quality.md)";
  CLI::Option* opts[7];
  opts[0] = cmd->add_option("--mode", q.mode, "global: one LUT a frame; clahe: a LUT per tile, interpolated (Zuiderveld's CLAHE)")
                ->check(CLI::IsMember({"global", "clahe"}))
                ->capture_default_str()
                ->group(g);
  opts[1] = cmd->add_option("--tiles", q.tiles, "clahe: the tile grid COLSxROWS (1..32 each)")->capture_default_str()->group(g);
  opts[2] = cmd->add_option("--clip-limit", q.clip_limit,
                            "clip the histogram at X times the mean bin count before the CDF, spreading the excess "
                            "(bounds the contrast gain, so flat regions are not stretched into noise); 0 = off")
                ->capture_default_str()
                ->group(g);
  opts[3] = cmd->add_option("--temporal", q.temporal_s,
                            "smooth the LUT over time with this time constant in seconds (no pumping); 0 = off")
                ->capture_default_str()
                ->group(g);
  opts[4] = cmd->add_option("--scene-cut", q.scene_cut,
                            "with --temporal: a histogram distance (0..1) between consecutive frames above this is a cut, "
                            "where the filter starts over (1 = never)")
                ->capture_default_str()
                ->group(g);
  opts[5] = cmd->add_option("--chroma", q.chroma, "auto: scale chroma with the luma gain so colours keep their saturation; keep: chroma untouched")
                ->check(CLI::IsMember({"auto", "keep"}))
                ->capture_default_str()
                ->group(g);
  opts[6] = cmd->add_option("--chroma-limit", q.chroma_limit, "with --chroma auto: the most chroma is scaled up (never down), 1..4")
                ->capture_default_str()
                ->group(g);
  CLI::Option* plain = cmd->add_flag("--plain", q.plain,
                                     "plain histogram equalization: --mode global --clip-limit 0 --temporal 0 --chroma keep, "
                                     "mapped within the video's nominal range (see --range); with --textbook, the classic "
                                     "formula, histeq's frames before these options bit for bit")
                           ->group(g);
  cmd->add_option("--range", q.range,
                  "how the input's levels are read: auto (the video's tag; untagged = limited, as ffmpeg and players "
                  "assume), limited (luma 16..235, x4 at 10 bits) or full (0..max); the curves stay within that range")
      ->check(CLI::IsMember({"auto", "limited", "full"}))
      ->capture_default_str()
      ->group(g);
  cmd->add_flag("--textbook", q.textbook,
                "the textbook formula (cv2.equalizeHist's): levels stretched onto 0..max whatever the video's range, the "
                "darkest to 0 and the brightest to max; crushes the blacks and whites of limited-range video; for comparisons")
      ->group(g);
  for (CLI::Option* o : opts) plain->excludes(o);
  cmd->add_option("--denoise", q.denoise,
                  "temporal denoiser before the curve (motion-adaptive, so pans are not smeared): the noise sigma in "
                  "levels of 255 (e.g. 3 for dim camera footage; 0.5..20), 0 = off (the default: it helps noisy dark "
                  "footage only, docs/quality.md)")
      ->capture_default_str()
      ->group(g);
}

}  // namespace histeq::app

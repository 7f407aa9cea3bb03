/* Equalizes a .y4m video (4:2:0 or gray, 8 or 10-bit) frame by frame with libhisteq's C API, on
 * host memory; the frames are those `histeq export` writes with the same controls.
 *   equalize_host_c IN.y4m OUT.y4m [CONTROL=VALUE ...]      e.g. mode=clahe clip-limit=2 */
#include <histeq/histeq.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "y4m.h"

/* The controls of argv[first..] ("clip-limit=2") into new settings; NULL after printing why. */
static histeq_settings* settings_from(int argc, char** argv, int first) {
  histeq_settings* s = histeq_settings_create();
  int i;
  for (i = first; s && i < argc; ++i) {
    char name[128];
    const char* eq = strchr(argv[i], '=');
    size_t n = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, argv[i], n);
    name[n] = '\0';
    if (histeq_settings_set(s, name, eq ? eq + 1 : "") != HISTEQ_OK) {
      fprintf(stderr, "%s\n", histeq_settings_error(s));
      histeq_settings_destroy(s);
      return NULL;
    }
  }
  if (!s) fprintf(stderr, "%s\n", histeq_last_error());
  return s;
}

/* Every frame of `video` through `e` into `out`: 0, or 1 after printing why not. */
static int equalize_all(histeq_equalizer* e, y4m_video* video, FILE* out, unsigned char* frame) {
  histeq_image image;
  long n;
  int p, r;
  memset(&image, 0, sizeof image); /* host memory, tight rows */
  if (video->planes == 1) image.format = video->bit_depth == 8 ? HISTEQ_GRAY8 : HISTEQ_GRAY10;
  else image.format = video->bit_depth == 8 ? HISTEQ_YUV420P : HISTEQ_YUV420P10;
  image.width = video->width;
  image.height = video->height;
  image.range = video->range == 2 ? HISTEQ_RANGE_FULL : video->range == 1 ? HISTEQ_RANGE_LIMITED : HISTEQ_RANGE_UNSPECIFIED;
  for (p = 0; p < video->planes; ++p) image.planes[p].data = frame + y4m_plane_offset(video, p);
  for (n = 0; (r = y4m_read_frame(video, frame)) == 1; ++n) {
    image.time_s = (double)n * video->fps_den / video->fps_num; /* the temporal filter's clock */
    if (histeq_equalizer_process(e, &image, NULL, NULL) != HISTEQ_OK) { /* in place */
      fprintf(stderr, "frame %ld: %s\n", n, histeq_equalizer_error(e));
      return 1;
    }
    if (y4m_write_frame(out, video, frame) != 0) return fprintf(stderr, "cannot write\n"), 1;
  }
  if (r < 0) return fprintf(stderr, "%s\n", video->error), 1;
  return 0;
}

int main(int argc, char** argv) {
  y4m_video video;
  FILE *in, *out;
  histeq_settings* settings;
  histeq_equalizer* e;
  unsigned char* frame;
  int rc;
  if (argc < 3) {
    fprintf(stderr, "usage: %s IN.y4m OUT.y4m [CONTROL=VALUE ...]\n", argv[0]);
    return 2;
  }
  in = fopen(argv[1], "rb");
  if (!in || y4m_open(&video, in) != 0) {
    fprintf(stderr, "%s: %s\n", argv[1], in ? video.error : "cannot open");
    return 1;
  }
  settings = settings_from(argc, argv, 3);
  if (!settings) return 2;
  e = histeq_equalizer_create(settings);
  histeq_settings_destroy(settings);
  if (!e) return fprintf(stderr, "%s\n", histeq_last_error()), 1;
  out = fopen(argv[2], "wb");
  frame = malloc(y4m_frame_bytes(&video));
  if (!out || !frame || y4m_write_header(out, &video) != 0) return fprintf(stderr, "%s: cannot write\n", argv[2]), 1;
  rc = equalize_all(e, &video, out, frame);
  free(frame);
  histeq_equalizer_destroy(e);
  fclose(in);
  return fclose(out) == 0 ? rc : 1;
}

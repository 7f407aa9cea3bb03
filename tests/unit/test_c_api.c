/* The C API (include/histeq/histeq.h) as a C99 program linked with libhisteq.so, as a consumer
 * links it: the classic equalization computed here by hand equals the library's with plain,
 * textbook settings; histograms equal counts made here; errors come back as codes with their
 * messages on the handle and the thread; creations that fail return NULL; hostile pitches and
 * sizes are refused with their real cause. Exit 0 = all passed.
 *
 *   histeq_c_api_test            everything above
 *   histeq_c_api_test --locale   the same numbers under a decimal-comma locale (de_DE.UTF-8, made
 *                                here with localedef into a temporary LOCPATH); exit 77 = skipped
 *                                (no localedef or no locale data) */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "histeq/histeq.h"

static int failures = 0;

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                      \
    }                                                                  \
  } while (0)

#define W 37
#define H 23
#define PITCH 40 /* 3 padding bytes a row */

static void fill(unsigned char* p, int n) {
  int x, y;
  memset(p, 0xA5, PITCH * H);
  for (y = 0; y < H; ++y)
    for (x = 0; x < W; ++x) p[y * PITCH + x] = (unsigned char)(60 + (x * 3 + y * 5 + n * 7) % 90 + ((x * y) % 7));
}

/* The classic formula (lut.h with textbook levels): round((cdf(v) - cdf_min) * 255 / (N - cdf_min)). */
static void classic(const unsigned char* in, unsigned char* out) {
  unsigned long h[256] = {0}, cdf = 0, cdf_min = 0, lut[256];
  const unsigned long n = W * H;
  int v, x, y;
  for (y = 0; y < H; ++y)
    for (x = 0; x < W; ++x) ++h[in[y * PITCH + x]];
  for (v = 0; v < 256; ++v) {
    cdf += h[v];
    if (cdf_min == 0 && cdf > 0) cdf_min = cdf;
    lut[v] = cdf > cdf_min ? ((cdf - cdf_min) * 255 * 2 + (n - cdf_min)) / (2 * (n - cdf_min)) : 0;
  }
  memcpy(out, in, PITCH * H);
  for (y = 0; y < H; ++y)
    for (x = 0; x < W; ++x) out[y * PITCH + x] = (unsigned char)lut[in[y * PITCH + x]];
}

static void test_classic_equalization(void) {
  static unsigned char frame[PITCH * H], want[PITCH * H];
  histeq_settings* s = histeq_settings_create_plain();
  histeq_equalizer* e;
  histeq_image im;
  CHECK(s != NULL);
  CHECK(histeq_settings_set(s, "textbook", "on") == HISTEQ_OK);
  CHECK(histeq_settings_set(s, "backend", "cpu") == HISTEQ_OK);
  e = histeq_equalizer_create(s);
  CHECK(e != NULL);
  if (e == NULL) return;
  CHECK(strcmp(histeq_equalizer_backend(e), "cpu") == 0);
  memset(&im, 0, sizeof im);
  im.format = HISTEQ_GRAY8;
  im.width = W;
  im.height = H;
  im.planes[0].data = frame;
  im.planes[0].pitch = PITCH;
  fill(frame, 0);
  classic(frame, want);
  CHECK(histeq_equalizer_process(e, &im, NULL, NULL) == HISTEQ_OK);
  CHECK(memcmp(frame, want, sizeof frame) == 0); /* the padding too: it stays 0xA5 */
  histeq_equalizer_destroy(e);
  histeq_settings_destroy(s);
}

static void test_errors(void) {
  static unsigned char y[64 * 48], u[32 * 24], v[32 * 24];
  histeq_settings* s = histeq_settings_create();
  histeq_equalizer* e = histeq_equalizer_create(NULL);
  histeq_image im;
  char buf[8];
  size_t len = 0;
  CHECK(histeq_settings_set(s, "no-such", "1") == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_settings_error(s), "unknown control 'no-such'") != NULL);
  CHECK(strcmp(histeq_last_error(), histeq_settings_error(s)) == 0);
  CHECK(histeq_settings_set_number(s, "clip_limit", 0.5) == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_settings_error(s), "clip limit must be 0 (off) or 1..64, not 0.5") != NULL);
  CHECK(histeq_settings_set(s, NULL, "1") == HISTEQ_INVALID_ARGUMENT);
  CHECK(histeq_settings_get(s, "mode", buf, sizeof buf, &len) == HISTEQ_OK && strcmp(buf, "global") == 0 && len == 6);
  CHECK(histeq_settings_set(s, "tiles", "16x9") == HISTEQ_OK);
  CHECK(histeq_settings_get(s, "tiles", buf, 4, &len) == HISTEQ_INVALID_ARGUMENT && len == 4);
  CHECK(strstr(histeq_settings_describe(s), "clip 1.1") != NULL);
  memset(&im, 0, sizeof im);
  im.format = HISTEQ_YUV420P;
  im.width = 64;
  im.height = 48;
  im.planes[0].data = y;
  im.planes[2].data = v;
  CHECK(histeq_equalizer_process(e, &im, NULL, NULL) == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_equalizer_error(e), "in plane 1 (yuv420p) is null") != NULL);
  im.planes[1].data = u;
  im.planes[0].pitch = 10;
  CHECK(histeq_equalizer_process(e, &im, NULL, NULL) == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_equalizer_error(e), "pitch 10 bytes is less than a row (64 bytes)") != NULL);
  CHECK(histeq_equalizer_process(NULL, &im, NULL, NULL) == HISTEQ_INVALID_ARGUMENT);
  CHECK(histeq_equalizer_set(e, "strength", "2") == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_equalizer_error(e), "strength must be 0..1, not 2") != NULL);
  histeq_equalizer_destroy(e);
  /* A failed creation: NULL, and the thread's message says why. */
  CHECK(histeq_settings_set(s, "kernel", "cpu_reference") == HISTEQ_OK);
  CHECK(histeq_settings_set(s, "backend", "gpu") == HISTEQ_OK);
  CHECK(histeq_equalizer_create(s) == NULL);
  CHECK(strstr(histeq_last_error(), "runs on the CPU, but backend is gpu") != NULL);
  histeq_settings_destroy(s);
}

static void test_in_place_equals_out_of_place(void) {
  static unsigned char a[W * H], b[W * H], c[W * H], ua[19 * 12], va[19 * 12], ub[19 * 12], vb[19 * 12], uc[19 * 12], vc[19 * 12];
  histeq_equalizer* e1 = histeq_equalizer_create(NULL);
  histeq_equalizer* e2 = histeq_equalizer_create(NULL);
  histeq_image in, out;
  int n, i;
  CHECK(e1 != NULL && e2 != NULL);
  if (e1 == NULL || e2 == NULL) return;
  for (n = 0; n < 3; ++n) {
    for (i = 0; i < W * H; ++i) a[i] = b[i] = (unsigned char)(50 + (i * 13 + n * 31) % 120);
    for (i = 0; i < 19 * 12; ++i) ua[i] = ub[i] = va[i] = vb[i] = (unsigned char)(100 + i % 50);
    memset(&in, 0, sizeof in);
    in.format = HISTEQ_YUV420P;
    in.width = W;
    in.height = H;
    in.time_s = n / 25.0;
    in.planes[0].data = a;
    in.planes[1].data = ua;
    in.planes[2].data = va;
    out = in;
    out.planes[0].data = c;
    out.planes[1].data = uc;
    out.planes[2].data = vc;
    CHECK(histeq_equalizer_process(e1, &in, &out, NULL) == HISTEQ_OK);
    in.planes[0].data = b;
    in.planes[1].data = ub;
    in.planes[2].data = vb;
    CHECK(histeq_equalizer_process(e2, &in, NULL, NULL) == HISTEQ_OK);
    CHECK(memcmp(b, c, sizeof b) == 0 && memcmp(ub, uc, sizeof ub) == 0 && memcmp(vb, vc, sizeof vb) == 0);
    CHECK(memcmp(a, c, sizeof a) != 0); /* equalized, and the input left as it was */
  }
  histeq_equalizer_destroy(e1);
  histeq_equalizer_destroy(e2);
}

static void test_tables_and_histogram(void) {
  static unsigned char frame[PITCH * H];
  uint32_t counts[256], want[256] = {0}, small[4];
  histeq_plane p;
  histeq_control_info c;
  histeq_kernel_info k;
  size_t i, defaults = 0;
  int x, y, found = 0;
  for (i = 0; i < histeq_control_count(); ++i) {
    CHECK(histeq_control(i, &c) == HISTEQ_OK);
    if (strcmp(c.name, "mode") == 0) found = strcmp(c.choices, "global,clahe") == 0 && strcmp(c.type, "choice") == 0;
  }
  CHECK(found);
  CHECK(histeq_control(histeq_control_count(), &c) == HISTEQ_INVALID_ARGUMENT);
  for (i = 0; i < histeq_kernel_count(); ++i) {
    CHECK(histeq_kernel(i, &k) == HISTEQ_OK && strcmp(k.name, histeq_kernel_name(i)) == 0);
    defaults += (size_t)k.is_default;
    if (strcmp(k.name, "cpu_parallel") == 0) CHECK(k.is_default && (k.bins_8bit & 256u) != 0);
  }
  CHECK(defaults == 2 && histeq_kernel_name(histeq_kernel_count()) == NULL);
  fill(frame, 3);
  for (y = 0; y < H; ++y)
    for (x = 0; x < W; ++x) ++want[frame[y * PITCH + x]];
  memset(&p, 0, sizeof p);
  p.data = frame;
  p.width = W;
  p.height = H;
  p.pitch = PITCH;
  p.bytes_per_sample = 1;
  p.bit_depth = 8;
  CHECK(histeq_histogram(&p, "cpu_reference", 0, NULL, counts, 256) == HISTEQ_OK);
  CHECK(memcmp(counts, want, sizeof want) == 0);
  CHECK(histeq_histogram(&p, NULL, 0, NULL, small, 4) == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_last_error(), "counts holds 4 counters, the histogram has 256") != NULL);
}

/* Pitches that make rows overlap, sizes whose byte counts overflow an int, and WxH texts beyond 32
 * bits: refused, each with its real cause (never a wrapped number). */
static void test_hostile_pitches_and_sizes(void) {
  static unsigned char frame[64 * 8];
  uint32_t counts[1024];
  histeq_plane p;
  histeq_image im;
  histeq_equalizer* e = histeq_equalizer_create(NULL);
  histeq_settings* s = histeq_settings_create();
  memset(&p, 0, sizeof p);
  p.data = frame;
  p.width = 64;
  p.height = 8;
  p.pitch = 32; /* rows 32 bytes apart holding 64 samples: overlapping */
  p.bytes_per_sample = 1;
  p.bit_depth = 8;
  CHECK(histeq_histogram(&p, "cpu_reference", 0, NULL, counts, 256) == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_last_error(), "pitch 32 bytes is less than a row (64 samples of 1 bytes = 64 bytes)") != NULL);
  p.width = 1 << 30; /* 2^31 bytes a row: the int product wrapped to "0 bytes" */
  p.bytes_per_sample = 2;
  p.bit_depth = 10;
  p.pitch = 4096;
  CHECK(histeq_histogram(&p, "cpu_reference", 0, NULL, counts, 1024) == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_last_error(), "less than a row (1073741824 samples of 2 bytes = 2147483648 bytes)") != NULL);
  p.pitch = 0;
  p.height = 4; /* 2^32 samples: beyond the counters */
  CHECK(histeq_histogram(&p, "cpu_reference", 0, NULL, counts, 1024) == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_last_error(), "1073741824x4 is 2^32 samples or more") != NULL);
  p.width = 64;
  p.height = 3;
  p.pitch = (size_t)-64; /* rows "a negative number of bytes" apart, as a C caller's wrapped size_t */
  CHECK(histeq_histogram(&p, "cpu_reference", 0, NULL, counts, 1024) == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_last_error(), "beyond the address space") != NULL);
  memset(&im, 0, sizeof im);
  im.format = HISTEQ_GRAY8;
  im.width = 64;
  im.height = 8;
  im.planes[0].data = frame;
  im.planes[0].pitch = 63;
  CHECK(histeq_equalizer_process(e, &im, NULL, NULL) == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_equalizer_error(e), "pitch 63 bytes is less than a row (64 bytes)") != NULL);
  im.planes[0].pitch = 0; /* 0 keeps its meaning: tight rows */
  CHECK(histeq_equalizer_process(e, &im, NULL, NULL) == HISTEQ_OK);
  /* WxH beyond 32 bits: sscanf's %d made 4294967297x2 a valid 1x2. */
  CHECK(histeq_settings_set(s, "tiles", "4294967297x2") == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_settings_error(s), "tiles must be 1..32 per axis, not 4294967297x2") != NULL);
  CHECK(histeq_settings_set(s, "tiles", "8x8x") == HISTEQ_INVALID_ARGUMENT);
  CHECK(histeq_settings_set(s, "tiles", " 8x8") == HISTEQ_INVALID_ARGUMENT);
  CHECK(histeq_settings_set(s, "tiles", "+8x8") == HISTEQ_INVALID_ARGUMENT);
  CHECK(histeq_settings_set(s, "tiles", "4x2") == HISTEQ_OK);
  histeq_settings_destroy(s);
  histeq_equalizer_destroy(e);
}

/* Under a decimal-comma locale the library still reads and writes "1.5" (its numbers are the C
 * locale's whatever the program's: GStreamer and Python programs set theirs). */
static int test_numbers_under_a_decimal_comma_locale(void) {
  char dir[] = "/tmp/histeq-locale-XXXXXX", cmd[512], buf[32];
  histeq_settings* s;
  histeq_equalizer* e;
  static unsigned char frame[W * H];
  histeq_image im;
  int made;
  if (mkdtemp(dir) == NULL) return 77;
  snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
  made = system(cmd);
  /* localedef warns with status 1 while making a usable locale: the setlocale below decides. */
  setenv("LOCPATH", dir, 1);
  if (setlocale(LC_ALL, "de_DE.UTF-8") == NULL || strcmp(localeconv()->decimal_point, ",") != 0) {
    printf("skipped: no de_DE.UTF-8 locale could be made (localedef status %d; the locales package is needed)\n", made);
    return 77;
  }
  s = histeq_settings_create();
  CHECK(histeq_settings_set(s, "clip-limit", "1.5") == HISTEQ_OK);
  CHECK(histeq_settings_get(s, "clip-limit", buf, sizeof buf, NULL) == HISTEQ_OK && strcmp(buf, "1.5") == 0);
  CHECK(histeq_settings_set(s, "clip-limit", "1,5") == HISTEQ_INVALID_ARGUMENT);
  CHECK(histeq_settings_set_number(s, "strength", 0.25) == HISTEQ_OK);
  CHECK(histeq_settings_get(s, "strength", buf, sizeof buf, NULL) == HISTEQ_OK && strcmp(buf, "0.25") == 0);
  CHECK(histeq_settings_set(s, "temporal", "0.5") == HISTEQ_OK);
  CHECK(strstr(histeq_settings_describe(s), "clip 1.5, temporal 0.5 s") != NULL);
  CHECK(histeq_settings_set_number(s, "clip-limit", 0.5) == HISTEQ_INVALID_ARGUMENT);
  CHECK(strstr(histeq_settings_error(s), "clip limit must be 0 (off) or 1..64, not 0.5") != NULL);
  e = histeq_equalizer_create(s);
  CHECK(e != NULL);
  CHECK(histeq_equalizer_set(e, "strength", "0.75") == HISTEQ_OK);
  memset(&im, 0, sizeof im);
  im.format = HISTEQ_GRAY8;
  im.width = W;
  im.height = H;
  im.planes[0].data = frame;
  CHECK(histeq_equalizer_process(e, &im, NULL, NULL) == HISTEQ_OK);
  histeq_equalizer_destroy(e);
  histeq_settings_destroy(s);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  (void)system(cmd);
  if (failures == 0) printf("C API under de_DE.UTF-8 (decimal point '%s'): all checks passed\n", localeconv()->decimal_point);
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--locale") == 0) return test_numbers_under_a_decimal_comma_locale();
  CHECK(strcmp(histeq_version(), HISTEQ_EXPECTED_VERSION) == 0);
  test_classic_equalization();
  test_errors();
  test_in_place_equals_out_of_place();
  test_tables_and_histogram();
  test_hostile_pitches_and_sizes();
  if (failures == 0) printf("C API: all checks passed (library %s, GPU %s)\n", histeq_version(), histeq_gpu_available() ? "yes" : "no");
  return failures == 0 ? 0 : 1;
}

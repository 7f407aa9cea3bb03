/* histeq's C API: the public C++ API of histeq.hpp behind opaque handles, for C programs and
 * foreign-function interfaces (plain C99; no CUDA header needed).
 *
 *   histeq_settings* s = histeq_settings_create();
 *   histeq_settings_set(s, "clip-limit", "1.5");
 *   histeq_equalizer* e = histeq_equalizer_create(s);     (NULL: histeq_last_error() says why)
 *   histeq_image im = {0}; im.format = HISTEQ_YUV420P; im.width = w; im.height = h; ...planes...
 *   if (histeq_equalizer_process(e, &im, NULL, NULL) != HISTEQ_OK) puts(histeq_equalizer_error(e));
 *   histeq_equalizer_destroy(e); histeq_settings_destroy(s);
 *
 * Frames are bit-identical to `histeq export`'s with the same settings (histeq.hpp says how).
 *
 * Errors: every fallible call returns a histeq_status; its one-line message is kept by the handle
 * it was called on (histeq_settings_error, histeq_equalizer_error) and, for every failing call, by
 * the calling thread (histeq_last_error: the only way to learn why a creation returned NULL). The
 * strings stay valid until the next failing call on that handle or thread. No C++ exception ever
 * leaves a function of this API; out of memory is HISTEQ_INTERNAL with its message.
 *
 * Threads: a handle belongs to one thread at a time; different handles may be used concurrently.
 * Units: sizes in samples, pitches in bytes (0 = tight rows; a pitch smaller than a row is refused);
 * streams are cudaStream_t (NULL: the
 * legacy default stream). Strings returned by the API are owned by it. */
#ifndef HISTEQ_H
#define HISTEQ_H

#include <stddef.h>
#include <stdint.h>

#if defined(HISTEQ_BUILDING_LIBRARY) && !defined(_WIN32)
#define HISTEQ_C_API __attribute__((visibility("default")))
#else
#define HISTEQ_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st; /* cudaStream_t is struct CUstream_st* */

typedef enum histeq_status {
  HISTEQ_OK = 0,
  HISTEQ_INVALID_ARGUMENT = 1, /* a bad value, shape, pitch, format, control name or value, a NULL */
  HISTEQ_UNSUPPORTED = 2,      /* valid but not available here (a GPU without a GPU, ...) */
  HISTEQ_DEVICE_ERROR = 3,     /* a CUDA call failed */
  HISTEQ_INTERNAL = 4          /* out of memory, or a bug: please report the message */
} histeq_status;

typedef enum histeq_pixel_format {
  HISTEQ_GRAY8 = 0,     /* one plane of 8-bit luma */
  HISTEQ_GRAY10 = 1,    /* one plane of 16-bit samples, 10-bit values in the low bits */
  HISTEQ_YUV420P = 2,   /* Y, U, V; 8-bit; chroma halved on both axes */
  HISTEQ_YUV420P10 = 3, /* Y, U, V; 16-bit samples, 10-bit values in the low bits */
  HISTEQ_NV12 = 4,      /* Y, then UV interleaved; 8-bit */
  HISTEQ_P010 = 5,      /* Y, then UV interleaved; 16-bit samples, 10-bit values in the HIGH bits */
  HISTEQ_YUV444P = 6,   /* Y, U, V of the full size; 8-bit */
  HISTEQ_YUV444P10 = 7, /* Y, U, V of the full size; 16-bit samples, 10-bit values in the low bits */
  HISTEQ_YUV422P = 8,   /* Y, U, V; 8-bit; chroma halved across, full height */
  HISTEQ_YUV422P10 = 9  /* Y, U, V; chroma halved across; 16-bit samples, 10-bit values in the low bits */
} histeq_pixel_format;

typedef enum histeq_memory { HISTEQ_MEMORY_HOST = 0, HISTEQ_MEMORY_DEVICE = 1 } histeq_memory;

/* Untagged video is treated as limited range, as FFmpeg and players do. */
typedef enum histeq_color_range {
  HISTEQ_RANGE_UNSPECIFIED = 0,
  HISTEQ_RANGE_LIMITED = 1,
  HISTEQ_RANGE_FULL = 2
} histeq_color_range;

typedef struct histeq_plane_desc {
  void* data;   /* the first sample of the first row */
  size_t pitch; /* bytes between row starts; 0 = tight */
} histeq_plane_desc;

/* A frame the caller owns; as histeq::Image. A zeroed struct is a host gray8 frame of unknown
 * time: set format, width, height and the planes (gray 1, yuv420p*, yuv422p* and yuv444p* 3, nv12/p010 2). */
typedef struct histeq_image {
  histeq_pixel_format format;
  int width, height;
  histeq_memory memory;
  int device; /* the CUDA device of device memory */
  histeq_color_range range;
  histeq_plane_desc planes[3];
  /* The frame's time in seconds (the temporal filter's frame interval is the difference of two
   * frames' times). 0 or negative for every frame: unknown, frames 1/30 s apart. */
  double time_s;
} histeq_image;

/* A plane for histeq_histogram(). */
typedef struct histeq_plane {
  const void* data;
  int width, height;
  size_t pitch;         /* bytes; 0 = tight */
  int bytes_per_sample; /* 1 or 2 */
  int bit_depth;        /* significant bits; samples must be below 2^bit_depth */
  histeq_memory memory;
  int device;
} histeq_plane;

typedef struct histeq_settings histeq_settings;
typedef struct histeq_equalizer histeq_equalizer;

HISTEQ_C_API const char* histeq_version(void); /* "0.1.0" */
HISTEQ_C_API int histeq_gpu_available(void);   /* 1 when a CUDA device is usable */
/* The message of the calling thread's last failing call ("" when none failed yet). */
HISTEQ_C_API const char* histeq_last_error(void);

/* ---- settings: every control of the control table, then kernel, strength, backend, device ---- */

HISTEQ_C_API histeq_settings* histeq_settings_create(void);       /* `histeq export`'s defaults */
HISTEQ_C_API histeq_settings* histeq_settings_create_plain(void); /* `histeq export --plain` */
HISTEQ_C_API histeq_settings* histeq_settings_copy(const histeq_settings* s);
HISTEQ_C_API void histeq_settings_destroy(histeq_settings* s); /* NULL is fine */
/* By any of a control's names ("clip-limit", "clip_limit", "clip"), in text form ("clahe", "2.5",
 * "8x8", "on") or as a number (a choice's index, a flag's 1/0, a grid's columns = rows). */
HISTEQ_C_API histeq_status histeq_settings_set(histeq_settings* s, const char* name, const char* value);
HISTEQ_C_API histeq_status histeq_settings_set_number(histeq_settings* s, const char* name, double value);
/* The text form into buf (size bytes, NUL-terminated); *length (when not NULL) gets the text's
 * length. A buffer too small is HISTEQ_INVALID_ARGUMENT, with *length saying what is needed. */
HISTEQ_C_API histeq_status histeq_settings_get(const histeq_settings* s, const char* name, char* buf, size_t size,
                                               size_t* length);
/* "clahe 8x8, clip 1.1, ..." as `histeq export` prints it; owned by s until its next call. */
HISTEQ_C_API const char* histeq_settings_describe(const histeq_settings* s);
HISTEQ_C_API const char* histeq_settings_error(const histeq_settings* s); /* "" when none */

/* The controls, in the order of histeq::controls(). The strings live as long as the library. */
typedef struct histeq_control_info {
  const char* name;        /* "clip-limit" */
  const char* python_name; /* "clip_limit" */
  const char* type;        /* "choice", "number", "flag" or "grid" */
  const char* choices;     /* a choice's spellings, comma-separated ("global,clahe"); "" otherwise */
  double min, max;         /* number: the valid values (grid: per axis) */
  int zero_off;            /* number: 0 also valid, meaning off */
  const char* unit;
  const char* default_value;
  const char* plain_value;
  const char* help;
  int live; /* may change between frames */
} histeq_control_info;
HISTEQ_C_API size_t histeq_control_count(void);
HISTEQ_C_API histeq_status histeq_control(size_t index, histeq_control_info* out);

/* ---- the equalizer ---- */

/* NULL settings: the defaults. NULL on failure (histeq_last_error says why). */
HISTEQ_C_API histeq_equalizer* histeq_equalizer_create(const histeq_settings* s);
HISTEQ_C_API void histeq_equalizer_destroy(histeq_equalizer* e); /* NULL is fine */
/* As histeq::Equalizer::process: out NULL = in place; stream orders device work. */
HISTEQ_C_API histeq_status histeq_equalizer_process(histeq_equalizer* e, const histeq_image* in, const histeq_image* out,
                                                    struct CUstream_st* stream);
HISTEQ_C_API void histeq_equalizer_reset(histeq_equalizer* e);
HISTEQ_C_API histeq_status histeq_equalizer_set(histeq_equalizer* e, const char* name, const char* value);
HISTEQ_C_API histeq_status histeq_equalizer_set_number(histeq_equalizer* e, const char* name, double value);
HISTEQ_C_API histeq_status histeq_equalizer_set_settings(histeq_equalizer* e, const histeq_settings* s);
/* backend "gpu"/"cpu", the device's name, the kernel in use; owned by e until its next call. */
HISTEQ_C_API const char* histeq_equalizer_backend(histeq_equalizer* e);
HISTEQ_C_API const char* histeq_equalizer_device(histeq_equalizer* e);
HISTEQ_C_API const char* histeq_equalizer_kernel(histeq_equalizer* e);
HISTEQ_C_API const char* histeq_equalizer_error(const histeq_equalizer* e); /* "" when none */

/* ---- the kernel laboratory ---- */

typedef struct histeq_kernel_info {
  const char* name;
  const char* description;
  const char* paper;
  const char* section;
  const char* backend;  /* "gpu" or "cpu" */
  uint32_t bins_8bit;   /* bit k set: 2^k bins on 8-bit samples */
  uint32_t bins_16bit;  /* ... on 16-bit samples */
  int data_independent; /* its time does not depend on the picture */
  int is_default;       /* the default of its backend */
  const char* alias_of; /* "" or the kernel this name is another name for */
} histeq_kernel_info;
HISTEQ_C_API size_t histeq_kernel_count(void);
HISTEQ_C_API const char* histeq_kernel_name(size_t index); /* NULL past the end */
HISTEQ_C_API histeq_status histeq_kernel(size_t index, histeq_kernel_info* out);

/* The histogram of `plane` by `kernel` (NULL or "": the default for the plane's memory) with
 * `bins` bins (0: 2^bit_depth) into counts[0..bins) (count: the array's length, at least bins). */
HISTEQ_C_API histeq_status histeq_histogram(const histeq_plane* plane, const char* kernel, int bins,
                                            struct CUstream_st* stream, uint32_t* counts, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* HISTEQ_H */

/* A small YUV4MPEG2 (.y4m) reader and writer for the examples: 4:2:0 at 8 or 10 bits, or gray
 * (mono). Plain C99, header only, shared by the C and C++ examples; not part of libhisteq.
 *
 *   y4m_video v;
 *   if (y4m_open(&v, stdin_or_file) != 0) puts(v.error);
 *   y4m_write_header(out, &v);
 *   while (y4m_read_frame(&v, buf) == 1) { ...planes at buf + y4m_plane_offset(&v, i)...; y4m_write_frame(out, &v, buf); }
 *
 * A frame in memory: the planes one after another, rows tight (width * bytes per sample). */
#ifndef HISTEQ_EXAMPLES_Y4M_H
#define HISTEQ_EXAMPLES_Y4M_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct y4m_video {
  FILE* file;
  int width, height;
  int fps_num, fps_den; /* frame rate (25:1 when the header has none) */
  int bit_depth;        /* 8 or 10 (16-bit little-endian samples) */
  int planes;           /* 3 (4:2:0) or 1 (mono) */
  int range;            /* 0 untagged, 1 limited, 2 full (XCOLORRANGE) */
  char header[512];     /* the stream header as read, for the output */
  char error[160];      /* why y4m_open or y4m_read_frame failed */
} y4m_video;

static int y4m_fail(y4m_video* v, const char* why) {
  snprintf(v->error, sizeof v->error, "%s", why);
  return -1;
}

/* Reads a line of at most size-1 bytes without its newline; 0, or -1 at the end or when too long. */
static int y4m_line(FILE* f, char* buf, size_t size) {
  size_t n = 0;
  int c;
  while ((c = fgetc(f)) != EOF && c != '\n') {
    if (n + 1 >= size) return -1;
    buf[n++] = (char)c;
  }
  buf[n] = '\0';
  return c == '\n' ? 0 : -1;
}

static int y4m_open(y4m_video* v, FILE* f) {
  char* tok;
  char fields[512];
  memset(v, 0, sizeof *v);
  v->file = f;
  v->fps_num = 25;
  v->fps_den = 1;
  v->bit_depth = 8;
  v->planes = 3;
  if (y4m_line(f, v->header, sizeof v->header) != 0 || strncmp(v->header, "YUV4MPEG2 ", 10) != 0)
    return y4m_fail(v, "not a YUV4MPEG2 stream");
  memcpy(fields, v->header, sizeof fields);
  for (tok = strtok(fields + 10, " "); tok; tok = strtok(NULL, " ")) {
    if (tok[0] == 'W') v->width = atoi(tok + 1);
    else if (tok[0] == 'H') v->height = atoi(tok + 1);
    else if (tok[0] == 'F' && sscanf(tok + 1, "%d:%d", &v->fps_num, &v->fps_den) != 2) return y4m_fail(v, "bad frame rate");
    else if (tok[0] == 'C') {
      if (strcmp(tok, "Cmono") == 0) v->planes = 1;
      else if (strcmp(tok, "C420p10") == 0) v->bit_depth = 10;
      else if (strncmp(tok, "C420", 4) != 0 || (tok[4] != '\0' && strcmp(tok + 4, "jpeg") && strcmp(tok + 4, "mpeg2") && strcmp(tok + 4, "paldv")))
        return y4m_fail(v, "only 4:2:0 (8 or 10-bit) and mono are supported");
    } else if (strcmp(tok, "XCOLORRANGE=FULL") == 0) v->range = 2;
    else if (strcmp(tok, "XCOLORRANGE=LIMITED") == 0) v->range = 1;
  }
  if (v->width <= 0 || v->height <= 0 || v->fps_num <= 0 || v->fps_den <= 0) return y4m_fail(v, "bad size or frame rate");
  return 0;
}

static int y4m_bytes_per_sample(const y4m_video* v) { return v->bit_depth > 8 ? 2 : 1; }
static int y4m_plane_width(const y4m_video* v, int i) { return i == 0 ? v->width : (v->width + 1) / 2; }
static int y4m_plane_height(const y4m_video* v, int i) { return i == 0 ? v->height : (v->height + 1) / 2; }
static size_t y4m_plane_bytes(const y4m_video* v, int i) {
  return (size_t)y4m_plane_width(v, i) * (size_t)y4m_plane_height(v, i) * (size_t)y4m_bytes_per_sample(v);
}
static size_t y4m_plane_offset(const y4m_video* v, int i) {
  size_t off = 0;
  int p;
  for (p = 0; p < i; ++p) off += y4m_plane_bytes(v, p);
  return off;
}
static size_t y4m_frame_bytes(const y4m_video* v) { return y4m_plane_offset(v, v->planes); }

/* 1: a frame was read into buf (y4m_frame_bytes of it); 0: the end; -1: a broken stream. */
static int y4m_read_frame(y4m_video* v, void* buf) {
  char line[256];
  if (y4m_line(v->file, line, sizeof line) != 0) return feof(v->file) && line[0] == '\0' ? 0 : y4m_fail(v, "bad frame header");
  if (strncmp(line, "FRAME", 5) != 0) return y4m_fail(v, "bad frame header");
  if (fread(buf, 1, y4m_frame_bytes(v), v->file) != y4m_frame_bytes(v)) return y4m_fail(v, "truncated frame");
  return 1;
}

static int y4m_write_header(FILE* out, const y4m_video* v) { return fprintf(out, "%s\n", v->header) > 0 ? 0 : -1; }

static int y4m_write_frame(FILE* out, const y4m_video* v, const void* buf) {
  if (fputs("FRAME\n", out) == EOF) return -1;
  return fwrite(buf, 1, y4m_frame_bytes(v), out) == y4m_frame_bytes(v) ? 0 : -1;
}

#endif /* HISTEQ_EXAMPLES_Y4M_H */

/* Driver of the real-program harness for zstd built with ZSTD_MULTITHREAD:
 * a multi-threaded program. The files given are concatenated (the whole
 * repeated `repeat` times) and compressed with `workers` worker threads
 * (ZSTD_c_nbWorkers; jobs of ZSTD_c_jobSize bytes run in zstd's thread
 * pool, POOL_thread), once in one call (ZSTD_compress2) and once streamed
 * in chunks (ZSTD_compressStream2), then decompressed and compared. A
 * small piece is compressed too (under ZSTDMT_JOBSIZE_MIN, so zstd runs it
 * in the calling thread). Prints one line per step.
 *
 * usage: zstd_main LEVEL WORKERS JOBSIZE REPEAT FILE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZSTD_STATIC_LINKING_ONLY
#include "zstd.h"

/* The step the driver is at (only the main thread writes it). */
static int step;

static char *read_all(int n, char **files, int repeat, size_t *size) {
  size_t len = 0, cap = 1 << 20;
  char *buf = malloc(cap);
  for (int r = 0; r < repeat; r++) {
    for (int i = 0; i < n; i++) {
      FILE *f = fopen(files[i], "rb");
      if (!f) {
        fprintf(stderr, "cannot open %s\n", files[i]);
        exit(2);
      }
      size_t got;
      do {
        if (cap - len < 65536) {
          cap *= 2;
          buf = realloc(buf, cap);
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
      } while (got > 0);
      fclose(f);
    }
  }
  *size = len;
  return buf;
}

static void check(size_t code, const char *what) {
  if (ZSTD_isError(code)) {
    printf("%s failed: %s\n", what, ZSTD_getErrorName(code));
    exit(1);
  }
}

static ZSTD_CCtx *make_cctx(int level, int workers, int jobsize) {
  ZSTD_CCtx *c = ZSTD_createCCtx();
  check(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level), "level");
  check(ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, workers), "workers");
  check(ZSTD_CCtx_setParameter(c, ZSTD_c_jobSize, jobsize), "job size");
  check(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1), "checksum");
  return c;
}

/* Decompresses `comp` and compares with `src`. */
static void roundtrip(const char *what, const char *comp, size_t csize,
                      const char *src, size_t size) {
  unsigned long long expect = ZSTD_getFrameContentSize(comp, csize);
  char *back = malloc(size + 1);
  size_t got = ZSTD_decompress(back, size + 1, comp, csize);
  check(got, "decompress");
  if (got != size || memcmp(back, src, size) != 0) {
    printf("%s: round trip differs (%zu of %zu bytes)\n", what, got, size);
    exit(1);
  }
  printf("%s: %zu -> %zu bytes, content size %llu, round trip ok\n", what,
         size, csize, expect);
  free(back);
}

/* Decompresses `comp` again, streamed through a new context in chunks
 * of `chunk` bytes, and returns its size. */
static size_t stream_back(const char *comp, size_t csize, size_t chunk) {
  ZSTD_DCtx *d = ZSTD_createDCtx();
  char out[4096];
  size_t total = 0;
  for (size_t at = 0; at < csize; at += chunk) {
    ZSTD_inBuffer in = {comp + at, csize - at < chunk ? csize - at : chunk, 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer o = {out, sizeof out, 0};
      check(ZSTD_decompressStream(d, &o, &in), "decompress stream");
      total += o.pos;
    }
  }
  ZSTD_freeDCtx(d);
  return total;
}

/* The harness stops some runs right after a compression and needs every
 * worker waiting for the next job by then (not still leaving the last
 * one): give them time. */
static void settle(void) { usleep(100000); }

/* Streams `src` through `c` in chunks of `chunk` bytes. */
static size_t stream(ZSTD_CCtx *c, const char *src, size_t size, size_t chunk,
                     char *dst, size_t cap) {
  ZSTD_outBuffer out = {dst, cap, 0};
  for (size_t at = 0; at < size; at += chunk) {
    size_t n = size - at < chunk ? size - at : chunk;
    ZSTD_inBuffer in = {src + at, n, 0};
    ZSTD_EndDirective mode = at + n == size ? ZSTD_e_end : ZSTD_e_continue;
    size_t left;
    do {
      left = ZSTD_compressStream2(c, &out, &in, mode);
      check(left, "stream");
    } while (mode == ZSTD_e_end ? left != 0 : in.pos < in.size);
  }
  return out.pos;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s LEVEL WORKERS JOBSIZE REPEAT FILE...\n", argv[0]);
    return 2;
  }
  int level = atoi(argv[1]), workers = atoi(argv[2]);
  int jobsize = atoi(argv[3]), repeat = atoi(argv[4]);
  size_t size;
  char *src = read_all(argc - 5, argv + 5, repeat, &size);
  size_t cap = ZSTD_compressBound(size);
  char *dst = malloc(cap);
  printf("input: %zu bytes, level %d, %d workers, jobs of %d bytes\n", size,
         level, workers, jobsize);

  step = 1;
  ZSTD_CCtx *c = make_cctx(level, workers, jobsize);
  size_t csize = ZSTD_compress2(c, dst, cap, src, size);
  check(csize, "compress");
  settle();
  roundtrip("one call", dst, csize, src, size);

  step = 2;
  check(ZSTD_CCtx_reset(c, ZSTD_reset_session_only), "reset");
  csize = stream(c, src, size, 100000, dst, cap);
  settle();
  roundtrip("streamed", dst, csize, src, size);

  /* Under ZSTDMT_JOBSIZE_MIN: compressed in this thread. */
  step = 3;
  size_t small = size < 100000 ? size : 100000;
  check(ZSTD_CCtx_reset(c, ZSTD_reset_session_only), "reset");
  csize = ZSTD_compress2(c, dst, cap, src, small);
  check(csize, "compress small");
  roundtrip("small", dst, csize, src, small);
  /* Joins the workers: from here on the process has one thread. */
  ZSTD_freeCCtx(c);
  step = 4;
  printf("small, streamed back: %zu bytes\n", stream_back(dst, csize, 1000));
  free(dst);
  free(src);
  printf("done after step %d\n", step);
  return 0;
}

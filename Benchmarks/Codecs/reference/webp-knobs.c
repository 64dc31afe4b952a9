/* WebP encoder settings against each other on the same pixels, with the system's libwebp (the
 * library Alcedo links): lossy, RGBA imported to YUV as Alcedo's WebPEncoder does, one thread.
 * For each setting: the median CPU time of one encode (this thread's clock, import included)
 * over RUNS encodes, the bytes, and the file written to OUT_DIR/<label>.webp for a quality check.
 * Usage: webp-knobs RAW_RGBA WIDTH HEIGHT QUALITY RUNS OUT_DIR
 * Prints one JSON line per setting. Built by webp-knobs.py with `cc -O2 ... -lwebp`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <webp/encode.h>

typedef struct {
    const char *label;
    int method, segments, sns, filter, partition_limit, pass, autofilter, preprocessing;
} Setting;

static double thread_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s RAW_RGBA WIDTH HEIGHT QUALITY RUNS OUT_DIR\n", argv[0]);
        return 2;
    }
    int width = atoi(argv[2]), height = atoi(argv[3]), runs = atoi(argv[5]);
    float quality = (float)atof(argv[4]);
    size_t size = (size_t)width * height * 4;
    unsigned char *rgba = malloc(size);
    FILE *in = fopen(argv[1], "rb");
    if (!rgba || !in || fread(rgba, 1, size, in) != size) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(in);
    /* -1: libwebp's default for that method. */
    static const Setting settings[] = {
        {"m0", 0, -1, -1, -1, -1, -1, -1, -1}, {"m1", 1, -1, -1, -1, -1, -1, -1, -1},
        {"m2", 2, -1, -1, -1, -1, -1, -1, -1}, {"m3", 3, -1, -1, -1, -1, -1, -1, -1},
        {"m4", 4, -1, -1, -1, -1, -1, -1, -1}, {"m5", 5, -1, -1, -1, -1, -1, -1, -1},
        {"m6", 6, -1, -1, -1, -1, -1, -1, -1},
        {"m4-seg1", 4, 1, -1, -1, -1, -1, -1, -1}, {"m4-sns0", 4, -1, 0, -1, -1, -1, -1, -1},
        {"m2-seg1", 2, 1, -1, -1, -1, -1, -1, -1}, {"m2-sns0", 2, -1, 0, -1, -1, -1, -1, -1},
        {"m1-seg1", 1, 1, -1, -1, -1, -1, -1, -1}, {"m0-seg1", 0, 1, -1, -1, -1, -1, -1, -1},
        {"m0-sns0", 0, -1, 0, -1, -1, -1, -1, -1}, {"m4-autofilter", 4, -1, -1, -1, -1, -1, 1, -1},
        {"m2-sns25", 2, -1, 25, -1, -1, -1, -1, -1}, {"m2-f40", 2, -1, -1, 40, -1, -1, -1, -1},
        {"m2-sns25-f40", 2, -1, 25, 40, -1, -1, -1, -1}, {"m2-sns75", 2, -1, 75, -1, -1, -1, -1, -1},
    };
    double *times = malloc(sizeof(double) * (size_t)runs);
    for (size_t s = 0; s < sizeof settings / sizeof settings[0]; s++) {
        const Setting *set = &settings[s];
        WebPConfig config;
        if (!WebPConfigInit(&config)) return 1;
        config.quality = quality;
        config.method = set->method;
        config.thread_level = 0;
        if (set->segments >= 0) config.segments = set->segments;
        if (set->sns >= 0) config.sns_strength = set->sns;
        if (set->filter >= 0) config.filter_strength = set->filter;
        if (set->partition_limit >= 0) config.partition_limit = set->partition_limit;
        if (set->pass >= 0) config.pass = set->pass;
        if (set->autofilter >= 0) config.autofilter = set->autofilter;
        if (set->preprocessing >= 0) config.preprocessing = set->preprocessing;
        if (!WebPValidateConfig(&config)) return 1;
        size_t bytes = 0;
        for (int run = 0; run < runs; run++) {
            WebPPicture picture;
            WebPMemoryWriter writer;
            if (!WebPPictureInit(&picture)) return 1;
            WebPMemoryWriterInit(&writer);
            double start = thread_ms();
            picture.use_argb = 0;
            picture.width = width;
            picture.height = height;
            picture.writer = WebPMemoryWrite;
            picture.custom_ptr = &writer;
            if (!WebPPictureImportRGBA(&picture, rgba, width * 4) || !WebPEncode(&config, &picture)) {
                fprintf(stderr, "%s: encode failed (%d)\n", set->label, picture.error_code);
                return 1;
            }
            times[run] = thread_ms() - start;
            bytes = writer.size;
            if (run == runs - 1) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s.webp", argv[6], set->label);
                FILE *out = fopen(path, "wb");
                if (!out || fwrite(writer.mem, 1, writer.size, out) != writer.size) return 1;
                fclose(out);
            }
            WebPPictureFree(&picture);
            WebPMemoryWriterClear(&writer);
        }
        qsort(times, (size_t)runs, sizeof(double), compare);
        printf("{\"label\": \"%s\", \"method\": %d, \"ms\": %.3f, \"bytes\": %zu}\n", set->label, set->method,
               times[runs / 2], bytes);
        fflush(stdout);
    }
    free(times);
    free(rgba);
    return 0;
}

#ifndef ALCEDO_PIXELS_H
#define ALCEDO_PIXELS_H
/* Pixel loops the Swift compiler does not vectorise for the baseline x86-64 target. */
#include <stddef.h>
#include <stdint.h>

/*
 * Stores `count` opaque pixels: `pixels` holds 4 floats a pixel (red, green, blue and an
 * alpha that is ignored), `output` receives 4 bytes a pixel. Each colour is rounded to the
 * nearest integer (ties to even) and clamped to 0...255 (NaN gives 0, +inf 255); alpha
 * is 255.
 */
void alcedo_store_opaque_rgba8(const float *pixels, uint8_t *output, size_t count);

/* Converts `count` pixels of 4 bytes to 4 floats each (0...255), unchanged otherwise. */
void alcedo_load_rgba8(const uint8_t *pixels, float *output, size_t count);

#endif

#include "alcedo_pixels.h"

#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

void alcedo_store_opaque_rgba8(const float *pixels, uint8_t *output, size_t count) {
    size_t i = 0;
#if defined(__SSE2__)
    /* Four pixels at a time. Values are first capped at 255 (a NaN passes through, as
       `minps` returns its second operand then), the conversion rounds to nearest even (the
       default MXCSR mode, which nothing in the process changes) and turns NaN and -inf into
       INT32_MIN, and the two saturating packs clamp to 0...255. */
    const __m128i alpha = _mm_set1_epi32((int)0xFF000000u);
    const __m128 limit = _mm_set1_ps(255.0f);
    for (; i + 4 <= count; i += 4) {
        __m128i p0 = _mm_cvtps_epi32(_mm_min_ps(limit, _mm_loadu_ps(pixels + 4 * i)));
        __m128i p1 = _mm_cvtps_epi32(_mm_min_ps(limit, _mm_loadu_ps(pixels + 4 * i + 4)));
        __m128i p2 = _mm_cvtps_epi32(_mm_min_ps(limit, _mm_loadu_ps(pixels + 4 * i + 8)));
        __m128i p3 = _mm_cvtps_epi32(_mm_min_ps(limit, _mm_loadu_ps(pixels + 4 * i + 12)));
        __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(p0, p1), _mm_packs_epi32(p2, p3));
        _mm_storeu_si128((__m128i *)(void *)(output + 4 * i), _mm_or_si128(bytes, alpha));
    }
#endif
    for (; i < count; i++) {
        for (size_t c = 0; c < 3; c++) {
            float value = pixels[4 * i + c];
            /* `!(value > 0)` also catches NaN. */
            output[4 * i + c] = !(value > 0.0f) ? 0 : (value >= 255.0f ? 255 : (uint8_t)nearbyintf(value));
        }
        output[4 * i + 3] = 255;
    }
}

void alcedo_load_rgba8(const uint8_t *pixels, float *output, size_t count) {
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (; i + 4 <= count; i += 4) {
        __m128i bytes = _mm_loadu_si128((const __m128i *)(const void *)(pixels + 4 * i));
        __m128i low = _mm_unpacklo_epi8(bytes, zero), high = _mm_unpackhi_epi8(bytes, zero);
        _mm_storeu_ps(output + 4 * i, _mm_cvtepi32_ps(_mm_unpacklo_epi16(low, zero)));
        _mm_storeu_ps(output + 4 * i + 4, _mm_cvtepi32_ps(_mm_unpackhi_epi16(low, zero)));
        _mm_storeu_ps(output + 4 * i + 8, _mm_cvtepi32_ps(_mm_unpacklo_epi16(high, zero)));
        _mm_storeu_ps(output + 4 * i + 12, _mm_cvtepi32_ps(_mm_unpackhi_epi16(high, zero)));
    }
#endif
    for (i *= 4; i < 4 * count; i++) output[i] = (float)pixels[i];
}

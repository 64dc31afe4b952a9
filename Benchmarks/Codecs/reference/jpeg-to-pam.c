/*
 * The C reference for `alcedo convert IN.jpg OUT.pam --format pam`: libjpeg-turbo decodes the
 * whole file straight to RGBA (JCS_EXT_RGBA, djpeg's default settings) into one buffer, and
 * the same PAM bytes Alcedo writes go to OUT. Usage: jpeg-to-pam IN.jpg OUT.pam
 */
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s IN.jpg OUT.pam\n", argv[0]); return 2; }
    FILE *in = fopen(argv[1], "rb");
    if (in == NULL) { perror(argv[1]); return 1; }
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)size);
    if (data == NULL || fread(data, 1, (size_t)size, in) != (size_t)size) { fprintf(stderr, "read failed\n"); return 1; }
    fclose(in);

    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr jerr;
    cinfo.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    cinfo.out_color_space = JCS_EXT_RGBA;
    cinfo.dct_method = JDCT_ISLOW;
    jpeg_start_decompress(&cinfo);
    size_t stride = (size_t)cinfo.output_width * 4;
    unsigned char *pixels = malloc(stride * cinfo.output_height);
    if (pixels == NULL) { fprintf(stderr, "out of memory\n"); return 1; }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW rows[16];
        JDIMENSION count = cinfo.output_height - cinfo.output_scanline;
        if (count > 16) count = 16;
        for (JDIMENSION i = 0; i < count; i++) rows[i] = pixels + (size_t)(cinfo.output_scanline + i) * stride;
        jpeg_read_scanlines(&cinfo, rows, count);
    }

    FILE *out = fopen(argv[2], "wb");
    if (out == NULL) { perror(argv[2]); return 1; }
    fprintf(out, "P7\nWIDTH %u\nHEIGHT %u\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n",
            cinfo.output_width, cinfo.output_height);
    fwrite(pixels, 1, stride * cinfo.output_height, out);
    if (fclose(out) != 0) { perror(argv[2]); return 1; }
    jpeg_destroy_decompress(&cinfo);
    free(pixels);
    free(data);
    return 0;
}

/* Writes raw CMYK8 samples (width * height * 4 bytes, on stdin) as a CMYK or YCCK JPEG,
   with or without the Adobe APP14 marker and an ICC profile. Used by make.py.
   usage: cmyk_jpeg WIDTH HEIGHT cmyk|ycck adobe|noadobe PROFILE.icc|- OUT.jpg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

int main(int argc, char **argv) {
    if (argc != 7) return 2;
    int width = atoi(argv[1]), height = atoi(argv[2]);
    size_t size = (size_t)width * height * 4;
    unsigned char *pixels = malloc(size);
    if (fread(pixels, 1, size, stdin) != size) return 3;
    struct jpeg_compress_struct cinfo;
    struct jpeg_error_mgr jerr;
    cinfo.err = jpeg_std_error(&jerr);
    jpeg_create_compress(&cinfo);
    FILE *out = fopen(argv[6], "wb");
    jpeg_stdio_dest(&cinfo, out);
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = 4;
    cinfo.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&cinfo);
    jpeg_set_colorspace(&cinfo, strcmp(argv[3], "ycck") == 0 ? JCS_YCCK : JCS_CMYK);
    cinfo.write_Adobe_marker = strcmp(argv[4], "adobe") == 0;
    jpeg_set_quality(&cinfo, 95, TRUE);
    for (int i = 0; i < cinfo.num_components; i++) cinfo.comp_info[i].h_samp_factor = cinfo.comp_info[i].v_samp_factor = 1;
    jpeg_start_compress(&cinfo, TRUE);
    if (strcmp(argv[5], "-") != 0) {
        FILE *f = fopen(argv[5], "rb");
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *icc = malloc(n);
        if (fread(icc, 1, n, f) != (size_t)n) return 4;
        fclose(f);
        jpeg_write_icc_profile(&cinfo, icc, (unsigned)n);
    }
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = pixels + (size_t)cinfo.next_scanline * width * 4;
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    fclose(out);
    return 0;
}

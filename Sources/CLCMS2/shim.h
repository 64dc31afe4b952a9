#ifndef ALCEDO_CLCMS2_SHIM_H
#define ALCEDO_CLCMS2_SHIM_H
#include <lcms2.h>

/* Pixel-format macros of lcms2.h are composite expressions that do not import: re-export them. */
static const cmsUInt32Number ALCEDO_TYPE_RGBA_8 = TYPE_RGBA_8;
static const cmsUInt32Number ALCEDO_TYPE_RGB_8 = TYPE_RGB_8;
static const cmsUInt32Number ALCEDO_TYPE_GRAY_8 = TYPE_GRAY_8;
static const cmsUInt32Number ALCEDO_TYPE_CMYK_8 = TYPE_CMYK_8;
/* CMYK where 0 means full ink (Adobe's inverted convention, as Photoshop writes JPEGs). */
static const cmsUInt32Number ALCEDO_TYPE_CMYK_8_REV = TYPE_CMYK_8_REV;
static const cmsUInt32Number ALCEDO_TYPE_RGB_16 = TYPE_RGB_16;
static const cmsUInt32Number ALCEDO_TYPE_Lab_16 = TYPE_Lab_16;
static const cmsUInt32Number ALCEDO_TYPE_RGB_DBL = TYPE_RGB_DBL;
static const cmsUInt32Number ALCEDO_TYPE_XYZ_DBL = TYPE_XYZ_DBL;
static const cmsUInt32Number ALCEDO_FLAGS_BLACKPOINTCOMPENSATION = cmsFLAGS_BLACKPOINTCOMPENSATION;
static const cmsUInt32Number ALCEDO_FLAGS_COPY_ALPHA = cmsFLAGS_COPY_ALPHA;
static const cmsUInt32Number ALCEDO_FLAGS_NOCACHE = cmsFLAGS_NOCACHE;
static const cmsUInt32Number ALCEDO_INTENT_PERCEPTUAL = INTENT_PERCEPTUAL;
static const cmsUInt32Number ALCEDO_INTENT_RELATIVE_COLORIMETRIC = INTENT_RELATIVE_COLORIMETRIC;

/* lcms reports errors through a global handler that by default does nothing; Alcedo
   installs a silent one explicitly so that a broken profile never prints. */
static void alcedo_lcms_silent_handler(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)context; (void)code; (void)text;
}
static inline void alcedo_lcms_install_silent_handler(void) {
    cmsSetLogErrorHandler(alcedo_lcms_silent_handler);
}
#endif

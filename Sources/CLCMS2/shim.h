// Little CMS 2 (Debian: liblcms2-dev), the colour management engine behind ICC profile conversion.
#include <lcms2.h>

// lcms2 builds its pixel-format words with function-like macros, which Swift does not import.
static const cmsUInt32Number webimage_TYPE_RGBA_8 = TYPE_RGBA_8;
static const cmsUInt32Number webimage_TYPE_CMYK_8 = TYPE_CMYK_8;
static const cmsUInt32Number webimage_TYPE_CMYK_8_REV = TYPE_CMYK_8_REV;

// libheif (Debian: libheif-dev), HEVC through libde265 as Debian builds it.
#include <libheif/heif.h>

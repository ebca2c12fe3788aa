// libavif (Debian: libavif-dev), decoding with dav1d and encoding with aom as Debian builds it.
#include <avif/avif.h>

// libjpeg-turbo's TurboJPEG API (Debian: libturbojpeg0-dev, version 2.1: the tj* functions).
#include <turbojpeg.h>

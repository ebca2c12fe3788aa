// giflib 5 (Debian: libgif-dev); it ships no pkg-config file.
#include <gif_lib.h>

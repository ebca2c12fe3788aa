// libspng (Debian: libspng-dev), a small, fuzzed PNG decoder/encoder over zlib.
#include <spng.h>

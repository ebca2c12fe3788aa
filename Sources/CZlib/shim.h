// zlib (Debian: zlib1g-dev, already needed by libspng): its table-sliced crc32 checks disk-cache entries.
#include <zlib.h>

/// The key of an ``ImageCache`` read in flight: concurrent queries with equal keys share it.
enum CacheReadKey: Hashable, Sendable {
    /// Reading an entry's bytes and metadata from disk.
    case read(String)
    /// Decoding an entry with these options (and promoting it to memory, unless told not to).
    case decode(key: String, options: DecodeOptions, storesInMemory: Bool)
}

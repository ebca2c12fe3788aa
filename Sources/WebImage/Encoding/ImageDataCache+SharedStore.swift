extension ImageDataCache {
    /// The encoded-output tier shared by processes (a fleet's result store over S3): looked up
    /// after the data tier misses and before rendering; written behind every render. Every failure
    /// is a miss: a store that cannot answer costs a render, never an error.
    public protocol SharedStore: Sendable {
        /// The output stored under `key`, or `nil`.
        func value(forKey key: String) async -> EncodedImage?
        /// Stores `image` under `key`, in the background.
        func store(_ image: EncodedImage, forKey key: String)
        /// Waits for the stores under way.
        func waitForPendingStores() async
    }
}

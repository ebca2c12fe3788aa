/// Values every swift-webimage loader starts from.
public enum ImageLoaderDefaults {
    /// The `Accept` header: the formats swift-webimage decodes, best first.
    public static let accept = "image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8"
    /// The `User-Agent` header.
    public static let userAgent = "swift-webimage/0.1"
    /// The headers sent with every HTTP request unless overridden.
    public static let headers: [String: String] = ["Accept": accept, "User-Agent": userAgent]
    /// The idle timeout: a load fails when no bytes arrive for this long.
    public static let idleTimeout: Duration = .seconds(15)
    /// The largest body accepted: 64 MB.
    public static let maxBodySize: Int64 = 64 * 1024 * 1024
    /// How many redirects are followed before ``WebImageError/tooManyRedirects``.
    public static let maxRedirects = 5
}

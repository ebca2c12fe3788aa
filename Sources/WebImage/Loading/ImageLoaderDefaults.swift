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
    /// The resource timeout: a load fails when it has not completed this long after it started,
    /// however steadily bytes arrive (a server dripping a byte every few seconds never trips the
    /// idle timeout).
    public static let resourceTimeout: Duration = .seconds(60)
    /// How long opening a connection may take, TCP and TLS handshake together.
    public static let connectTimeout: Duration = .seconds(10)
    /// The largest body accepted: 64 MB.
    public static let maxBodySize: Int64 = 64 * 1024 * 1024
    /// How many redirects are followed before ``WebImageError/tooManyRedirects``.
    public static let maxRedirects = 5
}

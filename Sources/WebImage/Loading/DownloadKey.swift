/// What makes two requests the same download: the URL and everything that shapes the request,
/// and the custom loader it goes through.
struct DownloadKey: Hashable, Sendable {
    var url: String
    var headers: [String]
    var validators: HTTPLoadRequest.Validators?
    /// The custom loader under the downloader (``PreparedDownload/transport``); `nil` for the
    /// downloader's own loaders, chosen by scheme.
    var transport: InstanceIdentity?

    init(_ request: ImageLoadRequest, transport: (any ImageLoader)? = nil) {
        url = request.url.absoluteString
        headers = request.headers.map { "\($0.key.lowercased()):\($0.value)" }.sorted()
        validators = request.validators
        self.transport = transport.map { InstanceIdentity(of: $0) }
    }
}

/// imgproxy's URL grammar (`--dialect imgproxy`). Not written yet: every URL is answered 501.
struct ImgproxyDialect: URLDialect {
    /// The dialect as `configuration` sets it up (keys, settings).
    /// - Throws: ServiceError for a setting that cannot work.
    init(configuration: ServerConfiguration) throws {}

    func request(path: Substring, query: String) throws -> DialectRequest {
        throw ServiceError(status: 501, code: "notImplemented", message: "the imgproxy dialect is not written yet")
    }
}

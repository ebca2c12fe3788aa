import WebImageHTTP

extension ImageLoadRequest {
    /// Throws ``WebImageError/invalidRequest(_:)`` when `name: value` is not a header field HTTP/1.1
    /// can carry: a name that is not a token, a value with CR, LF, NUL or another control
    /// character (tabs are fine). Loaders check every header this way before sending; call it to
    /// check user input early (the `webimage` CLI does, for `--header`).
    public static func validateHeader(name: String, value: String) throws(WebImageError) {
        if let problem = RequestValidation.headerProblem(name: name, value: value) { throw .invalidRequest(problem) }
    }
}

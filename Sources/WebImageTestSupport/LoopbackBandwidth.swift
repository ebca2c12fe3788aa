extension LoopbackResponse {
    /// This response sent at about `bytesPerSecond`: the body in pieces of a fiftieth of a
    /// second's worth, 20 ms apart (a ``drip``), as over a slow link.
    public func throttled(bytesPerSecond: Int) -> LoopbackResponse {
        var response = self
        response.drip = (chunkSize: max(1, bytesPerSecond / 50), interval: .milliseconds(20))
        return response
    }
}

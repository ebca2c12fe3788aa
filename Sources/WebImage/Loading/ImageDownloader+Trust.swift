import WebImageHTTP

extension ImageDownloader {
    /// Decides whether a server's certificate chain is trusted (see ``/WebImageHTTP/ServerTrustEvaluator``);
    /// a refusal fails the load with ``WebImageError/untrustedCertificate(_:)``.
    @available(*, deprecated, renamed: "ServerTrustEvaluator")
    public typealias ServerTrustEvaluator = WebImageHTTP.ServerTrustEvaluator

    /// Public-key pins and a trust hook for https servers (see ``/WebImageHTTP/ServerTrust``); a
    /// connection that fails them fails the load with ``WebImageError/untrustedCertificate(_:)``.
    @available(*, deprecated, renamed: "ServerTrust")
    public typealias ServerTrust = WebImageHTTP.ServerTrust

    /// A client certificate for mutual TLS, sent to every https server that asks for one.
    @available(*, deprecated, renamed: "ClientCertificate")
    public typealias ClientCertificate = WebImageHTTP.ClientCertificate
}

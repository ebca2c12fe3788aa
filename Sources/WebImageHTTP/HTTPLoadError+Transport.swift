import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

extension HTTPLoadError {
    /// Maps whatever a transport threw to the typed error callers see.
    package static func fromLoading(_ error: any Error) -> HTTPLoadError {
        switch error {
        case let error as HTTPLoadError:
            return error
        case is CancellationError:
            return .cancelled
        case let error as NIOSSLError:
            // BoringSSL names a failed verification CERTIFICATE_VERIFY_FAILED; other handshake
            // failures (protocol, cipher) are connection problems like any other.
            let reason = String(describing: error)
            return reason.contains("CERTIFICATE_VERIFY_FAILED") ? .untrustedCertificate(reason) : .connectionFailed(reason)
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return .untrustedCertificate(String(describing: error))
        case let error as IOError:
            return .connectionFailed(error.description)
        case let error as NIOConnectionError:
            return .connectionFailed("cannot connect to \(error.host):\(error.port)")
        case let error as ChannelError:
            if case .connectTimeout = error { return .timedOut }
            return error == .ioOnClosedChannel || error == .alreadyClosed || error == .eof
                ? .connectionFailed("connection closed") : .connectionFailed(String(describing: error))
        case let error as HTTPParserError:
            return .connectionFailed("malformed HTTP response: \(error)")
        default:
            return .connectionFailed(String(describing: error))
        }
    }

    /// Whether `error` means the peer closed the connection cleanly (end of stream), as opposed to a reset.
    static func isEndOfStream(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPParserError: error == .invalidEOFState
        case let error as ChannelError: error == .eof || error == .inputClosed
        // HTTP/2: the server ended the stream (END_STREAM) short of its Content-Length.
        case is NIOHTTP2Errors.ContentLengthViolated: true
        default: false
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOSSL

/// Where an https connection's trust in the system's certificate authorities comes from.
///
/// NIOSSL's default on Linux reads the whole CA bundle (`/etc/ssl/certs/ca-certificates.crt` on
/// Debian, about 140 certificates) into the TLS context: 9 ms of parsing before the first https
/// connection of every process, for roots a connection mostly never looks at. The same roots
/// sit in a directory of OpenSSL's hashed layout (`<subject hash>.<n>` links, kept by
/// `update-ca-certificates` or `openssl rehash`), which BoringSSL reads lazily: a verification
/// opens only the files its issuers' hashes name. The directory is used when it has that layout;
/// otherwise (another distribution's layout, a container without the links) NIOSSL's default is.
package enum SystemTrustRoots {
    /// Debian's and Ubuntu's hashed directory (Alpine, Arch and SUSE keep one there too).
    package static let defaultDirectory = "/etc/ssl/certs"

    /// The trust roots of `directory` when it holds hashed certificate links, else `nil`.
    package static func hashedDirectory(_ directory: String) -> NIOSSLTrustRoots? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory),
              names.contains(where: isHashedCertificateName) else { return nil }
        return .file(directory)
    }

    /// `0123abcd.0`: eight hex digits of the subject's hash, a dot, a collision counter.
    package static func isHashedCertificateName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 8, !parts[1].isEmpty else { return false }
        return parts[0].allSatisfy(\.isHexDigit) && parts[1].allSatisfy(\.isASCII) && parts[1].allSatisfy(\.isNumber)
    }
}

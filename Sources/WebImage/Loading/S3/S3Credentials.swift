#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension S3Configuration {
    /// The credentials S3 requests are signed with: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`
    /// and, for temporary credentials, `AWS_SESSION_TOKEN`. Never printed. (`WebImageServer`
    /// names it `S3Credentials`.)
    public struct Credentials: Sendable, Equatable {
        /// The access key ID (`AKIA...`).
        public var accessKeyID: String
        /// The secret access key.
        public var secretAccessKey: String
        /// The session token of temporary credentials, sent as `x-amz-security-token`.
        public var sessionToken: String?

        /// Credentials from their parts.
        public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }

        /// The credentials in `environment`, if both the key and the secret are there.
        public static func environment(_ environment: [String: String]) -> Credentials? {
            guard let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty,
                  let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else { return nil }
            return Credentials(accessKeyID: key, secretAccessKey: secret,
                               sessionToken: environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 })
        }
    }
}

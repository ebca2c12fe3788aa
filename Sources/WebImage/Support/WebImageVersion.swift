/// The release of swift-webimage this build is.
///
/// The one place the number lives: `webimage --version` prints it, `CHANGELOG.md`'s top entry
/// names it (a test checks the two agree), and a release tags it as `vX.Y.Z` (`RELEASING.md`).
/// Semantic versioning; before 1.0 a minor release may change the public API.
public enum WebImageVersion {
    /// The version, `MAJOR.MINOR.PATCH`.
    public static let current = "0.1.0"
}

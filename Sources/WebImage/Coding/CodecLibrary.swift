import CCodecLibraries

/// The codec libraries opened on first use rather than at process start: libheif, libavif and
/// libjxl (with what they pull in, some 40 shared libraries whose loading and initializers cost
/// every start of the `webimage` command 20 ms). A coder calls ``require()`` before its first
/// call into its library; when the library cannot be opened (not installed, another version than
/// the build's, or listed in `WEBIMAGE_DISABLED_CODECS`) the decode or encode fails with
/// ``WebImageError/unsupportedFormat(_:)`` instead of the process failing to start.
package enum CodecLibrary: Sendable {
    case heif, avif, jxl

    /// Whether the library is open and every function the coder calls was found. The first call
    /// opens it (once per process, thread-safe).
    package var isAvailable: Bool {
        switch self {
        case .heif: webimage_codec_library_load(WEBIMAGE_CODEC_HEIF) != 0
        case .avif: webimage_codec_library_load(WEBIMAGE_CODEC_AVIF) != 0
        case .jxl: webimage_codec_library_load(WEBIMAGE_CODEC_JXL) != 0 && webimage_codec_library_load(WEBIMAGE_CODEC_JXL_THREADS) != 0
        }
    }

    /// Opens the library, or throws ``WebImageError/unsupportedFormat(_:)`` saying why it cannot be.
    package func require() throws {
        guard !isAvailable else { return }
        throw WebImageError.unsupportedFormat("\(formatName): \(libraryName) is not available (\(reason))")
    }

    private var reason: String {
        let library: webimage_codec_library = switch self {
        case .heif: WEBIMAGE_CODEC_HEIF
        case .avif: WEBIMAGE_CODEC_AVIF
        case .jxl: webimage_codec_library_load(WEBIMAGE_CODEC_JXL) == 0 ? WEBIMAGE_CODEC_JXL : WEBIMAGE_CODEC_JXL_THREADS
        }
        return String(cString: webimage_codec_library_error(library))
    }

    private var formatName: String {
        switch self {
        case .heif: "HEIF"
        case .avif: "AVIF"
        case .jxl: "JPEG XL"
        }
    }

    private var libraryName: String {
        switch self {
        case .heif: "libheif"
        case .avif: "libavif"
        case .jxl: "libjxl"
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ordered list of coders a load decodes and encodes with; the first coder that accepts the
/// data wins, so a custom coder added with ``addCoder(_:)`` overrides the built-in ones.
///
/// The manager is itself an ``ImageCoder``, so it can stand wherever one coder can.
public final class ImageCodersManager: ImageCoder {
    /// The manager that loads use unless a request names another.
    public static let shared = ImageCodersManager()

    /// The built-in coders, in the order they are asked: JPEG, PNG, GIF, WebP, AVIF, HEIF, JPEG XL.
    public static var defaultCoders: [any ImageCoder] {
        [JPEGCoder(), PNGCoder(), GIFCoder(), WebPCoder(), AVIFCoder(), HEIFCoder(), JXLCoder()]
    }

    /// Guards the coder list; coders are called outside the lock.
    private let list: Locked<[any ImageCoder]>

    /// Creates a manager with the given coders (the built-in ones by default).
    public init(coders: [any ImageCoder] = ImageCodersManager.defaultCoders) {
        list = Locked(coders)
    }

    /// The coders, first asked first.
    public var coders: [any ImageCoder] {
        get { list.withLock { $0 } }
        set { list.withLock { $0 = newValue } }
    }

    /// Puts `coder` first, so it is asked before every other.
    public func addCoder(_ coder: any ImageCoder) {
        list.withLock { $0.insert(coder, at: 0) }
    }

    /// Removes every coder of type `type`.
    public func removeCoders<Coder: ImageCoder>(ofType type: Coder.Type) {
        list.withLock { $0.removeAll { $0 is Coder } }
    }

    public func canDecode(_ data: Data) -> Bool {
        coders.contains { $0.canDecode(data) }
    }

    /// Decodes with the first coder that accepts `data`, then applies the orientation when the
    /// options ask for it and the coder did not.
    /// - Throws: ``WebImageError/emptyData`` for no bytes, ``WebImageError/unsupportedFormat(_:)``
    ///   when no coder accepts them, or the coder's error.
    public func decode(_ data: Data, options: DecodeOptions) throws -> DecodedImage {
        guard !data.isEmpty else { throw WebImageError.emptyData }
        guard let coder = coders.first(where: { $0.canDecode(data) }) else {
            let format = ImageFormat.detect(data)
            throw WebImageError.unsupportedFormat(format == .unknown ? "unrecognized data" : format.rawValue)
        }
        var image = try coder.decode(data, options: options)
        if options.applyOrientation, image.orientation != .up {
            image = try image.applyingOrientation()
        }
        if image.scale != options.scale, options.scale > 0 { image.scale = options.scale }
        return image
    }

    public func canEncode(_ format: ImageFormat) -> Bool {
        coders.contains { $0.canEncode(format) }
    }

    /// Encodes with the first coder that encodes `format`.
    /// - Throws: ``WebImageError/unsupportedFormat(_:)`` when none does, or the coder's error.
    public func encode(_ image: DecodedImage, format: ImageFormat, options: EncodeOptions) throws -> Data {
        guard let coder = coders.first(where: { $0.canEncode(format) }) else {
            throw WebImageError.unsupportedFormat("no encoder for \(format.rawValue)")
        }
        // A lazily decoded animation is encoded from all its frames: decoded at once, or frame by
        // frame for an encoder that takes them one at a time (animated WebP).
        let whole = image.animation != nil && !options.firstFrameOnly && !(coder is WebPCoder) ? try image.materialized() : image
        return try coder.encode(whole, format: format, options: options)
    }

    /// The first coder's incremental decoder for `format`, whose images get the orientation and
    /// scale ``decode(_:options:)`` gives. A progressive load through ``ImageManager`` stops it in
    /// the middle of an update when the load is cancelled (the library's own cancellation flag,
    /// checked between bands of rows).
    public func makeIncrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        for coder in coders {
            if let decoder = coder.makeIncrementalDecoder(for: format, options: options) {
                return ManagedIncrementalDecoder(decoder, options: options)
            }
        }
        return nil
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// The service's settings a render uses beyond the request: `--quality` per output format and
/// the `--watermark` image, decoded once at start.
struct RenderSettings: Sendable {
    /// The quality of each lossy output format when `q` is absent.
    var qualities: [ImageFormat: Int] = ServerConfiguration.defaultQualities
    /// `--watermark`'s pixels and a name that changes with its bytes.
    var watermark: (mark: Bitmap, name: String)?
    /// Which files `local:///PATH` names here: `--local-root` as configured.
    var localRoot: String?
    /// Which store `s3://BUCKET/KEY` names here: `--s3-endpoint`, else AWS in `--s3-region`.
    var s3Store = "aws:us-east-1"

    /// The defaults: ``ServerConfiguration/defaultQualities``, no watermark.
    init() {}

    /// The settings of `configuration`, the watermark file read and decoded with `coders`.
    /// - Throws: ``ServiceError`` naming the watermark file when it cannot be read or decoded.
    init(_ configuration: ServerConfiguration, coders: ImageCodersManager) throws {
        qualities = configuration.qualities
        localRoot = configuration.localRoot
        s3Store = configuration.s3Endpoint ?? "aws:\(configuration.s3Region)"
        if let path = configuration.watermarkFile {
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                let image = try coders.decode(data, options: DecodeOptions(pixelLimit: 16 << 20, firstFrameOnly: true,
                                                                           applyOrientation: true))
                watermark = (image.bitmap, String(SHA256.hex(of: Array(data)).prefix(16)))
            } catch {
                throw ServiceError.badParameter("watermark \(path) is not a readable image: \(error)")
            }
        }
    }

    /// The quality for an output in `format` when the request gave none.
    func quality(for format: ImageFormat) -> Int {
        qualities[format] ?? ImageParameters.defaultQuality
    }

    /// What the output cache key and the ETag add for the settings a render of `parameters`
    /// depends on: the quality table when `q` is absent, the watermark's name when `wm` is given
    /// (so changing either never serves an output made under the old one), and for a `local:`
    /// or `s3:` source the root or store it names here: two instances with other roots or
    /// endpoints share a result store without serving each other's files as their own.
    func keySuffix(for parameters: ImageParameters) -> String {
        var suffix = ""
        if LocalRoot.isLocal(parameters.url) { suffix += "\nlocal-root=\(localRoot ?? "-")" }
        if S3Configuration.isS3(parameters.url) { suffix += "\ns3=\(s3Store)" }
        if parameters.quality == nil {
            suffix += "\nquality=" + qualities.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value)" }
                .joined(separator: ",")
        }
        if parameters.watermark != nil { suffix += "\nwatermark=\(watermark?.name ?? "-")" }
        return suffix
    }
}

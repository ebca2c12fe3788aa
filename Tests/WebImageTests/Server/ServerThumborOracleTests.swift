import Foundation
import Testing
import WebImage
import WebImageServer
import WebImageTestSupport

/// `--dialect thumbor` against thumbor 7.8 itself (PIL engine, no storage), started by the test:
/// the same signed URLs, from libthumbor's `CryptoURL`, sent to both. The same status, type and
/// size; pixels within ``tolerance`` (mean absolute difference per channel, premultiplied by
/// alpha, over 0...255): what two Lanczos resamplers and two JPEG encoders at q80 differ by.
@Suite("webimage serve: thumbor's URLs answered as thumbor answers them", .enabled(if: ThumborReference.available,
       "thumbor 7.8 and libthumbor are not installed (scripts/test.sh makes .build/thumbor-venv from PyPI)"),
       .serialized, .timeLimit(.minutes(5)))
struct ServerThumborOracleTests {
    /// The largest mean absolute difference accepted. Measured worst on 2026-12-04: printed by the test.
    static let tolerance = 6.0

    /// libthumbor options for the 640×480 photo (`alpha` for the 64×64 PNG with a transparent centre).
    private static var cases: [[String: Any]] { [
        ["width": 300, "height": 200],
        ["width": 300],
        ["height": 240],
        ["width": 300, "height": 200, "fit_in": true],
        ["width": 300, "height": 200, "full_fit_in": true],
        ["width": 200, "height": 300, "adaptive_fit_in": true],
        ["width": 200, "height": 300, "adaptive_full_fit_in": true],
        ["width": 300, "height": 300, "fit_in": true, "filters": ["fill(white)"]],
        ["width": 300, "height": 300, "fit_in": true, "filters": ["fill(ff0000)"]],
        ["width": 1000, "height": 800],
        ["width": 1000, "height": 1000, "fit_in": true],
        ["width": 1000, "height": 1000, "fit_in": true, "filters": ["upscale()"]],
        ["width": 1000, "height": 300, "filters": ["no_upscale()"]],
        ["width": 100, "height": 100, "crop": [[0, 0], [320, 240]]],
        ["width": 200, "crop": [[100, 50], [500, 400]]],
        ["width": 100, "height": 100, "crop": [[700, 500], [800, 600]]],
        ["width": 150, "crop": [[600, 400], [900, 900]]],
        ["width": 300, "height": 200, "flip": true],
        ["width": 300, "height": 200, "flop": true],
        ["width": 300, "height": 200, "flip": true, "flop": true, "halign": "left", "valign": "top"],
        ["width": 300, "height": 100, "halign": "right", "valign": "bottom"],
        ["width": 100, "height": 300, "halign": "left"],
        ["width": 100, "height": 300, "halign": "right"],
        ["width": 300, "height": 100, "valign": "top"],
        ["width": 300, "height": 200, "filters": ["rotate(90)"]],
        ["width": 300, "height": 200, "filters": ["rotate(180)"]],
        ["width": 200, "height": 300, "flip": true, "filters": ["rotate(270)"]],
        ["width": 300, "height": 200, "filters": ["format(png)", "grayscale()"]],
        ["width": 300, "height": 200, "filters": ["format(webp)", "quality(60)"]],
        ["width": 300, "height": 200, "filters": ["blur(2)"]],
        ["width": 300, "height": 200, "filters": ["blur(5,2)"]],
        ["width": 200, "height": 200, "filters": ["focal(500x100:600x200)"]],
        ["width": 100, "height": 100, "crop": [[200, 0], [640, 480]], "filters": ["focal(500x100:600x200)"]],
        ["width": 120, "filters": ["strip_exif()", "strip_icc()"]],
        ["width": 300, "height": 100, "filters": ["stretch()"]],
        ["width": 300, "height": 200, "smart": true],
        ["width": 300, "height": 200, "filters": ["proportion(0.5)"]],
        ["width": 300, "height": 200, "filters": ["watermark(MARK,10,10,0)"]],
        ["width": 300, "height": 200, "filters": ["watermark(MARK,-10,-10,50)"]],
        ["width": 300, "height": 200, "filters": ["watermark(MARK,center,center,30,20,20)"]],
        ["width": 300, "height": 200, "filters": ["watermark(MARK,10p,-5p,0,none,30)", "format(png)"]],
        ["width": 300, "height": 200, "filters": ["round_corner(30,255,0,0)"]],
        ["width": 200, "height": 200, "filters": ["round_corner(20,0,0,255)", "format(png)"]],
        ["width": 333, "height": 222, "fit_in": true, "filters": ["proportion(0.33)"]],
        ["width": 600, "height": 400, "filters": ["max_bytes(6000)"]],
        ["width": 600, "height": 400, "filters": ["max_bytes(100)"]],
        ["width": 300, "height": 200, "filters": ["max_bytes(3000)", "format(webp)"]],
        ["width": 300, "height": 200, "filters": ["brightness(20)"]],
        ["width": 300, "height": 200, "filters": ["contrast(-30)"]],
        ["width": 300, "height": 200, "filters": ["saturation(0.4)"]],
        ["width": 300, "height": 200, "filters": ["rgb(10,-20,30)", "brightness(-5)"]],
        ["width": 300, "height": 200, "filters": ["sharpen(1.5,0.5,true)"]],
        ["width": 300, "height": 200, "filters": ["sharpen(2,1,false)", "format(png)"]],
        ["framed": true, "trim": true, "width": 150],
        ["framed": true, "trim": ["bottom-right", 10], "width": 200, "height": 100],
        ["framed": true, "trim": true, "crop": [[20, 40], [300, 200]], "width": 100],
        ["framed": true, "trim": true, "width": 120, "height": 120, "fit_in": true, "filters": ["sharpen(1,1,true)", "fill(black)"]],
        ["alpha": true, "width": 32, "height": 32],
        ["alpha": true, "width": 48, "height": 32, "filters": ["background_color(ff0000)"]],
        ["alpha": true, "width": 100, "height": 50, "fit_in": true, "filters": ["fill(blue)"]],
    ] }

    private func start() async throws -> (ServerHarness, ThumborReference.Server) {
        let server = try await ServerHarness.start { configuration, _ in
            configuration.dialects = [DialectMount(name: .thumbor)]
            configuration.thumborKey = ThumborReference.key
        }
        server.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        server.origin.route("/alpha.png", .image(ServerTestImages.alpha, contentType: "image/png"))
        server.origin.route("/framed.png", .image(ServerTestImages.framed, contentType: "image/png"))
        return (server, try await ThumborReference.Server.start())
    }

    private func urls(_ cases: [[String: Any]], origin: LoopbackServer) async throws -> [String] {
        try await ThumborReference.urls(cases.map { options in
            var options = options
            let alpha = options.removeValue(forKey: "alpha") != nil, framed = options.removeValue(forKey: "framed") != nil
            options["image_url"] = origin.url(alpha ? "/alpha.png" : framed ? "/framed.png" : "/photo.jpg").absoluteString
            // A watermark's image: the PNG with a transparent centre, from the same origin.
            if let filters = options["filters"] as? [String] {
                options["filters"] = filters.map { $0.replacingOccurrences(of: "MARK", with: origin.url("/alpha.png").absoluteString) }
            }
            return options
        })
    }

    @Test func everyURLAnswersAsThumborDoes() async throws {
        let (server, thumbor) = try await start()
        let urls = try await urls(Self.cases, origin: server.origin)
        // The same URLs without their watermark, to show a mark's place is seen.
        let bareURLs = try await self.urls(Self.cases.map { options in
            var options = options
            options["filters"] = (options["filters"] as? [String])?.filter { !$0.hasPrefix("watermark(") }
            return options
        }, origin: server.origin)
        var worst = (difference: 0.0, url: "")
        for (index, url) in urls.enumerated() {
            let ours: HTTPReply, theirs: HTTPReply
            do {
                ours = try await ServerTestClient.send(port: server.port, url)
                theirs = try await ServerTestClient.send(port: thumbor.port, url)
            } catch {
                Issue.record("\(url): \(error)")
                continue
            }
            #expect(ours.status == theirs.status, "\(url): \(ours.status), thumbor \(theirs.status) \(String(decoding: ours.body.prefix(200), as: UTF8.self))")
            guard ours.status == 200, theirs.status == 200 else { continue }
            #expect(ours.header("Content-Type") == theirs.header("Content-Type"), "\(url)")
            if url.contains("max_bytes") {
                // The same rule (three quarters of the quality until it fits): within the bound
                // wherever thumbor's answer is, the first encoding where neither fits.
                let bound = try #require(Int(url.components(separatedBy: "max_bytes(")[1].prefix { $0.isNumber }))
                #expect(theirs.body.count > bound || ours.body.count <= bound, "\(url): \(ours.body.count) bytes, thumbor \(theirs.body.count)")
            }
            let a = try ServerTestImages.decode(ours.body), b = try ServerTestImages.decode(theirs.body)
            #expect(a.width == b.width && a.height == b.height, "\(url): \(a.width)×\(a.height), thumbor \(b.width)×\(b.height)")
            guard a.width == b.width, a.height == b.height else { continue }
            // smart/: thumbor runs the detectors it is configured with (none here: it centres);
            // the service crops where the picture has detail. Same size, another window.
            if url.contains("/smart/") { continue }
            let difference = Self.meanAbsoluteDifference(a.bitmap, b.bitmap)
            #expect(difference <= Self.tolerance, "\(url): mean absolute difference \(difference)")
            if url.contains("watermark") {
                // The mark's 64×64 with a tolerance over the whole picture would hide a mark put
                // elsewhere: without it, thumbor's answer must differ from ours far more.
                let bare = try await ServerTestClient.send(port: server.port, bareURLs[index])
                let unmarked = try ServerTestImages.decode(bare.body)
                if unmarked.width == b.width, unmarked.height == b.height {
                    let without = Self.meanAbsoluteDifference(unmarked.bitmap, b.bitmap)
                    // Seen 2026-12-04: 0.12-0.63 with it, 2.3-6.8 without.
                    #expect(difference * 3 < without, "\(url): \(difference) with the mark, \(without) without it")
                }
            }
            if difference > worst.difference { worst = (difference, url) }
        }
        print("thumbor oracle: \(urls.count) URLs, worst mean absolute difference \(worst.difference) at \(worst.url)")
        await thumbor.stop()
        try await server.stop()
    }

    /// `meta/` URLs: thumbor's JSON, number for number.
    @Test func metaAnswersThumborsJSON() async throws {
        let (server, thumbor) = try await start()
        let metaCases: [[String: Any]] = [
            [:],
            ["width": 300, "height": 200],
            ["width": 300, "height": 200, "fit_in": true],
            ["width": 200, "height": 300, "adaptive_full_fit_in": true],
            ["width": 100, "height": 200, "crop": [[10, 20], [330, 260]], "flip": true, "halign": "left", "valign": "top"],
            ["width": 300, "height": 200, "filters": ["rotate(90)", "format(png)"]],
            ["width": 200, "height": 200, "filters": ["focal(500x100:600x200)"]],
            ["width": 100, "height": 100, "crop": [[200, 0], [640, 480]], "filters": ["focal(500x100:600x200)"]],
            ["width": 1000, "height": 300, "filters": ["no_upscale()"]],
            ["width": 300, "height": 100, "filters": ["stretch()"]],
            ["width": 333, "height": 111, "halign": "right", "valign": "bottom"],
            ["width": 300, "height": 200, "filters": ["proportion(0.33)"]],
            ["width": 1000, "height": 1000, "fit_in": true, "filters": ["upscale()"]],
            ["filters": ["rotate(90)"]],
        ].map { $0.merging(["meta": true]) { _, new in new } }
        for url in try await urls(metaCases, origin: server.origin) {
            let ours = try await ServerTestClient.send(port: server.port, url)
            let theirs = try await ServerTestClient.send(port: thumbor.port, url)
            #expect(ours.status == 200 && theirs.status == 200, "\(url): \(ours.status), thumbor \(theirs.status)")
            #expect(ours.header("Content-Type") == "application/json")
            let a = try Self.normalised(ours.body), b = try Self.normalised(theirs.body)
            #expect(a == b, "\(url):\n ours   \(a)\n thumbor \(b)")
        }
        await thumbor.stop()
        try await server.stop()
    }

    /// The JSON with every number as a Double and `url` percent-decoded (thumbor quotes it).
    private static func normalised(_ body: Data) throws -> NSDictionary {
        func walk(_ value: Any, key: String?) -> Any {
            switch value {
            case let dictionary as [String: Any]:
                return NSDictionary(dictionary: Dictionary(uniqueKeysWithValues: dictionary.map { ($0.key, walk($0.value, key: $0.key)) }))
            case let array as [Any]: return NSArray(array: array.map { walk($0, key: nil) })
            case let string as String where key == "url": return string.removingPercentEncoding ?? string
            case let number as NSNumber where !(value is String): return NSNumber(value: number.doubleValue)
            default: return value
            }
        }
        let object = try JSONSerialization.jsonObject(with: body)
        return try #require(walk(object, key: nil) as? NSDictionary)
    }

    /// The mean absolute difference per channel of two same-sized bitmaps, colours premultiplied
    /// by alpha (a transparent pixel's colour is no part of the picture).
    static func meanAbsoluteDifference(_ a: Bitmap, _ b: Bitmap) -> Double {
        let x: [UInt8] = a.withUnsafeBytes { [UInt8]($0) }
        let y: [UInt8] = b.withUnsafeBytes { [UInt8]($0) }
        var total = 0
        for pixel in stride(from: 0, to: min(x.count, y.count) - 3, by: 4) {
            let alphaA = Int(x[pixel + 3]), alphaB = Int(y[pixel + 3])
            for channel in 0..<3 {
                total += abs(Int(x[pixel + channel]) * alphaA / 255 - Int(y[pixel + channel]) * alphaB / 255)
            }
            total += abs(alphaA - alphaB)
        }
        return Double(total) / Double(max(1, x.count))
    }
}

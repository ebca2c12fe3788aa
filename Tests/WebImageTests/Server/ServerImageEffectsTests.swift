#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import WebImage
@testable import WebImageServer
import WebImageTestSupport

/// `GET /image` with the parameters of issue #33 over real HTTP, the pixels against Pillow
/// (lossless PNG source and output, so geometry is compared exactly).
@Suite("webimage serve: placement, effects, formats and watermark")
struct ServerImageEffectsTests {
    /// A 120×90 texture, as a PNG the origin serves.
    static let texture: Bitmap = try! PillowTransformOracle.texture(width: 120, height: 90)
    static let texturePNG: Data = try! PNGCoder.encodeBitmap(texture, keepAlpha: false)

    private func withServer(_ configure: (inout ServerConfiguration, LoopbackServer) -> Void = { _, _ in },
                            _ body: (ServerHarness) async throws -> Void) async throws {
        let harness = try await ServerHarness.start(configure)
        harness.origin.route("/texture.png", .image(Self.texturePNG, contentType: "image/png"))
        harness.origin.route("/alpha.png", .image(ServerTestImages.alpha, contentType: "image/png"))
        harness.origin.route("/photo.jpg", .image(ServerTestImages.photo, contentType: "image/jpeg"))
        harness.origin.route("/rotated.jpg", .image(ServerTestImages.rotated, contentType: "image/jpeg"))
        try await withShutdown(of: harness, { try await $0.stop() }, body)
    }

    private func bitmap(_ reply: HTTPReply) throws -> Bitmap {
        try #require(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        return try ServerTestImages.decode(reply.body).bitmap
    }

    /// crop → rotate → flip, exactly as Pillow's crop and transposes in that order.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
    func cropRotateFlipAreExactAndInOrder() async throws {
        try await withServer { server in
            let base = "url=" + server.source("/texture.png") + "&format=png"
            let cases: [(String, String)] = [
                ("&crop=10,20,50,40", "images[0].crop((10, 20, 60, 60))"),
                ("&crop=100,70,50,40", "images[0].crop((100, 70, 120, 90))"),  // clipped to the image
                ("&rotate=90", "images[0].transpose(Image.Transpose.ROTATE_270)"),
                ("&rotate=270&flip=h", "images[0].transpose(Image.Transpose.ROTATE_90).transpose(Image.Transpose.FLIP_LEFT_RIGHT)"),
                ("&flip=v", "images[0].transpose(Image.Transpose.FLIP_TOP_BOTTOM)"),
                ("&flip=hv", "images[0].transpose(Image.Transpose.ROTATE_180)"),
                ("&crop=10,20,50,40&rotate=90&flip=h",
                 "images[0].crop((10, 20, 60, 60)).transpose(Image.Transpose.ROTATE_270).transpose(Image.Transpose.FLIP_LEFT_RIGHT)"),
            ]
            for (query, script) in cases {
                let ours = try bitmap(try await server.get(base + query))
                let pillow = try PillowTransformOracle.run("emit(\(script))", [Self.texture])
                #expect(PixelDifference.maximum(ours, pillow) == 0, "\(query)")
            }
            // The crop is in the oriented source's pixels: the EXIF-rotated 48×64 JPEG.
            let oriented = try bitmap(try await server.get("url=" + server.source("/rotated.jpg") + "&format=png&crop=0,50,48,14"))
            #expect(oriented.width == 48 && oriented.height == 14)
            // Wholly outside: 400 naming crop; rotate before resize (a 90° turn swaps the box's fit).
            let outside = try await server.get(base + "&crop=120,0,10,10")
            #expect(outside.status == 400 && outside.errorCode == "badParameter")
            #expect(String(decoding: outside.body, as: UTF8.self).contains("'crop'"))
            let turned = try bitmap(try await server.get(base + "&rotate=90&w=45"))
            #expect(turned.width == 45 && turned.height == 60)
        }
    }

    /// dpr multiplies the box, never enlarging without enlarge=1; pad is ImageOps.pad; gravity
    /// and focus place the cover crop as ImageOps.fit's centering and Pillow's crop box.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
    func dprPadGravityAndFocusMatchPillow() async throws {
        try await withServer { server in
            let base = "url=" + server.source("/texture.png") + "&format=png"
            let sizes: [(String, (Int, Int))] = [("&w=30&dpr=2", (60, 45)), ("&w=30&h=30&dpr=1.5", (45, 34)),
                                                 ("&w=100&dpr=2", (120, 90)), ("&w=100&dpr=2&enlarge=1", (200, 150)),
                                                 ("&w=200&h=200&fit=pad", (200, 200)), ("&w=50&h=20&fit=pad&dpr=2", (100, 40))]
            for (query, size) in sizes {
                let image = try bitmap(try await server.get(base + query))
                #expect(image.width == size.0 && image.height == size.1, "\(query)")
            }
            // Boxes the source fits at its own size, so the service's one resample (after a
            // thumbnail decode, two) does not blur the comparison of where things are: the
            // placements are exact. Resampled placements are compared in PlacementTransformerTests.
            let oracles: [(String, String, Double, Int)] = [
                ("&w=120&h=180&fit=pad&bg=0A141E&gravity=top",
                 "ImageOps.pad(images[0], (120, 180), Image.LANCZOS, color=(10, 20, 30, 255), centering=(0.5, 0))", 0.001, 0),
                ("&w=120&h=180&fit=pad&bg=0A141E",
                 "ImageOps.pad(images[0], (120, 180), Image.LANCZOS, color=(10, 20, 30, 255))", 0.001, 0),
                ("&w=60&h=90&fit=cover&gravity=right", "ImageOps.fit(images[0], (60, 90), Image.LANCZOS, centering=(1, 0.5))", 0.001, 0),
                ("&w=60&h=90&fit=cover&gravity=left", "ImageOps.fit(images[0], (60, 90), Image.LANCZOS, centering=(0, 0.5))", 0.001, 0),
                ("&w=60&h=90&fit=cover", "ImageOps.fit(images[0], (60, 90), Image.LANCZOS)", 0.001, 0),
                ("&w=60&h=90&fit=cover&focus=0.9,0.5", "images[0].crop((60, 0, 120, 90))", 0.001, 0),
                ("&w=60&h=90&fit=cover&focus=0.4,0.5", "images[0].crop((18, 0, 78, 90))", 0.001, 0),
                ("&w=30&h=45&dpr=2&fit=cover&focus=0.4,0.5", "images[0].crop((18, 0, 78, 90))", 0.001, 0),
                ("&blur=2", "images[0].filter(ImageFilter.GaussianBlur(2))", 1.5, 12),
                ("&sharpen=1", "images[0].filter(ImageFilter.UnsharpMask(1, 150, 3))", 1.5, 16),
            ]
            for (query, script, meanLimit, maximumLimit) in oracles {
                let ours = try bitmap(try await server.get(base + query))
                let pillow = try PillowTransformOracle.run("emit(\(script))", [Self.texture])
                let mean = try #require(PixelDifference.mean(ours, pillow), "\(query)")
                let maximum = try #require(PixelDifference.maximum(ours, pillow), "\(query)")
                #expect(mean < meanLimit && maximum <= maximumLimit, "\(query): mean \(mean), max \(maximum)")
            }
        }
    }

    /// bg flattens transparency for JPEG (default white), pads in its colour; progressive=1
    /// gives SOF2; the ETag differs for each.
    @Test func backgroundAndProgressive() async throws {
        try await withServer { server in
            let alpha = "url=" + server.source("/alpha.png") + "&format=jpeg&q=95"
            // The 64×64 quadrants have a transparent centre.
            let white = try bitmap(try await server.get(alpha))
            let blue = try bitmap(try await server.get(alpha + "&bg=0000FF"))
            let centreWhite = try #require(white.pixel(x: 32, y: 32)), centreBlue = try #require(blue.pixel(x: 32, y: 32))
            #expect(centreWhite.r > 240 && centreWhite.g > 240 && centreWhite.b > 240)
            #expect(centreBlue.r < 20 && centreBlue.g < 20 && centreBlue.b > 230)
            // A PNG keeps the alpha: no flatten.
            let png = try bitmap(try await server.get("url=" + server.source("/alpha.png") + "&format=png&bg=0000FF"))
            #expect(png.pixel(x: 32, y: 32)?.a == 0)
            let photo = "url=" + server.source("/photo.jpg") + "&w=200&format=jpeg"
            let progressive = try await server.get(photo + "&progressive=1")
            let baseline = try await server.get(photo)
            func markers(_ data: Data) -> [UInt8] { data.withUnsafeBytes { Array(JPEGMarkerWalker($0)).map(\.marker) } }
            #expect(markers(progressive.body).contains(0xC2) && !markers(progressive.body).contains(0xC0))
            #expect(markers(baseline.body).contains(0xC0) && !markers(baseline.body).contains(0xC2))
            #expect(progressive.header("ETag") != baseline.header("ETag"))
        }
    }

    /// format=jxl is JPEG XL that djxl decodes to the same size; auto picks it only when
    /// --auto-formats lists it and Accept names it.
    @Test(.enabled(if: CodecTool.djxl.isAvailable, CodecTool.djxl.absentReason),
          .enabled(if: ImageCodersManager.shared.canEncode(.jxl), "this build's libjxl cannot encode"))
    func jpegXLOutputAndAutoFormats() async throws {
        try await withServer({ configuration, _ in configuration.autoFormats = [.jxl, .webp] }) { server in
            let photo = "url=" + server.source("/photo.jpg") + "&w=160"
            let jxl = try await server.get(photo + "&format=jxl")
            #expect(jxl.status == 200 && jxl.header("Content-Type") == "image/jxl" && ImageFormat.detect(jxl.body) == .jxl)
            let directory = FileManager.default.temporaryDirectory
            let input = directory.appendingPathComponent("serve-\(UUID().uuidString).jxl")
            let output = directory.appendingPathComponent("serve-\(UUID().uuidString).png")
            defer { try? FileManager.default.removeItem(at: input); try? FileManager.default.removeItem(at: output) }
            try jxl.body.write(to: input)
            try CodecTool.djxl.run([input.path, output.path])
            let decoded = try ServerTestImages.decode(try Data(contentsOf: output))
            #expect(decoded.width == 160 && decoded.height == 120)
            let auto = try await server.get(photo, headers: [("Accept", "image/jxl,image/avif,image/webp,*/*")])
            #expect(ImageFormat.detect(auto.body) == .jxl && auto.header("Vary") == "Accept")
            let webp = try await server.get(photo, headers: [("Accept", "image/avif,image/webp,*/*")])
            #expect(ImageFormat.detect(webp.body) == .webp)
        }
        // The default list does not try JPEG XL.
        try await withServer { server in
            let auto = try await server.get("url=" + server.source("/photo.jpg") + "&w=160", headers: [("Accept", "image/jxl,*/*")])
            #expect(ImageFormat.detect(auto.body) == .jpeg)
        }
    }

    /// --quality sets the quality when q is absent (and the key, so outputs do not mix); q wins.
    @Test func qualitySettingPerFormat() async throws {
        let photo = { (server: ServerHarness) in "url=" + server.source("/photo.jpg") + "&w=300&format=jpeg" }
        var sizes: [Int] = [], tags: [String?] = []
        for quality in [20, 95] {
            try await withServer({ configuration, _ in configuration.qualities[.jpeg] = quality }) { server in
                let reply = try await server.get(photo(server))
                let explicit = try await server.get(photo(server) + "&q=50")
                sizes.append(reply.body.count)
                tags.append(reply.header("ETag"))
                tags.append(explicit.header("ETag"))
            }
        }
        #expect(sizes[0] < sizes[1])
        #expect(tags[0] != tags[2])
        // The quality table is in the key and ETag when q is absent, not when q is given.
        var low = RenderSettings(), high = RenderSettings()
        low.qualities[.jpeg] = 20
        high.qualities[.jpeg] = 95
        let absent = try ImageParameters(query: "url=http%3A%2F%2Fa.example%2Fb.jpg&w=3")
        let given = try ImageParameters(query: "url=http%3A%2F%2Fa.example%2Fb.jpg&w=3&q=50")
        #expect(low.keySuffix(for: absent) != high.keySuffix(for: absent))
        #expect(low.keySuffix(for: given) == high.keySuffix(for: given))
    }

    /// wm composites --watermark at its gravity, scale and opacity (alpha_composite over the
    /// resized output); without --watermark, wm is 400.
    @Test(.enabled(if: PillowOracle.isAvailable, PillowOracle.absentReason))
    func watermarkFromTheServiceFile() async throws {
        let mark = try TestImages.bitmap(width: 40, height: 20) { x, _ in (255, UInt8(x * 6), 0, x < 20 ? 255 : 100) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mark-\(UUID().uuidString).png")
        try PNGCoder.encodeBitmap(mark, keepAlpha: true).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withServer({ configuration, _ in configuration.watermarkFile = file.path }) { server in
            let base = "url=" + server.source("/texture.png") + "&format=png"
            // 120 wide, scale 1/3: the mark at its own 40×20; margin 2% of 90 = 2 px, top-left.
            let ours = try bitmap(try await server.get(base + "&wm=0.6&wm_gravity=top-left&wm_scale=0.3333334"))
            let pillow = try PillowTransformOracle.run("""
                base, mark = images
                mark.putalpha(mark.getchannel("A").point(lambda a: round(a * 0.6)))
                base.alpha_composite(mark, dest=(2, 2))
                emit(base)
                """, [Self.texture, mark])
            #expect(try #require(PixelDifference.maximum(ours, pillow)) <= 2)
            let plain = try await server.get(base)
            let marked = try await server.get(base + "&wm=1")
            #expect(plain.header("ETag") != marked.header("ETag"))
        }
        try await withServer { server in
            let reply = try await server.get("url=" + server.source("/texture.png") + "&wm=1")
            #expect(reply.status == 400 && reply.errorCode == "badParameter")
        }
    }

    /// gravity=smart over HTTP keeps a corner subject (see SmartCropTests for the measure).
    @Test func smartGravityKeepsTheCornerSubject() async throws {
        let picture = try TestImages.bitmap(width: 400, height: 200) { x, y in
            guard x >= 310, x < 390, y >= 10, y < 90 else { return (180, 180, 180, 255) }
            return ((x / 4 + y / 4) % 2 == 0) ? (230, 40, 20, 255) : (250, 220, 30, 255)
        }
        let png = try PNGCoder.encodeBitmap(picture, keepAlpha: false)
        try await withServer { server in
            server.origin.route("/corner.png", .image(png, contentType: "image/png"))
            let base = "url=" + server.source("/corner.png") + "&w=100&h=100&fit=cover&format=png"
            func saturated(_ bitmap: Bitmap) -> Int {
                bitmap.withUnsafeBytes { bytes in stride(from: 0, to: bytes.count, by: 4).filter { bytes[$0] > 200 && bytes[$0 + 2] < 100 }.count }
            }
            let smart = try bitmap(try await server.get(base + "&gravity=smart"))
            let centre = try bitmap(try await server.get(base))
            #expect(saturated(smart) > 1200 && saturated(centre) == 0, "\(saturated(smart)) \(saturated(centre))")
        }
    }
}

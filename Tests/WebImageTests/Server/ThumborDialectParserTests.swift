import Foundation
import Testing
import WebImage
@testable import WebImageServer

/// `--dialect thumbor`'s parser alone: thumbor's grammar, its hash, its filters, into the one
/// request value. The hashes here were made by libthumbor's `CryptoURL` (key `MY_SECURE_KEY`).
@Suite("thumbor dialect: the parser")
struct ThumborDialectParserTests {
    private func dialect(key: String? = "MY_SECURE_KEY", unsafe: Bool? = nil) throws -> ThumborDialect {
        var configuration = ServerConfiguration()
        configuration.thumborKey = key
        configuration.thumborAllowUnsafe = unsafe
        return try ThumborDialect(configuration: configuration)
    }

    private func options(_ path: String) throws -> ImageParameters.Options {
        try dialect(key: nil).request(path: Substring(path), query: "").parameters.options
    }

    private func status(_ path: String, key: String? = "MY_SECURE_KEY", unsafe: Bool? = nil) -> (Int, String)? {
        do {
            _ = try dialect(key: key, unsafe: unsafe).request(path: Substring(path), query: "")
            return nil
        } catch let error as ServiceError {
            return (error.status, error.message)
        } catch {
            return (0, "\(error)")
        }
    }

    @Test func libthumborsHashesAreAcceptedAndAnyChangeIs400() throws {
        let signed = "vOFBg7Wjj0K4ffjHVTZ7ZmTKJvc=/300x200/smart/example.com/a.jpg"
        let parameters = try dialect().request(path: Substring(signed), query: "").parameters
        #expect(parameters.url.absoluteString == "http://example.com/a.jpg")
        #expect(parameters.width == 300 && parameters.height == 200 && parameters.fit == .cover && parameters.smartGravity)
        let filtered = "j3pC5m_S-r1n2WYGg19bagzgK8k=/fit-in/300x200/filters:quality(80):format(webp)/http://example.com/a%20b.jpg"
        let second = try dialect().request(path: Substring(filtered), query: "").parameters
        #expect(second.url.absoluteString == "http://example.com/a%20b.jpg")
        #expect(second.fit == .contain && !second.enlarge && second.quality == 80 && second.format == .webp)
        // The padding percent-encoded, as some clients send it: thumbor unquotes the hash.
        #expect(status("vOFBg7Wjj0K4ffjHVTZ7ZmTKJvc%3D/300x200/smart/example.com/a.jpg") == nil)
        for changed in ["vOFBg7Wjj0K4ffjHVTZ7ZmTKJvd=/300x200/smart/example.com/a.jpg",
                        "vOFBg7Wjj0K4ffjHVTZ7ZmTKJvc=/300x201/smart/example.com/a.jpg",
                        "vOFBg7Wjj0K4ffjHVTZ7ZmTKJvc/300x200/smart/example.com/a.jpg",
                        "vOFBg7Wjj0K4ffjHVTZ7ZmTKJvc=/300x200/smart/example.com/b.jpg"] {
            #expect(status(changed)?.0 == 400, "\(changed)")
        }
        // Signed with another key.
        #expect(status(signed, key: "other")?.0 == 400)
        // No key: signed URLs cannot be checked.
        #expect(status(signed, key: nil)?.0 == 400)
    }

    @Test func unsafeURLsAreServedOnlyWithoutAKeyUnlessAllowed() {
        let path = "unsafe/300x200/example.com/a.jpg"
        #expect(status(path, key: nil) == nil)
        #expect(status(path)?.0 == 400 && status(path)?.1.contains("unsafe") == true)
        #expect(status(path, unsafe: true) == nil)
        #expect(status(path, key: nil, unsafe: false)?.0 == 400)
        // Neither hash nor unsafe: thumbor's 400.
        #expect(status("a.jpg", key: nil)?.0 == 400)
        #expect(status("unsafe/", key: nil)?.0 == 400)
    }

    @Test func theGrammarInThumborsOrder() throws {
        var options = try options("unsafe/10x20:110x220/fit-in/-300x-200/left/top/smart/filters:quality(70)/http://h/a.jpg")
        #expect(options.crop == ImageTransformers.Crop(x: 10, y: 20, width: 100, height: 200))
        #expect(options.fit == .contain && !options.enlarge && options.width == 300 && options.height == 200)
        #expect(options.flipHorizontal && options.flipVertical && options.quality == 70)
        // Mirrored both ways: thumbor aligns before it flips, the service flips before it crops.
        #expect(options.gravity == .bottomRight)
        options = try self.options("unsafe/300x200/right/bottom/h/a.jpg")
        #expect(options.fit == .cover && options.enlarge && options.gravity == .bottomRight && !options.smartGravity)
        options = try self.options("unsafe/x200/h/a.jpg")
        #expect(options.width == nil && options.height == 200 && options.enlarge)
        options = try self.options("unsafe/-0x0/h/a.jpg")
        #expect(options.width == nil && options.height == nil && options.flipHorizontal && !options.flipVertical)
        options = try self.options("unsafe/full-fit-in/300x200/h/a.jpg")
        #expect(options.fit == .cover && options.coversWithoutCrop && options.enlarge)
        options = try self.options("unsafe/adaptive-fit-in/300x200/filters:fill(red)/h/a.jpg")
        #expect(options.fit == .pad && options.adaptsOrientation && options.background == RGBAColor(red: 255, green: 0, blue: 0, alpha: 255))
        options = try self.options("unsafe/adaptive-full-fit-in/300x200/h/a.jpg")
        #expect(options.coversWithoutCrop && options.adaptsOrientation)
        // A part that does not match is the image's: thumbor's expression leaves it there.
        let parameters = try dialect(key: nil).request(path: "unsafe/300x200/bogus/h/a.jpg", query: "").parameters
        #expect(parameters.url.absoluteString == "http://bogus/h/a.jpg")
        // The source keeps its scheme, is decoded once, and its query (encoded) is kept.
        let https = try dialect(key: nil).request(path: "unsafe/https%3A%2F%2Fh%2Fa.jpg%3Fv%3D1", query: "w=1").parameters
        #expect(https.url.absoluteString == "https://h/a.jpg?v=1")
    }

    @Test func rotateTurnsTheBoxTheAlignmentAndTheFlips() throws {
        // thumbor turns after the crop, counter-clockwise; the service turns first, clockwise.
        let options = try options("unsafe/-300x200/left/top/filters:rotate(90)/h/a.jpg")
        #expect(options.rotate == 270 && options.width == 200 && options.height == 300)
        #expect(!options.flipHorizontal && options.flipVertical)
        // top-left, mirrored by the flip: top-right; turned 270° clockwise: top-left.
        #expect(options.gravity == .topLeft)
        #expect(try self.options("unsafe/300x200/filters:rotate(180)/h/a.jpg").rotate == 180)
        #expect(try self.options("unsafe/300x200/filters:rotate(-90)/h/a.jpg").rotate == 90)
        // Not a quarter turn: thumbor does nothing.
        #expect(try self.options("unsafe/300x200/filters:rotate(45)/h/a.jpg").rotate == 0)
    }

    @Test func filtersAsThumborReadsThem() throws {
        let options = try options("unsafe/300x200/filters:quality(150):format(jpg):grayscale():blur(4):background_color(00ff00)"
            + ":no_upscale():focal(10x10:30x50):strip_exif():unknown(1):brightness:strip_icc()/h/a.jpg")
        #expect(options.quality == 100 && options.format == .jpeg && options.grayscale && options.boxWithinSource)
        #expect(options.flattensAlways && options.background == RGBAColor(red: 0, green: 255, blue: 0, alpha: 255))
        #expect(options.focalPoint == ImageParameters.PixelPoint(x: 20, y: 30))
        // blur(4) is a Gaussian of sigma 4 cut at 4 pixels: narrower than sigma 4.
        let sigma = try #require(options.blur)
        #expect(sigma > 2 && sigma < 3)
        // `brightness:strip_icc()` is one unknown name to thumbor (it splits at `):`): skipped.
        // Arguments thumbor's patterns refuse: the filter is skipped, as thumbor skips it.
        let colours = try self.options("unsafe/300x200/filters:brightness(10):contrast(-20):saturation(0.5):rgb(1,-2,3):rgb(1,2)/h/a.jpg")
        let rounded = try self.options("unsafe/300x200/filters:round_corner(12,1,2,300)/h/a.jpg")
        #expect(rounded.cornerRadius == 12 && rounded.cornerColor == RGBAColor(red: 1, green: 2, blue: 255))
        #expect(try self.options("unsafe/300x200/filters:round_corner(12|12,1,2,3)/h/a.jpg").cornerRadius == 12)
        let marked = try self.options("unsafe/300x200/filters:watermark(h/w.png,-10,5p,30,20,none)/h/a.jpg")
        #expect(marked.overlay == ImageParameters.Overlay(url: URL(string: "http://h/w.png")!, x: .pixels(10, fromFarEdge: true),
                                                          y: .percent(5, fromFarEdge: false), transparency: 30, widthPercent: 20))
        let sized = try self.options("unsafe/300x200/filters:proportion(0.5):max_bytes(5000)/h/a.jpg")
        #expect(sized.proportion == 0.5 && sized.maxBytes == 5000)
        let ignored = try self.options("unsafe/300x200/filters:proportion(1.5):max_bytes(-1)/h/a.jpg")
        #expect(ignored.proportion == nil && ignored.maxBytes == nil)
        #expect(colours.colorAdjustments == [.brightness(percent: 10), .contrast(percent: -20), .saturation(factor: 0.5),
                                             .channels(red: 1, green: -2, blue: 3)])
        let skipped = try self.options("unsafe/300x200/filters:quality(high):blur(0):format(tiff)/h/a.jpg")
        #expect(skipped.quality == nil && skipped.blur == nil && skipped.format == .auto)
    }

    @Test func trimAndSharpenReadAsThumborReadsThem() throws {
        typealias Trim = ImageTransformers.Trim
        #expect(try options("unsafe/trim/300x200/h/a.jpg").trim == Trim(reference: .topLeft, tolerance: 0))
        #expect(try options("unsafe/trim:top-left/300x200/h/a.jpg").trim == Trim(reference: .topLeft, tolerance: 0))
        #expect(try options("unsafe/trim:bottom-right:12/300x200/h/a.jpg").trim == Trim(reference: .bottomRight, tolerance: 12))
        // thumbor takes the 5 of `trim:5` for the position, which is then not top-left, and no tolerance.
        #expect(try options("unsafe/trim:5/300x200/h/a.jpg").trim == Trim(reference: .bottomRight, tolerance: 0))
        #expect(try options("unsafe/300x200/h/a.jpg").trim == nil)
        #expect(try options("unsafe/300x200/filters:sharpen(1.5,0.5,true)/h/a.jpg").waveletSharpen
            == ImageTransformers.WaveletSharpen(amount: 1.5, radius: 0.5, luminanceOnly: true))
        #expect(try options("unsafe/300x200/filters:sharpen(2,1,False)/h/a.jpg").waveletSharpen
            == ImageTransformers.WaveletSharpen(amount: 2, radius: 1, luminanceOnly: false))
        // Arguments thumbor's patterns refuse: the filter is skipped.
        #expect(try options("unsafe/300x200/filters:sharpen(2,1,yes)/h/a.jpg").waveletSharpen == nil)
        #expect(try options("unsafe/300x200/filters:sharpen(2,1)/h/a.jpg").waveletSharpen == nil)
    }

    @Test func whatCannotBeHonouredIs400NamingIt() {
        for (path, name) in [("unsafe/300x200/filters:colorize(10,20,30,ff0000)/h/a.jpg", "colorize"),
                             ("unsafe/300x200/filters:round_corner(10|20,255,255,255)/h/a.jpg", "round_corner"),
                             ("unsafe/300x200/filters:round_corner(10,255,255,255,true)/h/a.jpg", "transparent"),
                             ("unsafe/300x200/filters:watermark(w.png,repeat,0,0)/h/a.jpg", "repeat"),
                             ("unsafe/300x200/filters:format(heic)/h/a.jpg", "heic"),
                             ("unsafe/300x200/filters:fill(auto)/h/a.jpg", "fill"),
                             ("unsafe/meta/trim/300x200/h/a.jpg", "trim"),
                             ("unsafe/debug/300x200/h/a.jpg", "debug"),
                             ("unsafe/origx200/h/a.jpg", "orig"),
                             ("unsafe/9000x200/h/a.jpg", "width"),
                             ("unsafe/9999999999x200/h/a.jpg", "width")] {
            let answer = status(path, key: nil)
            #expect(answer?.0 == 400 && answer?.1.contains(name) == true, "\(path): \(String(describing: answer))")
        }
    }

    @Test func hostileURLsAreBoundedAndNeverTrap() {
        #expect(status("unsafe/" + String(repeating: "a", count: 9000), key: nil)?.0 == 400)
        #expect(status("unsafe/filters:" + String(repeating: "quality(1):", count: 100) + "quality(1)/h/a.jpg", key: nil)?.0 == 400)
        // Long runs of what the grammar looks for, and bytes that are not UTF-8 once decoded.
        let hostile = ["unsafe/" + String(repeating: ")", count: 4000) + "/h", "unsafe/%FF%FE/a", "unsafe/http%3A%2F%2F/a",
                       "unsafe/filters:)/a", "%%%/x/y", "unsafe/fit-in/x/a", "unsafe//a", "unsafe/local:%2F%2F%2Fetc%2Fpasswd"]
        for path in hostile {
            if let answer = status(path, key: nil) { #expect((400..<500).contains(answer.0), "\(path)") }
        }
    }
    /// `meta/`'s description of a source, as thumbor 7.8 answered these URLs (PIL engine, 2026-12-04).
    private func meta(_ path: String, width: Int = 640, height: Int = 480) throws -> ThumborMeta.Description {
        let request = try dialect(key: nil).request(path: Substring("unsafe/meta/" + path), query: "")
        guard case .thumborMeta(let meta, _) = request.answer else {
            Issue.record("\(path) is not a meta/ request")
            return ThumborMeta.Description()
        }
        return meta.describe(width: width, height: height)
    }

    @Test func metaDescribesThumborsOperations() throws {
        let cover = try meta("300x200/example.com/a.jpg")
        #expect(cover.operations == [.crop(left: 0, top: 26, right: 640, bottom: 453), .resize(width: 300, height: 200)])
        #expect(cover.target == (300, 200) && cover.final == (300, 200))
        #expect(cover.focalPoints == [.init(x: 320, y: 240, z: 1, height: 1, width: 1, origin: "alignment")])

        let fit = try meta("fit-in/300x200/example.com/a.jpg")
        #expect(fit.operations == [.resize(width: 267, height: 200)])

        let cropped = try meta("10x20:330x260/-100x200/left/top/example.com/a.jpg")
        #expect(cropped.operations == [.crop(left: 10, top: 20, right: 330, bottom: 260), .crop(left: 0, top: 0, right: 120, bottom: 240),
                                       .resize(width: 100, height: 200), .flipHorizontally])
        #expect(cropped.focalPoints.map { [$0.x, $0.y] } == [[0, 0]])

        let original = try meta("example.com/a.jpg")
        #expect(original.operations.isEmpty && original.target == (640, 480))

        let focal = try meta("full-fit-in/300x300/filters:focal(10x10:20x20)/example.com/a.jpg", width: 480, height: 640)
        #expect(focal.operations == [.resize(width: 300, height: 400)])
        #expect(focal.focalPoints == [.init(x: 15, y: 15, z: 100, height: 10, width: 10, origin: "Explicit")])

        // Focal rectangles whose weights cancel out (one given right to left): centred, no trap.
        let cancelled = try meta("300x100/filters:focal(10x10:20x20):focal(20x10:10x20)/example.com/a.jpg")
        #expect(cancelled.operations.first == .crop(left: 0, top: 134, right: 640, bottom: 347))

        // thumbor's `source` size is the engine's at the end: after rotate(90) too.
        let turned = try meta("300x200/filters:rotate(90):format(png)/example.com/a.jpg")
        #expect(turned.target == (300, 200) && turned.final == (200, 300))
    }

    /// `meta/`'s JSON: thumbor's keys and numbers (whole floats without `.0`), `/` written `\/`.
    /// Its keys come in Foundation's unsorted order, which varies between processes, so it is
    /// compared parsed.
    @Test func metaJSONHasThumborsShape() throws {
        let request = try dialect(key: nil).request(path: "unsafe/meta/10x20:330x260/-100x200/left/top/example.com/a.jpg", query: "")
        guard case .thumborMeta(let meta, let image) = request.answer else {
            Issue.record("not a meta/ request")
            return
        }
        let body = meta.json(info: ImageInfo(format: .jpeg, width: 640, height: 480, bytes: 1000), image: image)
        let text = String(decoding: body, as: UTF8.self)
        let expected = #"""
            {"thumbor":{"source":{"url":"example.com\/a.jpg","width":100,"height":200,"frameCount":1},
            "operations":[{"type":"crop","left":10,"top":20,"right":330,"bottom":260},{"type":"crop","left":0,"top":0,"right":120,"bottom":240},
            {"type":"resize","width":100,"height":200},{"type":"flip_horizontally"}],
            "target":{"width":100,"height":200},"focal_points":[{"x":0,"y":0,"z":1,"height":1,"width":1,"origin":"alignment"}]}}
            """#.replacingOccurrences(of: "\n", with: "")
        let parsed = try JSONSerialization.jsonObject(with: body) as? NSDictionary
        #expect(parsed == (try JSONSerialization.jsonObject(with: Data(expected.utf8)) as? NSDictionary), "\(text)")
        #expect(text.utf8.count == expected.utf8.count && text.contains(#""url":"example.com\/a.jpg""#) && !text.contains(".0"), "\(text)")
        // The same bytes in every process: keys sorted (Foundation's own order is not stable across processes).
        #expect(text == #"{"thumbor":{"focal_points":[{"height":1,"origin":"alignment","width":1,"x":0,"y":0,"z":1}],"operations":[{"bottom":260,"left":10,"right":330,"top":20,"type":"crop"},{"bottom":240,"left":0,"right":120,"top":0,"type":"crop"},{"height":200,"type":"resize","width":100},{"type":"flip_horizontally"}],"source":{"frameCount":1,"height":200,"url":"example.com\/a.jpg","width":100},"target":{"height":200,"width":100}}}"#, "\(text)")
    }
}

import Foundation
import Testing
import WebImage
@testable import WebImageServer

/// `--dialect imgproxy`'s parser alone: imgproxy's grammar, its signatures and its settings, into
/// the one request value. No network.
@Suite("imgproxy dialect: the parser")
struct ImgproxyDialectParserTests {
    /// imgproxy's documented signing example (docs/signing_the_url.md): key `secret`, salt `hello`.
    static let documentedKey = "736563726574", documentedSalt = "68656C6C6F"
    static let documentedPath = "rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
    /// The key and salt of imgproxy's `examples/` folder.
    static let exampleKey = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let exampleSalt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
    static let examplePath = "rs:fit:300:300/plain/http://img.example.com/pretty/image.jpg"

    private func dialect(keys: [String] = [], salts: [String] = [], size: Int = 32,
                         _ adjust: (inout ImgproxySettings) -> Void = { _ in }) throws -> ImgproxyDialect {
        var configuration = ServerConfiguration()
        configuration.dialects = [DialectMount(name: .imgproxy)]
        configuration.imgproxy.keys = keys
        configuration.imgproxy.salts = salts
        configuration.imgproxy.signatureSize = size
        adjust(&configuration.imgproxy)
        return try ImgproxyDialect(configuration: configuration)
    }

    private func parameters(_ path: String, _ adjust: (inout ImgproxySettings) -> Void = { _ in }) throws -> ImageParameters {
        try dialect(adjust).request(path: Substring(path), query: "").parameters
    }

    /// The status and message `path` is refused with, `nil` when it is accepted.
    private func refusal(_ path: String, dialect: ImgproxyDialect? = nil) -> (Int, String)? {
        do {
            _ = try (dialect ?? self.dialect()).request(path: Substring(path), query: "")
            return nil
        } catch let error as ServiceError {
            return (error.status, error.message)
        } catch {
            return (0, "\(error)")
        }
    }

    @Test func imgproxysDocumentedSigningExampleVerifies() throws {
        let signed = try dialect(keys: [Self.documentedKey], salts: [Self.documentedSalt])
        let path = "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/" + Self.documentedPath
        let request = try signed.request(path: Substring(path), query: "")
        #expect(request.parameters.url.absoluteString == "http://example.com/images/curiosity.jpg")
        #expect(request.parameters.width == 300 && request.parameters.height == 400 && request.parameters.fit == .cover)
        #expect(request.parameters.smartGravity && request.parameters.format == .png && !request.parameters.enlarge)
        #expect(request.parameters.signature == "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")
        // The examples folder's pair over its path, full and cut to 8 bytes (examples/signature-truncated.mjs).
        let example = try dialect(keys: [Self.exampleKey], salts: [Self.exampleSalt])
        #expect(refusal("m3k5QADfcKPDj-SDI2AIogZbC3FlAXszuwhtWXYqavc/" + Self.examplePath, dialect: example) == nil)
        let truncated = try dialect(keys: [Self.exampleKey], salts: [Self.exampleSalt], size: 8)
        #expect(refusal("m3k5QADfcKM/" + Self.examplePath, dialect: truncated) == nil)
        // A full signature is not a truncated one, nor the other way round.
        #expect(refusal("m3k5QADfcKPDj-SDI2AIogZbC3FlAXszuwhtWXYqavc/" + Self.examplePath, dialect: truncated)?.0 == 403)
        #expect(refusal("m3k5QADfcKM/" + Self.examplePath, dialect: example)?.0 == 403)
    }

    @Test func aWrongSignatureIs403() throws {
        let signed = try dialect(keys: [Self.documentedKey], salts: [Self.documentedSalt])
        let good = "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/" + Self.documentedPath
        let characters = Array(good)
        // Every character of the signature and of the signed path, changed.
        for position in characters.indices where characters[position] != "/" {
            var changed = characters
            changed[position] = changed[position] == "a" ? "b" : "a"
            #expect(refusal(String(changed), dialect: signed)?.0 == 403, "\(String(changed))")
        }
        for path in ["insecure/" + Self.documentedPath, "_/" + Self.documentedPath,
                     "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8=/" + Self.documentedPath,
                     "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/" + Self.documentedPath.replacingOccurrences(of: "300", with: "301")] {
            #expect(refusal(path, dialect: signed)?.0 == 403, "\(path)")
        }
        // Another key.
        let other = try dialect(keys: [Self.exampleKey], salts: [Self.exampleSalt])
        #expect(refusal(good, dialect: other)?.0 == 403)
    }

    @Test func rotatedKeysEachVerify() throws {
        let both = try dialect(keys: [Self.exampleKey, Self.documentedKey], salts: [Self.exampleSalt, Self.documentedSalt])
        #expect(refusal("oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/" + Self.documentedPath, dialect: both) == nil)
        #expect(refusal("m3k5QADfcKPDj-SDI2AIogZbC3FlAXszuwhtWXYqavc/" + Self.examplePath, dialect: both) == nil)
        // A key with another pair's salt is no pair.
        let crossed = try dialect(keys: [Self.exampleKey, Self.documentedKey], salts: [Self.documentedSalt, Self.exampleSalt])
        #expect(refusal("oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/" + Self.documentedPath, dialect: crossed)?.0 == 403)
        // Unequal lists, non-hex, a size outside 1...32: refused at start.
        #expect(throws: ServiceError.self) { try dialect(keys: [Self.exampleKey], salts: []) }
        #expect(throws: ServiceError.self) { try dialect(keys: ["xyz1"], salts: ["00"]) }
        #expect(throws: ServiceError.self) { try dialect(keys: [Self.exampleKey], salts: [Self.exampleSalt], size: 33) }
    }

    @Test func withoutAKeyAnySignatureIsAccepted() throws {
        for signature in ["insecure", "_", "anything", "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8"] {
            #expect(refusal(signature + "/" + Self.documentedPath) == nil, "\(signature)")
        }
        // imgproxy's 403 for a URL whose signature part was left out.
        #expect(refusal(Self.documentedPath)?.0 == 403)
        #expect(refusal("insecure")?.0 == 404)
        #expect(refusal("insecure/")?.0 == 404)
    }

    @Test func plainAndBase64SourcesAndTheirExtensions() throws {
        let plain = try parameters("_/w:100/plain/http://example.com/a%20b.jpg@webp")
        #expect(plain.url.absoluteString == "http://example.com/a%20b.jpg" && plain.format == .webp && plain.width == 100)
        let encoded = try parameters("_/w:100/plain/http%3A%2F%2Fexample.com%2Fimg.png")
        #expect(encoded.url.absoluteString == "http://example.com/img.png")
        // Split or not, padded or not.
        let split = try parameters("_/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.jpg")
        let whole = try parameters("_/aHR0cDovL2V4YW1wbGUuY29tL2ltYWdlcy9jdXJpb3NpdHkuanBn")
        #expect(split.url == whole.url && split.format == .jpeg)
        // No extension: the source's format, whatever Accept says.
        #expect(whole.format == .auto && whole.autoFormats == [] && whole.autoFallback == .auto)
        // A proxy's `%3A` in the options and a merged `http:/`.
        let merged = try parameters("_/rs%3Afill%3A10%3A20/plain/http:/example.com/a.jpg")
        #expect(merged.url.absoluteString == "http://example.com/a.jpg" && merged.width == 10 && merged.fit == .cover)
        for bad in ["_/plain/", "_/w:10/", "_/w:10/plain/http://e.com/a.jpg@png@webp", "_/aGVsbG8.png.jpg", "_/!!!!", "_/aGVsbG8=",
                    "_/plain/ftp://example.com/a.jpg", "_/plain/http://e.com/a%zz.jpg", "_/fill/300/400/ce/0/aGVsbG8"] {
            #expect(refusal(bad)?.0 == 404, "\(bad): \(String(describing: refusal(bad)))")
        }
        // imgproxy's formats this service does not write: 422, as imgproxy for one it cannot save.
        #expect(refusal("_/plain/http://e.com/a.jpg@tiff")?.0 == 422)
        #expect(refusal("_/plain/http://e.com/a.jpg@exe")?.0 == 404)
    }

    @Test func longAndShortNamesMeanTheSame() throws {
        let pairs = [
            ("resize:fill:300:200:1", "rs:fill:300:200:1"), ("size:300:200", "s:300:200"), ("resizing_type:force/w:30/h:20", "rt:force/w:30/h:20"),
            ("width:300/height:200", "w:300/h:200"), ("enlarge:1/w:9", "el:1/w:9"), ("gravity:noea/rs:fill:5:5", "g:noea/rs:fill:5:5"),
            ("rotate:90", "rot:90"), ("flip:1:0", "fl:1:0"), ("background:ff0000", "bg:255:0:0"), ("blur:2", "bl:2"), ("sharpen:1", "sh:1"),
            ("quality:70", "q:70"), ("format:png", "f:png"), ("format:png", "ext:png"), ("cachebuster:x/w:5", "cb:y/w:5"),
            ("zoom:2/w:10", "z:2/w:10"), ("dpr:2/w:10", "w:20"), ("extend:1/rs:fit:50:50", "ex:1/rs:fit:50:50"),
            ("strip_metadata:1", "sm:true"), ("strip_color_profile:1", "scp:t"), ("auto_rotate:1", "ar:1"),
            ("pixelate:0", "pix:0"), ("max_bytes:0", "mb:0"), ("padding:0", "pd:0:0:0:0"),
        ]
        for (long, short) in pairs {
            var first = try parameters("_/\(long)/plain/http://e.com/a.jpg").options
            var second = try parameters("_/\(short)/plain/http://e.com/a.jpg").options
            if long.hasPrefix("dpr") { (first.dpr, second.dpr) = (1, 1) }
            #expect(first == second, "\(long) vs \(short)")
        }
    }

    @Test func resizingTypesMapOntoTheFits() throws {
        func fit(_ options: String) throws -> ImageParameters.Options {
            try parameters("_/\(options)/plain/http://e.com/a.jpg").options
        }
        let fitted = try fit("rs:fit:300:200")
        #expect(fitted.fit == .contain && fitted.width == 300 && fitted.height == 200 && !fitted.enlarge)
        let filled = try fit("rs:fill:300:200")
        #expect(filled.fit == .cover && filled.boxWithinSource)
        #expect(try fit("rs:fill:300:200:1").boxWithinSource == false)
        let down = try fit("rs:fill-down:300:200")
        #expect(down.fit == .cover && !down.boxWithinSource)
        let forced = try fit("rs:force:300:200")
        #expect(forced.fit == .fill && forced.boxScaledWithinSource)
        let auto = try fit("rs:auto:300:200")
        #expect(auto.fitsByOrientation && auto.boxWithinSource)
        // The default is fit; one side from the aspect ratio.
        #expect(try fit("w:300").width == 300 && fit("w:300").height == nil)
        #expect(refusal("_/rs:force:300/plain/http://e.com/a.jpg")?.0 == 400)
        // dpr and zoom multiply the box.
        let scaled = try fit("rs:fit:100:50/dpr:2/z:1.5")
        #expect(scaled.width == 300 && scaled.height == 150)
        // Later options override earlier ones.
        #expect(try fit("w:10/w:20").width == 20)
        #expect(refusal("_/rs:stretch:1:1/plain/http://e.com/a.jpg")?.0 == 404)
    }

    @Test func gravitiesAndPlacement() throws {
        let names: [(String, ImageTransformers.Gravity)] = [("no", .top), ("so", .bottom), ("ea", .right), ("we", .left), ("noea", .topRight),
                                                            ("nowe", .topLeft), ("soea", .bottomRight), ("sowe", .bottomLeft), ("ce", .center)]
        for (name, gravity) in names {
            #expect(try parameters("_/g:\(name)/plain/http://e.com/a.jpg").gravity == gravity, "\(name)")
        }
        #expect(try parameters("_/g:sm/plain/http://e.com/a.jpg").smartGravity)
        #expect(try parameters("_/g:fp:0.25:0.75/plain/http://e.com/a.jpg").gravity == .focus(x: 0.25, y: 0.75))
        #expect(refusal("_/g:fp:1.5:0/plain/http://e.com/a.jpg")?.0 == 404)
        #expect(refusal("_/g:up/plain/http://e.com/a.jpg")?.0 == 404)
        #expect(refusal("_/g:sm:1:1/plain/http://e.com/a.jpg")?.0 == 404)
        // Offsets move the crop in pixels: not honoured, so refused by name.
        #expect(refusal("_/g:no:10:0/plain/http://e.com/a.jpg").map { $0.0 == 400 && $0.1.contains("gravity") } == true)
        let turned = try parameters("_/rot:-90/fl:1:1/plain/http://e.com/a.jpg")
        #expect(turned.rotate == 270 && turned.flipHorizontal && turned.flipVertical)
        #expect(refusal("_/rot:45/plain/http://e.com/a.jpg")?.0 == 404)
        // crop: its own gravity, else gravity's.
        #expect(try parameters("_/c:100:0.5:soea/plain/http://e.com/a.jpg").sizedCrop == .init(width: 100, height: 0.5, gravity: .bottomRight))
        #expect(try parameters("_/g:we/c:100/plain/http://e.com/a.jpg").sizedCrop == .init(width: 100, height: 0, gravity: .left))
        let extended = try parameters("_/rs:fit:50:60/ex:1:so/plain/http://e.com/a.jpg")
        #expect(extended.extendsToBox && extended.gravity == .bottom)
        #expect(refusal("_/rs:fill:50:60/g:no/ex:1:so/plain/http://e.com/a.jpg")?.0 == 400)
    }

    @Test func effectsFormatsAndQualities() throws {
        let effects = try parameters("_/bg:fff/bl:2/sh:0.5/q:55/plain/http://e.com/a.jpg@avif")
        #expect(effects.background == .white && effects.flattensAlways && effects.blur == 2 && effects.sharpen == 0.5)
        #expect(effects.quality == 55 && effects.format == .avif)
        #expect(try parameters("_/fq:avif:40:jpeg:70/plain/http://e.com/a.jpg@avif").quality == 40)
        #expect(try parameters("_/fq:webp:40:jpg:70/plain/http://e.com/a.jpg@jpg").quality == 70)
        #expect(try parameters("_/q:20/fq:avif:40/plain/http://e.com/a.jpg@avif").quality == 20)
        #expect(refusal("_/fq:avif:40:jpeg:70/plain/http://e.com/a.jpg")?.0 == 400)
        #expect(refusal("_/q:101/plain/http://e.com/a.jpg")?.0 == 404)
        #expect(refusal("_/bg:12345/plain/http://e.com/a.jpg")?.0 == 404)
        #expect(refusal("_/bg:1:2/plain/http://e.com/a.jpg")?.0 == 404)
        // Enforced WebP: negotiated, the URL's format otherwise.
        let enforced = try parameters("_/plain/http://e.com/a.jpg@png") { $0.enforceWebP = true }
        #expect(enforced.format == .auto && enforced.autoFormats == [.webp] && enforced.autoFallback == .png)
        #expect(try parameters("_/plain/http://e.com/a.jpg@webp") { $0.enforceWebP = true }.format == .webp)
    }

    @Test func paddingIsCSSLikeAndFollowsDPR() throws {
        #expect(try parameters("_/pd:10/plain/http://e.com/a.jpg").padding == [10, 10, 10, 10])
        #expect(try parameters("_/padding:10:20/plain/http://e.com/a.jpg").padding == [10, 20, 10, 20])
        #expect(try parameters("_/pd:1:2:3/dpr:2/plain/http://e.com/a.jpg").padding == [2, 4, 6, 4])
        #expect(try parameters("_/pd:0/plain/http://e.com/a.jpg").padding == nil)
    }

    @Test func maxBytesIsTheOneRuleBothDialectsShare() throws {
        #expect(try parameters("_/mb:1000/plain/http://e.com/a.jpg").maxBytes == 1000)
        #expect(try parameters("_/max_bytes:0/plain/http://e.com/a.jpg").maxBytes == nil)
    }

    @Test func optionsThisServiceCannotHonourAre400NamingThem() {
        let refused = [ "skp:jpg", "raw:1", "mw:100", "mh:100", "c:100:100:sm", "g:sm/c:10", "ar:0", "sm:0",
                       "kcr:1", "scp:0", "z:2:3/w:10", "z:2", "wm:0.5", "wm:0.5:re:0:0:0.2", "wm:0.5:ce:5:5:0.2", "exar:1", "ph:1", "eth:1",
                       "bl:200", "sh:50"]
        for option in refused {
            let answer = refusal("_/\(option)/plain/http://e.com/a.jpg")
            #expect(answer?.0 == 400, "\(option): \(String(describing: answer))")
            let name = ImgproxyDialectParserTests.fullNames[String(option.prefix { $0 != ":" })] ?? ""
            #expect(answer?.1.contains(name) == true, "\(option): \(String(describing: answer))")
        }
        // imgproxy refuses its security options unless IMGPROXY_ALLOW_SECURITY_OPTIONS: 403.
        #expect(refusal("_/msr:10/plain/http://e.com/a.jpg")?.0 == 403)
        // Unknown options and malformed arguments: imgproxy's 404.
        for bad in ["nope:1", "w:-1", "w:abc", "q:1:2", "fq:avif", "fq:abc:10", "exp:soon", "fn:%%%:1"] {
            #expect(refusal("_/\(bad)/plain/http://e.com/a.jpg")?.0 == 404, "\(bad)")
        }
    }

    @Test func trimReadsAsImgproxyReadsIt() throws {
        let magenta = RGBAColor(red: 255, green: 0, blue: 255)
        typealias Trim = ImageTransformers.Trim
        #expect(try parameters("_/t:10/plain/http://e.com/a.jpg").trim
            == Trim(reference: .topLeft, tolerance: 10, measure: .smoothedChannels(flattenedOn: magenta)))
        #expect(try parameters("_/trim:2.5:fff:1:t/plain/http://e.com/a.jpg").trim
            == Trim(reference: .color(.white), tolerance: 2.5, measure: .smoothedChannels(flattenedOn: magenta),
                    equalHorizontal: true, equalVertical: true))
        #expect(try parameters("_/t:10:00ff00::1/plain/http://e.com/a.jpg").trim
            == Trim(reference: .color(RGBAColor(red: 0, green: 255, blue: 0)), tolerance: 10,
                    measure: .smoothedChannels(flattenedOn: magenta), equalVertical: true))
        #expect(try parameters("_/pix:8/plain/http://e.com/a.jpg").pixelate == 8)
        #expect(try parameters("_/pixelate:1/plain/http://e.com/a.jpg").pixelate == nil)
        // An empty threshold turns a preset's trim off.
        #expect(try parameters("_/t:10/t:/plain/http://e.com/a.jpg").trim == nil)
        #expect(refusal("_/t:10:nothex/plain/http://e.com/a.jpg")?.0 == 404)
        #expect(refusal("_/t:10:fff:1:1:1/plain/http://e.com/a.jpg")?.0 == 404)
    }

    static let fullNames = ["t": "trim", "pd": "padding", "pix": "pixelate", "mb": "max_bytes", "skp": "skip_processing", "raw": "raw",
                            "mw": "min-width", "mh": "min-height", "c": "crop", "g": "crop", "ar": "auto_rotate", "sm": "strip_metadata",
                            "kcr": "keep_copyright", "scp": "strip_color_profile", "z": "zoom", "wm": "watermark", "exar": "exar",
                            "ph": "ph", "eth": "eth", "bl": "blur", "sh": "sharpen"]

    @Test func expiresFilenamesAndAttachments() throws {
        #expect(refusal("_/exp:1000/plain/http://e.com/a.jpg").map { $0.0 == 404 && $0.1.contains("expired") } == true)
        #expect(refusal("_/exp:\(Int(Date().timeIntervalSince1970) + 3600)/plain/http://e.com/a.jpg") == nil)
        #expect(refusal("_/exp:0/plain/http://e.com/a.jpg") == nil)
        func disposition(_ path: String) throws -> String? {
            try dialect().request(path: Substring(path), query: "").extraHeaders.first { $0.name == "Content-Disposition" }?.value
        }
        #expect(try disposition("_/plain/http://e.com/a.jpg") == nil)
        #expect(try disposition("_/fn:cat/plain/http://e.com/a.jpg@png") == "inline; filename=\"cat.png\"")
        #expect(try disposition("_/att:1/plain/http://e.com/dir/photo.jpeg@jpg") == "attachment; filename=\"photo.jpg\"")
        // `filename:BASE64:1`.
        #expect(try disposition("_/fn:ImNhdCI:1/att:1/plain/http://e.com/a.jpg@webp") == "attachment; filename=\"\\\"cat\\\".webp\"")
    }

    @Test func presetsAndOnlyPresets() throws {
        let presets = ["default=q:60", "thumb=rs:fill:100:100/f:webp", "small=w:50", "loop=pr:loop/w:7"]
        let thumb = try parameters("_/pr:thumb/plain/http://e.com/a.jpg") { $0.presets = presets }
        #expect(thumb.width == 100 && thumb.height == 100 && thumb.fit == .cover && thumb.format == .webp && thumb.quality == 60)
        // The URL's options after the preset win.
        #expect(try parameters("_/preset:thumb/w:30/plain/http://e.com/a.jpg") { $0.presets = presets }.width == 30)
        // A preset naming itself is applied once.
        #expect(try parameters("_/pr:loop/plain/http://e.com/a.jpg") { $0.presets = presets }.width == 7)
        #expect(refusal("_/pr:nope/plain/http://e.com/a.jpg", dialect: try dialect { $0.presets = presets })?.0 == 404)
        let only = try dialect { $0.presets = presets; $0.onlyPresets = true }
        let request = try only.request(path: "_/thumb:small/plain/http://e.com/a.jpg", query: "")
        #expect(request.parameters.width == 50 && request.parameters.height == 100)
        #expect(refusal("_/w:10/plain/http://e.com/a.jpg", dialect: only)?.0 == 404)
        // A malformed preset stops the start.
        #expect(throws: ServiceError.self) { try dialect { $0.presets = ["bad=nope:1"] } }
        #expect(throws: ServiceError.self) { try dialect { $0.presets = ["bad"] } }
    }

    @Test func baseURLAndHostileInput() throws {
        let based = try parameters("_/plain/images/a.jpg") { $0.baseURL = "http://cdn.example.com/" }
        #expect(based.url.absoluteString == "http://cdn.example.com/images/a.jpg")
        let kept = try parameters("_/plain/http://cdn.example.com/b.jpg") { $0.baseURL = "http://cdn.example.com/" }
        #expect(kept.url.absoluteString == "http://cdn.example.com/b.jpg")
        // Bounded before anything is parsed.
        #expect(refusal("_/" + String(repeating: "w:1/", count: 3000) + "plain/http://e.com/a.jpg")?.0 == 404)
        #expect(refusal("_/" + String(repeating: "w:1/", count: 300) + "plain/http://e.com/a.jpg")?.0 == 404)
        #expect(refusal("_/w:99999999999999999999999/plain/http://e.com/a.jpg")?.0 == 404)
        #expect(refusal("_/w:9000/plain/http://e.com/a.jpg")?.0 == 400)
        #expect(refusal("_/" + String(repeating: "QUFB", count: 1500))?.0 == 404)
    }

    @Test func settingsAreReadByImgproxysNamesAndTheServicesOwnWin() async throws {
        let environment = [
            "WEBIMAGE_DIALECT": "imgproxy", "IMGPROXY_KEY": "\(Self.exampleKey),\(Self.documentedKey)",
            "IMGPROXY_SALT": "\(Self.exampleSalt),\(Self.documentedSalt)", "IMGPROXY_SIGNATURE_SIZE": "8",
            "IMGPROXY_ALLOWED_SOURCES": "https://cdn.example.com/,s3://photos/", "IMGPROXY_MAX_SRC_RESOLUTION": "12.5",
            "IMGPROXY_MAX_SRC_FILE_SIZE": "1048576", "IMGPROXY_QUALITY": "70", "IMGPROXY_FORMAT_QUALITY": "avif=40,webp=65",
            "IMGPROXY_PRESETS": "thumb=rs:fill:100:100", "IMGPROXY_TTL": "600", "IMGPROXY_ENFORCE_WEBP": "true",
            "IMGPROXY_BASE_URL": "https://cdn.example.com/", "WEBIMAGE_CACHE_CONTROL_MAX_AGE": "60",
        ]
        let configuration = try await ServerConfiguration.resolve(.init(), environment: environment)
        #expect(configuration.imgproxy.keys.count == 2 && configuration.imgproxy.signatureSize == 8)
        #expect(configuration.allowedSourcePrefixes == ["https://cdn.example.com/", "s3://photos/"])
        #expect(configuration.maxSourcePixels == 12_500_000 && configuration.maxSourceBytes == 1_048_576)
        #expect(configuration.qualities[.jpeg] == 70 && configuration.qualities[.avif] == 40 && configuration.qualities[.webp] == 65)
        #expect(configuration.imgproxy.presets == ["thumb=rs:fill:100:100"] && configuration.imgproxy.enforceWebP)
        #expect(configuration.imgproxy.baseURL == "https://cdn.example.com/")
        // WEBIMAGE_CACHE_CONTROL_MAX_AGE wins over IMGPROXY_TTL, and the start-up lines say so.
        #expect(configuration.cacheControlMaxAge == 60)
        #expect(configuration.imgproxy.namesOverridden == ["IMGPROXY_TTL"])
        #expect(configuration.summary.contains("imgproxy-settings: read IMGPROXY_KEY, IMGPROXY_SALT"))
        #expect(configuration.summary.contains("not used, the service's own setting given: IMGPROXY_TTL"))
        // The dialect made from it checks truncated signatures of either pair.
        let dialect = try ImgproxyDialect(configuration: configuration)
        #expect(refusal("m3k5QADfcKM/" + Self.examplePath, dialect: dialect) == nil)
        // Without the dialect, imgproxy's names are not read.
        var without = environment
        without["WEBIMAGE_DIALECT"] = nil
        let plain = try await ServerConfiguration.resolve(.init(), environment: without)
        #expect(plain.imgproxy == ImgproxySettings() && plain.allowedSourcePrefixes.isEmpty)
        // What cannot be honoured stops the start.
        for (name, value) in [("IMGPROXY_AUTO_ROTATE", "false"), ("IMGPROXY_STRIP_METADATA", "0"), ("IMGPROXY_SIGNATURE_SIZE", "0")] {
            await #expect(throws: ServiceError.self, "\(name)") {
                try await ServerConfiguration.resolve(.init(), environment: ["WEBIMAGE_DIALECT": "imgproxy", name: value])
            }
        }
    }

    @Test func sourceRefusalsAnswerAsImgproxy() throws {
        let dialect = try dialect()
        #expect(dialect.translate(.sourceNotAllowed("x")).status == 404)
        #expect(dialect.translate(ServiceError(status: 415, code: "unsupportedSource", message: "x")).status == 422)
        #expect(dialect.translate(ServiceError(status: 413, code: "sourceTooLarge", message: "x")).status == 422)
        #expect(dialect.translate(ServiceError(status: 404, code: "sourceNotFound", message: "x")).status == 404)
    }

    @Test func mutatedURLsAreTypedErrorsNeverTraps() throws {
        let open = try dialect { $0.presets = ["thumb=rs:fill:100:100/f:webp", "loop=pr:loop/w:7"] }
        let keyed = try dialect(keys: [Self.exampleKey], salts: [Self.exampleSalt], size: 8)
        let seeds = ["oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/" + Self.documentedPath, "m3k5QADfcKM/" + Self.examplePath,
                     "_/pr:thumb/rs:auto:300:200:1:1:so/g:fp:0.3:0.6/fq:webp:60/bg:10:20:30/fn:Y2F0:1/att:1/plain/http://e.com/a%20b.jpg@webp",
                     "_/ex:1:nowe/wm:0.5:soea::0.3/rot:-270/fl:t:f/z:1.5/dpr:2/s:10:20/exp:0/cb:1/aHR0cDovL2UuY29tL2EuanBn.png"]
        let alphabet = Array("/:@.%_-=+0123456789abcdefABCDEF xyz\u{0}\u{e9}")
        // A fixed linear congruential generator: the same mutations on every run.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<4000 {
            var characters = Array(seeds[next(seeds.count)])
            for _ in 0...next(4) {
                let position = next(characters.count + 1)
                switch next(3) {
                case 0 where position < characters.count: characters.remove(at: position)
                case 1: characters.insert(alphabet[next(alphabet.count)], at: position)
                default: if position < characters.count { characters[position] = alphabet[next(alphabet.count)] }
                }
            }
            let path = String(characters)
            for parser in [open, keyed] {
                do {
                    let request = try parser.request(path: Substring(path), query: "")
                    _ = request.parameters.renderKey
                } catch is ServiceError {
                    continue
                }
            }
        }
    }
}

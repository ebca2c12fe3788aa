#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
import WebImage
@testable import WebImageServer

/// The parameters of issue #33 as parsed: their values, every 400, and the output key.
@Suite("webimage serve: placement and effect parameters")
struct ServerImageParameterTests {
    private let url = "url=" + "https://images.example/a.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!

    @Test func valuesAreParsed() throws {
        let p = try ImageParameters(query: url + "&w=100&h=50&dpr=2.5&fit=pad&gravity=top-left&crop=1,2,30,40&rotate=270&flip=hv"
            + "&blur=1.5&sharpen=0.3&bg=102030&progressive=1&wm=0.5&wm_gravity=center&wm_scale=0.05&format=jxl")
        #expect(p.width == 250 && p.height == 125 && p.dpr == 2.5 && p.fit == .pad && p.gravity == .topLeft && !p.smartGravity)
        #expect(p.crop == ImageTransformers.Crop(x: 1, y: 2, width: 30, height: 40) && p.rotate == 270)
        #expect(p.flipHorizontal && p.flipVertical && p.blur == 1.5 && p.sharpen == 0.3 && p.progressive && p.format == .jxl)
        #expect(p.background == RGBAColor(red: 0x10, green: 0x20, blue: 0x30) && p.quality == nil)
        #expect(p.watermark == ImageParameters.WatermarkOptions(opacity: 0.5, gravity: .center, scale: 0.05))
        let smart = try ImageParameters(query: url + "&gravity=smart&bg=FFFFFF80")
        #expect(smart.smartGravity && smart.background.alpha == 0x80)
        // focus overrides gravity, smart included.
        let focus = try ImageParameters(query: url + "&gravity=smart&focus=0.25,1")
        #expect(focus.gravity == .focus(x: 0.25, y: 1) && !focus.smartGravity)
        let mark = try ImageParameters(query: url + "&wm=1")
        #expect(mark.watermark == ImageParameters.WatermarkOptions(opacity: 1, gravity: .bottomRight, scale: 0.25))
    }

    @Test(arguments: [
        "fit=stretch", "gravity=middle", "gravity=", "focus=0.5", "focus=1.5,0", "focus=a,b", "focus=0.5,0.5,0.5", "focus=-0,0",
        "dpr=0.5", "dpr=6", "dpr=abc", "dpr=1e0", "w=5000&dpr=2", "crop=1,2,3", "crop=-1,0,5,5", "crop=0,0,0,5", "crop=a,b,c,d",
        "crop=0,0,5,5,5", "rotate=45", "rotate=0", "rotate=-90", "flip=x", "flip=", "blur=0.2", "blur=101", "blur=nan",
        "sharpen=0", "sharpen=11", "bg=12345", "bg=GG0000", "bg=#102030", "progressive=2", "progressive=yes", "format=jpegxl",
        "wm=1.5", "wm=-1", "wm_gravity=center", "wm=1&wm_gravity=smart", "wm=1&wm_scale=0.01", "wm=1&wm_scale=2", "wm_scale=0.5",
        "rotate=90&rotate=180", "blur=1&blur=1", "gravity=top&gravity=top",
    ])
    func badValuesAre400NamingTheParameter(query: String) throws {
        let error = #expect(throws: ServiceError.self) { try ImageParameters(query: url + "&" + query) }
        #expect(error?.status == 400 && error?.code == "badParameter", "\(query)")
        let name = String(query.split(separator: "&").last!.split(separator: "=").first!)
        let named = name == "w" ? "dpr" : name
        #expect(error?.message.contains("'\(named)'") == true, "\(query): \(error?.message ?? "")")
    }

    /// Every parameter that changes the bytes changes the output key (and so the ETag, made
    /// from it): no two of these share one.
    @Test func everyParameterChangesTheRenderKey() throws {
        let variants = ["", "&gravity=top", "&gravity=smart", "&focus=0.2,0.3", "&focus=0.2,0.4", "&dpr=2", "&crop=0,0,10,10",
                        "&crop=0,0,10,11", "&rotate=90", "&rotate=180", "&flip=h", "&flip=v", "&flip=hv", "&blur=1", "&blur=2",
                        "&sharpen=1", "&bg=000000", "&bg=00000080", "&progressive=1", "&wm=0.5", "&wm=0.5&wm_gravity=top",
                        "&wm=0.5&wm_scale=0.5", "&fit=pad", "&q=50"]
        let keys = try variants.map { try ImageParameters(query: url + "&w=100&h=80" + $0).renderKey }
        #expect(Set(keys).count == variants.count, "\(keys)")
        // The keys of requests that use none of the new parameters are as before, but for `q`
        // (now the service's per-format default when absent).
        #expect(keys[0] == "w=100,h=80,fit=contain,enlarge=0,q=-")
        #expect(try ImageParameters(query: url + "&w=100&q=80").renderKey == "w=100,h=-,fit=contain,enlarge=0,q=80")
    }

    @Test func presetsMaySetTheNewOptions() throws {
        let presets = try ImagePresets(["card": "w=300&h=200&fit=pad&bg=000000&gravity=smart&sharpen=1&wm=0.4&format=jxl"])
        let p = try ImageParameters(query: url + "&preset=card", presets: presets)
        #expect(p.fit == .pad && p.smartGravity && p.sharpen == 1 && p.watermark?.opacity == 0.4 && p.format == .jxl)
        let error = #expect(throws: ServiceError.self) { try ImagePresets(["bad": "blur=500"]) }
        #expect(error?.message.contains("'blur'") == true)
    }

    @Test func autoFormatsFollowTheListAndAccept() {
        let all: (ImageFormat) -> Bool = { _ in true }
        let accept = "image/jxl,image/avif,image/webp,*/*"
        #expect(FormatNegotiation.choice(for: .auto, accept: accept, autoFormats: [.avif, .webp], canEncode: all) == .avifOrWebP)
        #expect(FormatNegotiation.choice(for: .auto, accept: accept, autoFormats: [.jxl, .webp], canEncode: all)
            == .init(still: .jxl, animated: .webp))
        #expect(FormatNegotiation.choice(for: .auto, accept: "image/webp", autoFormats: [.jxl, .webp], canEncode: all) == .webp)
        #expect(FormatNegotiation.choice(for: .auto, accept: accept, autoFormats: [], canEncode: all) == .jpegOrPNG)
        #expect(FormatNegotiation.choice(for: .auto, accept: accept, autoFormats: [.jxl], canEncode: { $0 != .jxl }) == .jpegOrPNG)
        #expect(FormatNegotiation.choice(for: .auto, accept: "image/jxl", autoFormats: [.avif, .webp], canEncode: all) == .jpegOrPNG)
        #expect(FormatNegotiation.Choice(still: .jxl, animated: .gif).rawValue == "auto(jxl,gif)")
        #expect(FormatNegotiation.Choice.avifOnly.rawValue == "avifOnly")
        #expect(FormatNegotiation.choice(for: .jxl, accept: nil, autoFormats: [], canEncode: all) == .jxl)
    }

    @Test func qualityAndAutoFormatSettings() async throws {
        #expect(try ServerConfiguration.qualities("jpeg=85, avif=50") == [.jpeg: 85, .webp: 80, .avif: 50, .jxl: 80])
        for bad in ["png=50", "jpeg=0", "jpeg=101", "jpeg", "jpeg=high"] {
            #expect(throws: ServiceError.self, "\(bad)") { try ServerConfiguration.qualities(bad) }
        }
        #expect(try ServerConfiguration.autoFormats("jxl, webp") == [.jxl, .webp])
        #expect(try ServerConfiguration.autoFormats("") == [])
        for bad in ["png", "webp,webp", "heic"] {
            #expect(throws: ServiceError.self, "\(bad)") { try ServerConfiguration.autoFormats(bad) }
        }
        // Flag, then environment, then file; each a comma-separated list.
        var flags = ServerConfiguration.Flags()
        flags.qualities = ["jpeg=70", "webp=60"]
        let fromFlags = try await ServerConfiguration.resolve(flags, environment: ["WEBIMAGE_AUTO_FORMATS": "webp,jxl"])
        #expect(fromFlags.qualities[.jpeg] == 70 && fromFlags.qualities[.webp] == 60 && fromFlags.qualities[.avif] == 60)
        #expect(fromFlags.autoFormats == [.webp, .jxl] && fromFlags.watermarkFile == nil)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-config-\(UUID().uuidString).json")
        try Data(#"{"quality": "avif=40", "auto-formats": ["jxl", "avif"], "watermark": "/nonexistent/mark.png"}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        await #expect(throws: ServiceError.self) {
            _ = try await ServerConfiguration.resolve(ServerConfiguration.Flags(), environment: [ServerConfiguration.configFileVariable: file.path])
        }
        try Data(#"{"quality": "avif=40", "auto-formats": ["jxl", "avif"]}"#.utf8).write(to: file)
        let fromFile = try await ServerConfiguration.resolve(ServerConfiguration.Flags(),
                                                             environment: [ServerConfiguration.configFileVariable: file.path,
                                                                           "WEBIMAGE_QUALITY": "jxl=90"])
        // A layer's list replaces the layers below it as a whole (the environment's over the file's).
        #expect(fromFile.qualities[.jxl] == 90 && fromFile.qualities[.avif] == 60 && fromFile.autoFormats == [.jxl, .avif])
        #expect(fromFile.summary.contains("auto-formats: jxl,avif") && fromFile.summary.contains("quality: avif=60,jpeg=80,jxl=90,webp=80"))
        var bad = ServerConfiguration.Flags()
        bad.autoFormats = "gif"
        await #expect(throws: ServiceError.self) { _ = try await ServerConfiguration.resolve(bad, environment: [:]) }
    }
}

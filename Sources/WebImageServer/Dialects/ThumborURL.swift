/// One thumbor URL's path after its hash, split as thumbor's own expression splits it
/// (`libthumbor.url.Url.regex`): each part optional, in this order, each ending at a `/`, and
/// the rest the image. Matched part by part from the left, each part against one segment (the
/// filters against the text up to the first `)/`), so the work is linear in the path's length.
struct ThumborURL: Sendable, Hashable {
    /// `trim[:top-left|:bottom-right][:TOLERANCE]`.
    struct Trim: Sendable, Hashable {
        var bottomRight: Bool
        var tolerance: Int
    }
    /// `AxB:CxD`: the source's rectangle from (A, B) to (C, D), in its pixels.
    struct Crop: Sendable, Hashable {
        var left: Int, top: Int, right: Int, bottom: Int
    }
    /// One side of `WxH`: absent or `0` (from the aspect ratio), a number, or `orig`.
    enum Side: Sendable, Hashable {
        case proportional
        case pixels(Int)
        case original
    }

    var debug = false
    var meta = false
    var trim: Trim?
    var crop: Crop?
    var adaptive = false
    var full = false
    var fitIn = false
    var width = Side.proportional
    var height = Side.proportional
    var flipHorizontal = false
    var flipVertical = false
    /// `left`, `center` or `right`.
    var horizontalAlign = "center"
    /// `top`, `middle` or `bottom`.
    var verticalAlign = "middle"
    var smart = false
    /// The text between `filters:` and the `/` after the first `)`, as sent.
    var filters: Substring = ""
    /// The rest: the source, as sent (still percent-encoded).
    var image: Substring = ""

    /// The longest number a size or crop coordinate is read from: beyond it, no image.
    static let maxDigits = 9

    /// Splits `path`.
    /// - Throws: ``ServiceError`` 400 when no image is left, or a number is too long.
    init(parsing path: Substring) throws {
        var rest = path
        /// The segment before the next `/`, if there is one; the image needs at least one
        /// character after it, or thumbor's expression would leave the part for the image.
        func segment() -> Substring? {
            guard let slash = rest.firstIndex(of: "/"), rest.index(after: slash) < rest.endIndex else { return nil }
            return rest[..<slash]
        }
        func take(_ part: Substring) { rest = rest[rest.index(after: part.endIndex)...] }

        if let part = segment(), part == "debug" { debug = true; take(part) }
        if let part = segment(), part == "meta" { meta = true; take(part) }
        if let part = segment(), let trim = try Self.trim(part) { self.trim = trim; take(part) }
        if let part = segment(), let crop = try Self.crop(part) { self.crop = crop; take(part) }
        if let part = segment(), let fit = Self.fitIn(part) { (adaptive, full, fitIn) = (fit.adaptive, fit.full, true); take(part) }
        if let part = segment(), let size = try Self.dimensions(part) {
            (flipHorizontal, width, flipVertical, height) = size
            take(part)
        }
        if let part = segment(), ["left", "right", "center"].contains(part) { horizontalAlign = String(part); take(part) }
        if let part = segment(), ["top", "bottom", "middle"].contains(part) { verticalAlign = String(part); take(part) }
        if let part = segment(), part == "smart" { smart = true; take(part) }
        if rest.hasPrefix("filters:") {
            // `filters:(.+?\))/`: the shortest text with at least one character that ends in `)/`.
            let body = rest.dropFirst("filters:".count)
            if let close = Self.firstCloseSlash(in: body) {
                let imageStart = body.index(close, offsetBy: 2)
                if imageStart < body.endIndex {
                    filters = body[...close]
                    rest = body[imageStart...]
                }
            }
        }
        guard !rest.isEmpty else { throw ServiceError.badParameter("no original image was specified in the given URL") }
        image = rest
    }

    /// The index of the `)` of the first `)/` after the first character (`.+?\)/`).
    private static func firstCloseSlash(in text: Substring) -> Substring.Index? {
        guard !text.isEmpty else { return nil }
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            if text[index] == ")" {
                let next = text.index(after: index)
                if next < text.endIndex, text[next] == "/" { return index }
            }
            index = text.index(after: index)
        }
        return nil
    }

    /// `trim`, `trim:top-left`, `trim:bottom-right:10`, `trim:5` (thumbor's bottom-right, tolerance 0).
    private static func trim(_ part: Substring) throws -> Trim? {
        guard part.hasPrefix("trim") else { return nil }
        var fields = part.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.removeFirst() == "trim" else { return nil }
        var trim = Trim(bottomRight: false, tolerance: 0)
        var named = false
        if let first = fields.first, first == "top-left" || first == "bottom-right" {
            trim.bottomRight = first == "bottom-right"
            named = true
            fields.removeFirst()
        }
        if let number = fields.first {
            guard let value = try Self.number(number, name: "trim tolerance") else { return nil }
            fields.removeFirst()
            // thumbor reads `trim:N` as the position `N` (not `top-left`, so the bottom-right
            // corner) and no tolerance.
            if named { trim.tolerance = value } else { trim.bottomRight = true }
        }
        return fields.isEmpty ? trim : nil
    }

    /// `AxB:CxD`.
    private static func crop(_ part: Substring) throws -> Crop? {
        let corners = part.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        let first = corners[0].split(separator: "x", omittingEmptySubsequences: false)
        let second = corners[1].split(separator: "x", omittingEmptySubsequences: false)
        guard first.count == 2, second.count == 2,
              let left = try number(first[0], name: "crop"), let top = try number(first[1], name: "crop"),
              let right = try number(second[0], name: "crop"), let bottom = try number(second[1], name: "crop") else { return nil }
        return Crop(left: left, top: top, right: right, bottom: bottom)
    }

    /// `fit-in`, `full-fit-in`, `adaptive-fit-in`, `adaptive-full-fit-in`.
    private static func fitIn(_ part: Substring) -> (adaptive: Bool, full: Bool)? {
        switch part {
        case "fit-in": (false, false)
        case "full-fit-in": (false, true)
        case "adaptive-fit-in": (true, false)
        case "adaptive-full-fit-in": (true, true)
        default: nil
        }
    }

    /// `[-][W|orig]x[-][H|orig]`, each side optional.
    private static func dimensions(_ part: Substring) throws -> (Bool, Side, Bool, Side)? {
        let sides = part.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard sides.count == 2 else { return nil }
        func side(_ text: Substring, name: String) throws -> (Bool, Side)? {
            let flipped = text.hasPrefix("-")
            let value = flipped ? text.dropFirst() : text
            if value.isEmpty { return (flipped, .proportional) }
            if value == "orig" { return (flipped, .original) }
            guard let pixels = try number(value, name: name) else { return nil }
            return (flipped, pixels == 0 ? .proportional : .pixels(pixels))
        }
        guard let width = try side(sides[0], name: "width"), let height = try side(sides[1], name: "height") else { return nil }
        return (width.0, width.1, height.0, height.1)
    }

    /// Decimal digits only (`\d+`), `nil` for anything else; more than ``maxDigits`` is a 400
    /// (thumbor would try to make the image).
    private static func number(_ text: Substring, name: String) throws -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        guard text.utf8.count <= maxDigits else { throw ServiceError.badParameter("thumbor \(name) '\(text.prefix(32))' is too large") }
        return Int(text)
    }
}

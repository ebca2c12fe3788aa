import WebImage

/// The parameters issue #33 added to `GET /image`: placement (`gravity`, `focus`, `dpr`, `crop`,
/// `rotate`, `flip`), effects (`blur`, `sharpen`, `bg`, `progressive`) and the watermark
/// (`wm`, `wm_gravity`, `wm_scale`). Each value is checked here, 400 `badParameter` naming it.
extension ImageParameters.Options {
    /// `gravity`, `focus`, `dpr` (applied to `w` and `h`), `crop`, `rotate`, `flip`.
    mutating func parseGeometry(_ values: [String: String]) throws {
        if let text = values["gravity"] {
            if text == "smart" {
                smartGravity = true
            } else {
                guard let gravity = ImageTransformers.Gravity(name: text) else {
                    throw ServiceError.badParameter("'gravity' must be center, top, bottom, left, right, top-left, top-right, "
                        + "bottom-left, bottom-right or smart")
                }
                self.gravity = gravity
            }
        }
        if let text = values["focus"] {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw ServiceError.badParameter("'focus' must be X,Y, each in 0...1") }
            let x = try ImageParameters.decimal(String(parts[0]), name: "focus", in: 0...1)
            let y = try ImageParameters.decimal(String(parts[1]), name: "focus", in: 0...1)
            gravity = .focus(x: x, y: y)
            smartGravity = false
        }
        if let text = values["dpr"] {
            dpr = try ImageParameters.decimal(text, name: "dpr", in: 1...5)
            func scaled(_ side: Int?) throws -> Int? {
                guard let side else { return nil }
                let value = Int((Double(side) * dpr).rounded())
                guard value <= ImageParameters.maxSide else {
                    throw ServiceError.badParameter("'dpr' makes a side of \(value) pixels, over \(ImageParameters.maxSide)")
                }
                return value
            }
            width = try scaled(width)
            height = try scaled(height)
        }
        if let text = values["crop"] {
            let numbers = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard numbers.count == 4, let x = numbers[0], let y = numbers[1], let w = numbers[2], let h = numbers[3],
                  x >= 0, y >= 0, w >= 1, h >= 1, x <= Int(Int32.max), y <= Int(Int32.max), w <= Int(Int32.max), h <= Int(Int32.max) else {
                throw ServiceError.badParameter("'crop' must be X,Y,W,H: integers, X and Y at least 0, W and H at least 1")
            }
            crop = ImageTransformers.Crop(x: x, y: y, width: w, height: h)
        }
        if let text = values["rotate"] {
            guard let angle = Int(text), [90, 180, 270].contains(angle) else {
                throw ServiceError.badParameter("'rotate' must be 90, 180 or 270")
            }
            rotate = angle
        }
        if let text = values["flip"] {
            switch text {
            case "h": flipHorizontal = true
            case "v": flipVertical = true
            case "hv", "vh": (flipHorizontal, flipVertical) = (true, true)
            default: throw ServiceError.badParameter("'flip' must be h, v or hv")
            }
        }
    }

    /// `blur`, `sharpen`, `bg`, `progressive`, `wm`, `wm_gravity`, `wm_scale`.
    mutating func parseEffects(_ values: [String: String]) throws {
        if let text = values["blur"] { blur = try ImageParameters.decimal(text, name: "blur", in: 0.3...100) }
        if let text = values["sharpen"] { sharpen = try ImageParameters.decimal(text, name: "sharpen", in: 0.3...10) }
        if let text = values["bg"] {
            guard let color = Self.color(hex: text) else { throw ServiceError.badParameter("'bg' must be RRGGBB or RRGGBBAA in hex") }
            background = color
        }
        switch values["progressive"] {
        case nil, "0": progressive = false
        case "1": progressive = true
        default: throw ServiceError.badParameter("'progressive' must be 0 or 1")
        }
        var mark: ImageParameters.WatermarkOptions?
        if let text = values["wm"] {
            mark = .init(opacity: try ImageParameters.decimal(text, name: "wm", in: 0...1), gravity: .bottomRight, scale: 0.25)
        }
        if let text = values["wm_gravity"] {
            guard mark != nil else { throw ServiceError.badParameter("'wm_gravity' needs 'wm'") }
            guard let gravity = ImageTransformers.Gravity(name: text) else {
                throw ServiceError.badParameter("'wm_gravity' must be center, top, bottom, left, right, top-left, top-right, "
                    + "bottom-left or bottom-right")
            }
            mark?.gravity = gravity
        }
        if let text = values["wm_scale"] {
            guard mark != nil else { throw ServiceError.badParameter("'wm_scale' needs 'wm'") }
            mark?.scale = try ImageParameters.decimal(text, name: "wm_scale", in: 0.05...1)
        }
        watermark = mark
    }

    /// `RRGGBB` or `RRGGBBAA`, hex digits either case.
    static func color(hex text: String) -> RGBAColor? {
        guard text.utf8.count == 6 || text.utf8.count == 8, let channels = Hex.bytes(text) else { return nil }
        return RGBAColor(red: channels[0], green: channels[1], blue: channels[2], alpha: channels.count == 4 ? channels[3] : 255)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WebImage

/// thumbor's `meta/` answer: the JSON thumbor's `JSONEngine` writes instead of the image, the
/// operations its transformer would run on the source (crops, resizes, flips), the size they
/// end at and the focal points it used. Made from the source's header (as `/info` reads it),
/// without a decode.
///
/// The arithmetic is thumbor 7.8's `Transformer` step for step (its rounding included), not the
/// service's render plan: a client reading `meta/` expects thumbor's numbers. Two quirks are
/// kept because clients see them: `source.width`/`height` is the size after every step (thumbor
/// reads it from the engine at the end), and `url` is the image part as the URL spells it.
struct ThumborMeta: Sendable, Hashable {
    /// The parsed URL.
    var url: ThumborURL
    /// The filters that change the geometry thumbor describes.
    var filters: ThumborFilters

    /// One operation of thumbor's list.
    enum Operation: Sendable, Hashable, Encodable {
        case crop(left: Int, top: Int, right: Int, bottom: Int)
        /// thumbor's sizes are floats where Python computed them so (`proportion()`'s).
        case resize(width: Double, height: Double)
        case flipHorizontally
        case flipVertically

        private enum Key: String, CodingKey { case type, left, top, right, bottom, width, height }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            switch self {
            case let .crop(left, top, right, bottom):
                try container.encode("crop", forKey: .type)
                try container.encode(left, forKey: .left)
                try container.encode(top, forKey: .top)
                try container.encode(right, forKey: .right)
                try container.encode(bottom, forKey: .bottom)
            case let .resize(width, height):
                try container.encode("resize", forKey: .type)
                try container.encode(width, forKey: .width)
                try container.encode(height, forKey: .height)
            case .flipHorizontally: try container.encode("flip_horizontally", forKey: .type)
            case .flipVertically: try container.encode("flip_vertically", forKey: .type)
            }
        }
    }

    /// A focal point as thumbor's `FocalPoint.to_dict()` writes it.
    struct FocalPoint: Sendable, Hashable, Encodable {
        var x: Int, y: Int
        /// The weight: the rectangle's area for an explicit one, 1 for the alignment's.
        var z: Int
        var height: Int, width: Int
        /// `Explicit` (a `focal` filter) or `alignment`.
        var origin: String
    }

    /// What thumbor describes for a source of `width` × `height` (oriented) with `frames` frames.
    struct Description: Sendable {
        var operations: [Operation] = []
        var focalPoints: [FocalPoint] = []
        /// The size the operations end at (thumbor's `target`).
        var target: (width: Double, height: Double) = (0, 0)
        /// The size after the filters too (thumbor's `source`, see the type's note).
        var final: (width: Int, height: Int) = (0, 0)
    }

    /// thumbor's transformer on a `width` × `height` source.
    func describe(width sourceWidth: Int, height sourceHeight: Int) -> Description {
        var description = Description()
        var size = (width: Double(sourceWidth), height: Double(sourceHeight))
        func pixels(_ side: ThumborURL.Side) -> Double {
            if case .pixels(let value) = side { return Double(value) }
            return 0
        }
        var requested = (width: pixels(url.width), height: pixels(url.height))
        if filters.noUpscale {
            requested = (min(requested.width, size.width), min(requested.height, size.height))
        }

        // manual_crop: the rectangle clamped to the image; an empty one is dropped.
        var crop: ThumborURL.Crop?
        if var box = url.crop {
            box.left = min(max(box.left, 0), sourceWidth)
            box.top = min(max(box.top, 0), sourceHeight)
            box.right = min(max(box.right, 0), sourceWidth)
            box.bottom = min(max(box.bottom, 0), sourceHeight)
            if box.left < box.right, box.top < box.bottom {
                crop = box
                description.operations.append(.crop(left: box.left, top: box.top, right: box.right, bottom: box.bottom))
                size = (Double(box.right - box.left), Double(box.bottom - box.top))
            }
        }

        // _calculate_target_dimensions: a missing side from the other, rounded half to even.
        var target = size
        if requested.width != 0 || requested.height != 0 {
            target.width = requested.width != 0 ? requested.width : Self.round(requested.height * size.width / size.height)
            target.height = requested.height != 0 ? requested.height : Self.round(requested.width * size.height / size.width)
        }

        // adjust_focal_points: explicit points inside the crop, moved with it; else the alignment's.
        for box in filters.focalBoxes {
            let width = box.right - box.left, height = box.bottom - box.top
            var point = FocalPoint(x: box.left + Self.floorHalf(width), y: box.top + Self.floorHalf(height),
                                   z: width * height, height: height, width: width, origin: "Explicit")
            if let crop {
                guard point.x >= crop.left, point.x <= crop.right, point.y >= crop.top, point.y <= crop.bottom else { continue }
                point.x -= crop.left
                point.y -= crop.top
            }
            description.focalPoints.append(point)
        }
        if description.focalPoints.isEmpty {
            let fraction: [String: Double] = ["left": 0, "center": 0.5, "right": 1, "top": 0, "middle": 0.5, "bottom": 1]
            description.focalPoints = [FocalPoint(x: Int(size.width * (fraction[url.horizontalAlign] ?? 0.5)),
                                                  y: Int(size.height * (fraction[url.verticalAlign] ?? 0.5)),
                                                  z: 1, height: 1, width: 1, origin: "alignment")]
        }

        if url.fitIn {
            // fit_in_resize
            if url.adaptive, (size.width < size.height && target.width > target.height) || (size.width > size.height && target.width < target.height) {
                swap(&requested.width, &requested.height)
                swap(&target.width, &target.height)
            }
            let sign = url.full ? -1.0 : 1.0
            if !(sign == 1 && target.width >= size.width && target.height >= size.height), target.width > 0, target.height > 0 {
                let resized: (width: Double, height: Double)
                if size.width / target.width * sign >= size.height / target.height * sign {
                    resized = (target.width, Self.round(size.height * target.width / size.width + 1e-5))
                } else {
                    resized = (Self.round(size.width * target.height / size.height + 1e-5), target.height)
                }
                requested = (max(requested.width, resized.width).rounded(.towardZero), max(requested.height, resized.height).rounded(.towardZero))
                description.operations.append(.resize(width: resized.width, height: resized.height))
                size = resized
            }
        } else {
            if !filters.stretch, let cropped = autoCrop(size: size, target: target, focalPoints: description.focalPoints) {
                description.operations.append(.crop(left: cropped.left, top: cropped.top, right: cropped.right, bottom: cropped.bottom))
                size = (Double(cropped.right - cropped.left), Double(cropped.bottom - cropped.top))
            }
            if target.width != size.width || target.height != size.height {
                let resized = (width: target.width == 0 ? 1 : target.width, height: target.height == 0 ? 1 : target.height)
                description.operations.append(.resize(width: resized.width, height: resized.height))
                size = resized
            }
        }
        if url.flipHorizontal { description.operations.append(.flipHorizontally) }
        if url.flipVertical { description.operations.append(.flipVertically) }

        // The filters after the transform: upscale's resize, fill's canvas, rotate's turn (their
        // resizes reach the image, not thumbor's list of operations).
        var final = (width: Int(size.width), height: Int(size.height))
        if filters.upscale, final.width < Int(requested.width), final.height < Int(requested.height) {
            let (w, h) = (Double(final.width), Double(final.height))
            final = w / requested.width >= h / requested.height
                ? (Int(requested.width), Int(h * requested.width / w)) : (Int(w * requested.height / h), Int(requested.height))
        }
        if let factor = filters.proportion, Double(final.width) * factor >= 1, Double(final.height) * factor >= 1 {
            // Its resize reaches the image, not thumbor's list of operations.
            final = (Int(Double(final.width) * factor), Int(Double(final.height) * factor))
        }
        if url.fitIn, filters.fill != nil {
            final = (requested.width != 0 ? Int(requested.width) : final.width, requested.height != 0 ? Int(requested.height) : final.height)
        }
        if filters.rotate == 90 || filters.rotate == 270 { final = (final.height, final.width) }
        description.final = final
        // JSONEngine.get_target_dimensions: the last crop's or resize's size, else the image's at the end.
        description.target = (Double(final.width), Double(final.height))
        for operation in description.operations {
            switch operation {
            case let .crop(left, top, right, bottom): description.target = (Double(right - left), Double(bottom - top))
            case let .resize(width, height): description.target = (width, height)
            default: break
            }
        }

        return description
    }

    /// auto_crop: the window of the target's aspect ratio around the focal points' centre of
    /// mass; `nil` when the ratios agree to two decimals.
    private func autoCrop(size: (width: Double, height: Double), target: (width: Double, height: Double),
                          focalPoints: [FocalPoint]) -> ThumborURL.Crop? {
        let targetWidth = target.width == 0 ? 1 : target.width, targetHeight = target.height == 0 ? 1 : target.height
        guard Self.round(size.width / size.height, places: 2) != Self.round(targetWidth / targetHeight, places: 2) else { return nil }
        var weight = 0.0, sumX = 0.0, sumY = 0.0
        for point in focalPoints {
            weight += Double(point.z)
            sumX += Double(point.x) * Double(point.z)
            sumY += Double(point.y) * Double(point.z)
        }
        // Rectangles given right to left weigh less than nothing: weights that cancel out (thumbor
        // then fails with a division by zero) centre the window instead.
        let focus = weight != 0 && (sumX / weight).isFinite && (sumY / weight).isFinite
            ? (x: (sumX / weight).rounded(.down), y: (sumY / weight).rounded(.down)) : (x: size.width / 2, y: size.height / 2)
        let window: (width: Double, height: Double) = target.width / size.width > target.height / size.height
            ? (size.width, Self.round(size.width * target.height / targetWidth))
            : (Self.round((target.width * size.height / targetHeight).rounded(.up)), size.height)
        let left = Self.round(min(max(focus.x - window.width / 2, 0), size.width - window.width))
        let top = Self.round(min(max(focus.y - window.height / 2, 0), size.height - window.height))
        return ThumborURL.Crop(left: Int(left), top: Int(top), right: Int(min(left + window.width, size.width)),
                               bottom: Int(min(top + window.height, size.height)))
    }

    /// The JSON thumbor answers for a source whose header says `info`; `image` is the URL's image
    /// part as sent.
    func json(info: ImageInfo, image: Substring) -> Data {
        let turned = info.orientation.swapsDimensions
        let (width, height) = turned ? (info.height, info.width) : (info.width, info.height)
        let description = describe(width: width, height: height)
        let body = Body(thumbor: .init(source: .init(url: String(image), width: description.final.width, height: description.final.height,
                                                     frameCount: info.frames),
                                       operations: description.operations,
                                       target: .init(width: description.target.width, height: description.target.height),
                                       focal_points: description.focalPoints))
        // Keys sorted: Foundation's own order changes from one process to the next, and a fleet
        // should answer one URL with the same bytes. (thumbor writes them in its dicts' order;
        // clients read JSON, not its order.)
        return JSONWriter.data(body, sortingKeys: true) ?? Data("{}".utf8)
    }

    private struct Body: Encodable {
        struct Thumbor: Encodable {
            struct Source: Encodable { var url: String, width: Int, height: Int, frameCount: Int }
            struct Size: Encodable { var width: Double, height: Double }
            var source: Source
            var operations: [Operation]
            var target: Size
            var focal_points: [FocalPoint]
        }
        var thumbor: Thumbor
    }

    /// Python's `round(x)`: to the nearest, halves to even.
    private static func round(_ value: Double) -> Double { value.rounded(.toNearestOrEven) }

    /// Python's `round(x, places)`.
    private static func round(_ value: Double, places: Int) -> Double {
        let scale = places == 2 ? 100.0 : 1.0
        return (value * scale).rounded(.toNearestOrEven) / scale
    }

    /// Python's `n // 2` (towards minus infinity).
    private static func floorHalf(_ value: Int) -> Int { value >= 0 ? value / 2 : (value - 1) / 2 }
}

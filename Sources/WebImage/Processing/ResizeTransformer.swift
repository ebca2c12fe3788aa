extension ImageTransformers {
    /// Resizes every frame to a target size in pixels with the ``Resampler``.
    ///
    /// Sizes are computed from the first frame (all frames of an animation share the canvas size).
    /// Without ``allowUpscaling`` no side of the result is larger than the image's:
    /// - ``Mode/fit``: an image already inside the target is returned unchanged;
    /// - ``Mode/fill``: when the image is smaller than the target, the largest centered region with the
    ///   target's aspect ratio is cropped out at its own size (a square thumbnail of a small image is
    ///   still square, just smaller);
    /// - ``Mode/exact``: each side is clamped to the image's.
    public struct Resize: ImageTransformer, Hashable {
        public var hashableIdentifier: any Hashable & Sendable { self }

        /// How the image is fitted into the target size.
        public enum Mode: String, Sendable, Hashable, CaseIterable {
            /// Scale keeping the aspect ratio so the whole image fits inside the target (one side may
            /// be shorter than the target's).
            case fit
            /// Scale keeping the aspect ratio so the image covers the target, then crop the middle:
            /// the result is exactly the target size.
            case fill
            /// Stretch to exactly the target size, ignoring the aspect ratio.
            case exact
        }

        /// Target width in pixels.
        public var width: Int
        /// Target height in pixels.
        public var height: Int
        /// How the image is fitted into the target.
        public var mode: Mode
        /// The resampling kernel.
        public var filter: ResamplingFilter
        /// Whether images smaller than the target are enlarged.
        public var allowUpscaling: Bool
        /// Which part ``Mode/fill`` keeps when it crops (the middle by default; a focal point
        /// centres the crop on it as far as the edges allow). The other modes do not crop.
        public var gravity: Gravity = .center
        /// Whether a large resample splits its rows over two threads. A caller that already runs
        /// one resize per core (a server rendering many requests) turns it off: the split only
        /// adds thread hand-offs there.
        package var resamplesOnTwoThreads = true
        /// Ends the resize at its next band of rows or frame (a server's render past its deadline).
        /// Not part of equality: it changes whether, not which, pixels are made.
        package var stop = StopFlag()

        /// Creates a resize to `width` × `height` pixels.
        public init(width: Int, height: Int, mode: Mode = .fit, filter: ResamplingFilter = .lanczos3,
                    allowUpscaling: Bool = false) {
            self.width = width
            self.height = height
            self.mode = mode
            self.filter = filter
            self.allowUpscaling = allowUpscaling
        }

        /// Creates a resize to `width` × `height` pixels whose ``Mode/fill`` crop keeps the part
        /// `gravity` names.
        public init(width: Int, height: Int, mode: Mode = .fit, filter: ResamplingFilter = .lanczos3,
                    allowUpscaling: Bool = false, gravity: Gravity) {
            self.init(width: width, height: height, mode: mode, filter: filter, allowUpscaling: allowUpscaling)
            self.gravity = gravity
        }

        /// Equal when they make the same pixels: how the work is split over threads is not part of it.
        public static func == (lhs: Resize, rhs: Resize) -> Bool {
            (lhs.width, lhs.height, lhs.mode, lhs.filter, lhs.allowUpscaling)
                == (rhs.width, rhs.height, rhs.mode, rhs.filter, rhs.allowUpscaling) && lhs.gravity == rhs.gravity
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(width)
            hasher.combine(height)
            hasher.combine(mode)
            hasher.combine(filter)
            hasher.combine(allowUpscaling)
            hasher.combine(gravity)
        }

        /// `"resize(WxH,mode,filter)"`, with `",upscale"` before the parenthesis closes when
        /// ``allowUpscaling`` is set, and `",GRAVITY"` for a ``Mode/fill`` placed other than in the
        /// middle: `"resize(200x100,fill,lanczos3)"`, `"resize(200x100,fill,lanczos3,top-left)"`.
        public var identifier: String {
            let placement = mode == .fill && gravity != .center ? "," + gravity.name : ""
            return "resize(\(width)x\(height),\(mode.rawValue),\(filter.rawValue)\(allowUpscaling ? ",upscale" : "")\(placement))"
        }

        /// Resizes every frame; durations are kept.
        /// - Throws: ``WebImageError/corruptData(_:)`` for a target side that is not positive,
        ///   ``WebImageError/tooLarge(_:)`` for a result over 100 megapixels.
        public func transform(_ image: DecodedImage) throws -> DecodedImage {
            let plan = try self.plan(width: image.width, height: image.height)
            if plan.crop == nil, plan.width == image.width, plan.height == image.height { return image }
            try TransformSupport.checkSize(width: plan.width, height: plan.height, identifier)
            let region = plan.crop.map { PixelRegion(x: $0.x, y: $0.y, width: $0.width, height: $0.height) }
            return try image.mappingFrames { bitmap in
                // The crop is read in place by the resample, not copied out first.
                try Resampler.resize(bitmap, region: region, width: plan.width, height: plan.height, filter: filter,
                                     twoThreadsFrom: resamplesOnTwoThreads ? Resampler.parallelWork : .max, stop: stop)
            }
        }

        /// What to do with a `sourceWidth` × `sourceHeight` image: an optional crop (by ``gravity``) of the
        /// source, then a resample to `width` × `height`.
        func plan(width sourceWidth: Int, height sourceHeight: Int) throws
            -> (crop: (x: Int, y: Int, width: Int, height: Int)?, width: Int, height: Int) {
            guard width > 0, height > 0 else {
                throw TransformSupport.invalid("resize to \(width)×\(height)")
            }
            // Ratios in Double: the products of untrusted sizes could overflow Int.
            let w = Double(sourceWidth), h = Double(sourceHeight)
            let tw = Double(width), th = Double(height)
            func side(_ value: Double, limit: Int) -> Int { min(limit, max(1, Int(value.rounded()))) }
            switch mode {
            case .exact:
                if allowUpscaling { return (nil, width, height) }
                return (nil, min(width, sourceWidth), min(height, sourceHeight))
            case .fit:
                // Only the limiting side decides about upscaling: the other one is rounded and may
                // land on the source's size even when shrinking (100×1 into 50×50 is 50×1).
                if tw * h <= th * w {
                    // Width-limited: the target is relatively narrower than the image.
                    if !allowUpscaling, width >= sourceWidth { return (nil, sourceWidth, sourceHeight) }
                    return (nil, width, side(h * tw / w, limit: height))
                }
                if !allowUpscaling, height >= sourceHeight { return (nil, sourceWidth, sourceHeight) }
                return (nil, side(w * th / h, limit: width), height)
            case .fill:
                // The largest region of the source with the target's aspect ratio, placed by gravity.
                let (cropWidth, cropHeight): (Int, Int)
                if tw * h >= th * w {
                    (cropWidth, cropHeight) = (sourceWidth, side(w * th / tw, limit: sourceHeight))
                } else {
                    (cropWidth, cropHeight) = (side(h * tw / th, limit: sourceWidth), sourceHeight)
                }
                let origin = gravity.origin(inner: (cropWidth, cropHeight), outer: (sourceWidth, sourceHeight))
                let crop = cropWidth == sourceWidth && cropHeight == sourceHeight ? nil
                    : (x: origin.x, y: origin.y, width: cropWidth, height: cropHeight)
                if !allowUpscaling, cropWidth < width || cropHeight < height {
                    return (crop, cropWidth, cropHeight)
                }
                return (crop, width, height)
            }
        }
    }
}

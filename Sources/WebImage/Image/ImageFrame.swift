/// One frame of a decoded image: its full-canvas pixels and how long it shows.
public struct ImageFrame: Sendable {
    /// The frame as it appears on screen (composited on the canvas, disposal applied).
    public var bitmap: Bitmap
    /// How long the frame shows, in seconds; 0 for a still image or a frame with no delay.
    public var duration: Double

    /// Creates a frame.
    public init(bitmap: Bitmap, duration: Double = 0) {
        self.bitmap = bitmap
        self.duration = duration
    }
}

extension ImageManagerConfiguration {
    /// The bounds a server puts on the manager's encode stage (``ImageManager/encodedImage(for:)``),
    /// so that a flood of distinct requests queues, holds and runs no more than it can afford.
    /// Each is off (`nil`) by default, as a library user loading thumbnails wants.
    public struct EncodeStageLimits: Sendable {
        /// The most encoded loads (and ``ImageManager/sourceImage(for:)`` reads) admitted at once:
        /// fetching, waiting for memory, queued or rendering. A load that would start past it fails
        /// at once with ``WebImageError/overloaded``; one that joins a render in progress takes no slot.
        public var maxAdmitted: Int?
        /// The bytes renders may hold together (``ImageManager/PreparedRender/bytes``): a render that does not fit
        /// in what is left waits, first come first served; one larger than all of it fails with
        /// ``WebImageError/tooLarge(_:)``.
        public var memoryBudget: Int?
        /// How long a render may run, from its start (the source's fetch included). Past it, its
        /// waiters get ``WebImageError/deadlineExceeded(_:)`` at once, the render is stopped at its
        /// next step, and its output, if it ends anyway, is not kept.
        public var deadline: Duration?
        /// Called once for each render past ``deadline``, before its waiters hear of it (a metric).
        public var onDeadline: (@Sendable () -> Void)?

        /// Limits; each left out is off.
        public init(maxAdmitted: Int? = nil, memoryBudget: Int? = nil, deadline: Duration? = nil,
                    onDeadline: (@Sendable () -> Void)? = nil) {
            self.maxAdmitted = maxAdmitted
            self.memoryBudget = memoryBudget
            self.deadline = deadline
            self.onDeadline = onDeadline
        }
    }
}

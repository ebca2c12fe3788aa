import Dispatch

/// Converts a decoder's rows to sRGB as they come out of it, so the conversion reads pixels
/// that are still in cache instead of a whole image from memory afterwards.
///
/// With a second core the rows are converted on another thread, a few rows behind the decoder,
/// so a full-size decode with a profile takes about as long as one without. The decoder writes
/// only rows at or past what it has published and the converter touches only rows before it, so
/// the two never share a byte. The decoding thread never waits for the converter: when the
/// converter falls more than ``lagBytes`` behind (its core is busy elsewhere, or it has not
/// started), the decoding thread converts the backlog itself before decoding on, while those
/// rows are still in its cache; when it is done it converts whatever is left, and waits only for
/// a batch already under way.
enum RowConversionPipeline {
    private struct State: Sendable {
        var published = 0, claimed = 0
        var finished = false, closed = false, converting = false
    }

    /// How far (in bytes of rows) the converter may fall behind the decoder before the decoding
    /// thread converts the backlog itself: about what a core's L2 cache keeps of the rows just
    /// decoded.
    static let lagBytes = 256 << 10

    /// Runs `decode`, which writes RGBA8 rows of `rowBytes` into `buffer` top to bottom and calls
    /// its argument with the number of complete rows after each batch, and converts those rows in
    /// place with `transform`. Rows after an error stay unconverted; the error is rethrown.
    /// - Parameter startConverter: starts the second thread's loop (tests hold it back).
    static func run(_ transform: ICCTransform, buffer: UnsafeMutableRawBufferPointer, rowBytes: Int, parallel: Bool,
                    startConverter: (@escaping @Sendable () -> Void) -> Void = { DispatchQueue.global().async(execute: $0) },
                    decode: (_ rowsDone: (Int) -> Void) throws -> Void) throws {
        guard let base = buffer.baseAddress, rowBytes > 0 else { return try decode { _ in } }
        let rowCount = buffer.count / rowBytes
        let address = UInt(bitPattern: base)
        @Sendable func convert(_ rows: Range<Int>) {
            guard !rows.isEmpty, let start = UnsafeMutableRawPointer(bitPattern: address + UInt(rows.lowerBound * rowBytes)) else { return }
            transform.run(start, start, pixelCount: rows.count * rowBytes / 4)
        }
        guard parallel, Bitmap.hasSecondCore else {
            var converted = 0
            try decode { done in
                let rows = min(done, rowCount)
                convert(converted..<max(converted, rows))
                converted = max(converted, rows)
            }
            return
        }
        let state = Locked(State())
        let wake = DispatchSemaphore(value: 0), idle = DispatchSemaphore(value: 0)
        /// The rows published and not yet taken (the converter's marked as under way); `nil`
        /// once closed, or when nothing is left and `finished`.
        @Sendable func claim(byConverter: Bool) -> Range<Int>? {
            state.withLock { s -> Range<Int>? in
                guard !s.closed, !(s.finished && s.claimed == s.published) else { return nil }
                let rows = s.claimed..<s.published
                s.claimed = s.published
                if byConverter { s.converting = !rows.isEmpty }
                return rows
            }
        }
        startConverter {
            while true {
                wake.wait()
                while let rows = claim(byConverter: true) {
                    if rows.isEmpty { break }
                    convert(rows)
                    if state.withLock({ s -> Bool in s.converting = false; return s.closed }) { idle.signal() }
                }
                if state.withLock({ $0.closed || ($0.finished && $0.claimed == $0.published) }) { return }
            }
        }
        var failure: (any Error)?
        do {
            let lagRows = max(1, lagBytes / rowBytes)
            try decode { done in
                // The backlog past the lag, taken from the converter while it is still in cache here.
                let backlog = state.withLock { s -> Range<Int>? in
                    s.published = max(s.published, min(done, rowCount))
                    guard s.published - s.claimed > lagRows else { return nil }
                    let rows = s.claimed..<s.published
                    s.claimed = s.published
                    return rows
                }
                if let backlog { convert(backlog) } else { wake.signal() }
            }
        } catch {
            failure = error
        }
        state.withLock { $0.finished = true }
        wake.signal()
        if failure == nil {
            // Whatever the converter has not taken yet is converted here, still in cache.
            while let rows = claim(byConverter: false), !rows.isEmpty {
                convert(rows)
            }
        }
        let busy = state.withLock { s -> Bool in s.closed = true; return s.converting }
        wake.signal()
        if busy { idle.wait() }
        if let failure { throw failure }
    }
}

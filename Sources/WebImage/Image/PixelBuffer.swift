#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory behind one bitmap: `count` bytes of straight-alpha RGBA8, owned by this object.
/// Decoders also keep their large write-once intermediates in one (a JPEG scan without its byte
/// stuffing, decoded MCU records), so that memory is pooled and reused the same way.
///
/// A `PixelBuffer` is written exactly once, by the closure handed to its initializer, before the
/// object exists for anyone else; afterwards it is read-only. That is why it can be `Sendable`
/// without a lock and can cross tasks without a copy.
public final class PixelBuffer: Sendable {
    // The address is kept as an integer: the bytes behind it are immutable once `init` returns
    // (see the type's documentation), so sharing the address across tasks is race-free.
    private let address: UInt
    private let capacity: Int
    /// The number of bytes of pixel data.
    public let count: Int

    /// Allocates `count` bytes and lets `initialize` fill them.
    ///
    /// Large buffers come from the library's pixel allocator: reused when a recently freed buffer fits, else
    /// fresh memory that the kernel may back with huge pages, so a 48 MB bitmap costs a handful of
    /// page faults instead of twelve thousand.
    /// - Throws: ``WebImageError/tooLarge(_:)`` when the memory cannot be had, or whatever
    ///   `initialize` throws (the memory is released then).
    public convenience init(count: Int, initializingWith initialize: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        try self.init(count: count, hugePages: true, initializingWith: initialize)
    }

    /// Write-once scratch memory for a decoder's large intermediates: pooled like pixels, but
    /// fresh memory is not advised as huge pages, because a decoder often touches only part of
    /// what it reserves and a thumbnail's peak memory counts every page it touches.
    convenience init(scratchCount count: Int, initializingWith initialize: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        try self.init(count: count, hugePages: false, initializingWith: initialize)
    }

    private init(count: Int, hugePages: Bool, initializingWith initialize: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        guard count >= 0 else { throw WebImageError.tooLarge("negative buffer size") }
        let block = try PixelAllocator.shared.allocate(byteCount: count, hugePages: hugePages)
        do {
            try initialize(UnsafeMutableRawBufferPointer(start: block.pointer, count: count))
        } catch {
            PixelAllocator.shared.release(block)
            throw error
        }
        self.address = UInt(bitPattern: block.pointer)
        self.capacity = block.capacity
        self.count = count
    }

    deinit {
        if let pointer = UnsafeMutableRawPointer(bitPattern: address) {
            PixelAllocator.shared.release(PixelAllocator.Block(pointer: pointer, capacity: capacity))
        }
    }

    /// Calls `body` with read-only access to the pixel bytes.
    @inlinable
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(unsafeBytes)
    }

    @usableFromInline
    var unsafeBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: count)
    }
}

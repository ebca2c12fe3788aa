#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hands out memory for bitmaps.
///
/// Small buffers come from `malloc`. Buffers of 1.75 MiB and more are mapped directly, rounded up
/// to whole 2 MiB pages (wasting at most an eighth) and advised as huge pages (Linux grants them on `madvise`), and up to
/// ``poolLimit`` bytes of freed large buffers are kept for reuse: decoding one large photo after
/// another then touches memory that is already faulted in, which is as expensive as the decode
/// itself when it is not.
package final class PixelAllocator: Sendable {
    /// The allocator every ``PixelBuffer`` uses.
    package static let shared = PixelAllocator()

    /// Buffers at least this large are mapped and pooled: 1.75 MiB, so an 800 × 600 photo
    /// (1.83 MiB of RGBA8) takes one huge page and one page fault instead of 469.
    package static let largeThreshold = 7 << 18
    private static let hugePage = 2 << 20

    struct Block {
        let pointer: UnsafeMutableRawPointer
        let capacity: Int
    }

    private struct Pool {
        // Freed large blocks, newest last. Addresses are stored as integers so the pool is Sendable;
        // the mutex below owns them.
        var free: [(address: UInt, capacity: Int)] = []
        var pooledBytes = 0
        var limit: Int
    }

    /// Guards the pool of freed large blocks.
    private let pool: Locked<Pool>

    /// Creates an allocator that keeps at most `poolLimit` bytes of freed large buffers.
    package init(poolLimit: Int = 192 << 20) {
        pool = Locked(Pool(limit: poolLimit))
    }

    /// The most bytes of freed buffers kept for reuse. Setting it lower frees the excess.
    package var poolLimit: Int {
        get { pool.withLock { $0.limit } }
        set {
            let excess = pool.withLock { pool -> [(address: UInt, capacity: Int)] in
                pool.limit = max(0, newValue)
                return Self.evict(&pool, keeping: pool.limit)
            }
            excess.forEach(Self.unmap)
        }
    }

    /// Bytes currently held in the reuse pool.
    package var pooledBytes: Int { pool.withLock { $0.pooledBytes } }

    /// Returns every pooled buffer to the system.
    package func purge() {
        pool.withLock { Self.evict(&$0, keeping: 0) }.forEach(Self.unmap)
    }

    /// - Parameter hugePages: whether freshly mapped memory is advised as huge pages (reused
    ///   blocks stay as they were).
    func allocate(byteCount: Int, hugePages: Bool = true) throws -> Block {
        if byteCount < Self.largeThreshold {
            guard let pointer = malloc(max(byteCount, 1)) else {
                throw WebImageError.tooLarge("cannot allocate \(byteCount) bytes")
            }
            return Block(pointer: pointer, capacity: 0)
        }
        let (rounded, overflow) = byteCount.addingReportingOverflow(Self.hugePage - 1)
        guard !overflow else { throw WebImageError.tooLarge("cannot allocate \(byteCount) bytes") }
        let capacity = rounded & ~(Self.hugePage - 1)
        let reused = pool.withLock { pool -> (address: UInt, capacity: Int)? in
            // Best fit: the smallest pooled block that holds the request without wasting half of it.
            var best: Int?
            for (index, block) in pool.free.enumerated()
            where block.capacity >= capacity && block.capacity <= capacity * 2 {
                if best == nil || block.capacity < pool.free[best!].capacity { best = index }
            }
            guard let index = best else { return nil }
            let block = pool.free.remove(at: index)
            pool.pooledBytes -= block.capacity
            return block
        }
        if let reused, let pointer = UnsafeMutableRawPointer(bitPattern: reused.address) {
            return Block(pointer: pointer, capacity: reused.capacity)
        }
        return try Self.map(capacity: capacity, hugePages: hugePages)
    }

    func release(_ block: Block) {
        guard block.capacity > 0 else {
            free(block.pointer)
            return
        }
        let excess = pool.withLock { pool -> [(address: UInt, capacity: Int)] in
            pool.free.append((UInt(bitPattern: block.pointer), block.capacity))
            pool.pooledBytes += block.capacity
            return Self.evict(&pool, keeping: pool.limit)
        }
        excess.forEach(Self.unmap)
    }

    private static func evict(_ pool: inout Pool, keeping limit: Int) -> [(address: UInt, capacity: Int)] {
        var evicted: [(address: UInt, capacity: Int)] = []
        while pool.pooledBytes > limit, !pool.free.isEmpty {
            let oldest = pool.free.removeFirst()
            pool.pooledBytes -= oldest.capacity
            evicted.append(oldest)
        }
        return evicted
    }

    private static func map(capacity: Int, hugePages: Bool) throws -> Block {
        #if os(Linux)
        // Over-map by one huge page so the block can start on a huge-page boundary.
        let mapped = capacity + hugePage
        let raw = mmap(nil, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let raw, raw != MAP_FAILED else {
            throw WebImageError.tooLarge("cannot map \(capacity) bytes")
        }
        let start = UInt(bitPattern: raw)
        let aligned = (start + UInt(hugePage) - 1) & ~UInt(hugePage - 1)
        let head = Int(aligned - start)
        if head > 0 { munmap(raw, head) }
        let tail = mapped - head - capacity
        if tail > 0 { munmap(UnsafeMutableRawPointer(bitPattern: aligned + UInt(capacity)), tail) }
        let pointer = UnsafeMutableRawPointer(bitPattern: aligned)!
        if hugePages { _ = madvise(pointer, capacity, 14 /* MADV_HUGEPAGE */) }
        return Block(pointer: pointer, capacity: capacity)
        #else
        // Elsewhere the system allocator already maps large blocks well; a capacity of 0 marks
        // the block as malloc'd, so it is freed rather than pooled.
        guard let pointer = malloc(capacity) else {
            throw WebImageError.tooLarge("cannot allocate \(capacity) bytes")
        }
        return Block(pointer: pointer, capacity: 0)
        #endif
    }

    private static func unmap(_ block: (address: UInt, capacity: Int)) {
        guard let pointer = UnsafeMutableRawPointer(bitPattern: block.address) else { return }
        munmap(pointer, block.capacity)
    }
}

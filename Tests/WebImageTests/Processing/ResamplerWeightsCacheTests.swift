import Testing
@testable import WebImage

/// The resampler's weights are made once per geometry, and what it keeps stays small whatever
/// geometries a client asks for.
@Suite struct ResamplerWeightsCacheTests {
    @Test func thumbnailGeometriesAreKeptLargeOnesAreNotAndTheTableIsBounded() throws {
        // A thumbnail's table is kept (another test clearing the table meanwhile is retried).
        #expect((0..<3).contains { _ in
            _ = Contributions.cached(source: 433, target: 300, filter: .lanczos3)
            return Contributions.isCached(source: 433, target: 300, filter: .lanczos3)
        })
        // 30,000 weights: made for the resize, not kept.
        let large = Contributions.cached(source: 4000, target: 3000, filter: .lanczos3)
        #expect(large.weights.count > 8_192)
        #expect(!Contributions.isCached(source: 4000, target: 3000, filter: .lanczos3))
        // Distinct small geometries never grow the table past 32.
        for target in 100..<140 {
            _ = Contributions.cached(source: 1000, target: target, filter: .triangle)
            #expect(Contributions.cachedCount <= 32)
        }
        // The kept table is the one a fresh computation gives.
        let fresh = Contributions(source: 433, target: 300, filter: .lanczos3)
        let cached = Contributions.cached(source: 433, target: 300, filter: .lanczos3)
        #expect(cached.weights == fresh.weights && cached.starts == fresh.starts && cached.counts == fresh.counts)
    }
}

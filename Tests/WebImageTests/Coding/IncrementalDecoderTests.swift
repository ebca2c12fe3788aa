import Foundation
import Testing
import WebImageTestSupport
@testable import WebImage

/// The incremental decoders, fed growing prefixes of real files: partial images with more detail
/// each time, the last one (and the final image) identical to the one-shot decode, typed errors
/// for truncated and hostile input, and a cancellation flag that stops them.
@Suite("Incremental decoders")
struct IncrementalDecoderTests {
    private func decoder(_ format: ImageFormat, _ options: DecodeOptions = DecodeOptions()) throws -> any CancellableIncrementalDecoder {
        let made = ImageCodersManager.shared.makeIncrementalDecoder(for: format, options: options)
        return try #require(made as? any CancellableIncrementalDecoder, "an incremental \(format) decoder")
    }

    // MARK: JPEG

    @Test func progressiveJPEGShowsEachScanRefinedUntilTheOneShotImage() throws {
        let jpeg = try ProgressiveSamples.progressiveJPEG(width: 480, height: 360)
        let oneShot = try JPEGCoder().decode(jpeg, options: DecodeOptions())
        let partials = try ProgressiveSamples.feed(try decoder(.jpeg), jpeg, step: 2_048)
        #expect(partials.count >= 5, "one partial image per scan of libjpeg's default script: \(partials.count)")
        var previous = Double.infinity
        for partial in partials {
            #expect(partial.image.width == 480 && partial.image.height == 360)
            #expect(!partial.image.hasAlpha, "a scan is shown whole")
            let difference = ProgressiveSamples.meanDifference(partial.image.bitmap, oneShot.bitmap)
            #expect(difference <= previous, "each scan is closer to the final image: \(difference) after \(previous)")
            previous = difference
        }
        let first = try #require(partials.first)
        #expect(first.bytes <= jpeg.count / 4, "the first scan shows early: \(first.bytes) of \(jpeg.count) bytes")
        #expect(ProgressiveSamples.identical(try #require(partials.last).image.bitmap, oneShot.bitmap))
        let final = try #require(try decoder(.jpeg).update(with: jpeg, isComplete: true))
        #expect(ProgressiveSamples.identical(final.bitmap, oneShot.bitmap))
    }

    @Test func baselineJPEGShowsItsRowsAsTheyArrive() throws {
        let jpeg = try ProgressiveSamples.baselineJPEG(width: 320, height: 240)
        let oneShot = try JPEGCoder().decode(jpeg, options: DecodeOptions())
        let partials = try ProgressiveSamples.feed(try decoder(.jpeg), jpeg, step: 4_096)
        #expect(partials.count >= 3)
        var previousRows = 0
        for partial in partials {
            let shown = ProgressiveSamples.shownRows(partial.image.bitmap, final: oneShot.bitmap)
            #expect(shown.restTransparent, "rows not yet decoded are transparent")
            #expect(shown.rows > previousRows, "every partial image shows more rows, each as the final image has it")
            previousRows = shown.rows
        }
        #expect(previousRows == 240)
        #expect(ProgressiveSamples.identical(try #require(partials.last).image.bitmap, oneShot.bitmap))
    }

    @Test func jpegPartialsAreThumbnailsWhenAsked() throws {
        let jpeg = try ProgressiveSamples.progressiveJPEG(width: 480, height: 360)
        let options = DecodeOptions(maxPixelSize: 100)
        let oneShot = try JPEGCoder().decode(jpeg, options: options)
        let partials = try ProgressiveSamples.feed(try decoder(.jpeg, options), jpeg, step: 4_096)
        #expect(!partials.isEmpty)
        for partial in partials { #expect((partial.image.width, partial.image.height) == (oneShot.width, oneShot.height)) }
        #expect(oneShot.width == 100)
    }

    @Test func jpegLimitsHoldBeforeDecoding() throws {
        let jpeg = try ProgressiveSamples.progressiveJPEG(width: 480, height: 360)
        // The header alone is refused when the declared size is over the limit.
        let header = jpeg.prefix(try #require(jpeg.withUnsafeBytes { JPEGDataPlausibility.firstScanOffset($0) }) + 20)
        #expect(throws: WebImageError.self) {
            try decoder(.jpeg, DecodeOptions(pixelLimit: 1_000)).update(with: header, isComplete: false)
        }
        do {
            _ = try decoder(.jpeg, DecodeOptions(pixelLimit: 1_000)).update(with: header, isComplete: false)
        } catch let error as WebImageError {
            guard case .tooLarge = error else { Issue.record("expected tooLarge, got \(error)"); return }
        }
        // Bytes that are no JPEG at all fail with a typed error, not a trap.
        var garbage = Data([0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x03])
        garbage.append(Data(repeating: 0x5A, count: 4_000))
        #expect(throws: WebImageError.self) { try decoder(.jpeg).update(with: garbage, isComplete: false) }
    }

    // MARK: PNG

    @Test func plainPNGShowsItsRowsAsTheyArrive() throws {
        let png = ProgressiveSamples.png(try ProgressiveSamples.photo(width: 200, height: 150), interlaced: false)
        let oneShot = try PNGCoder().decode(png, options: DecodeOptions())
        let partials = try ProgressiveSamples.feed(try decoder(.png), png, step: 10_000)
        #expect(partials.count >= 5)
        var previousRows = 0
        for partial in partials {
            let shown = ProgressiveSamples.shownRows(partial.image.bitmap, final: oneShot.bitmap)
            #expect(shown.restTransparent)
            #expect(shown.rows > previousRows)
            previousRows = shown.rows
        }
        #expect(ProgressiveSamples.identical(try #require(partials.last).image.bitmap, oneShot.bitmap))
        let final = try #require(try decoder(.png).update(with: png, isComplete: true))
        #expect(ProgressiveSamples.identical(final.bitmap, oneShot.bitmap))
    }

    @Test func adam7PNGShowsEachPassAsARefinedImage() throws {
        let bitmap = try ProgressiveSamples.photo(width: 203, height: 157)
        let png = ProgressiveSamples.png(bitmap, interlaced: true)
        let oneShot = try PNGCoder().decode(png, options: DecodeOptions())
        #expect(ProgressiveSamples.identical(oneShot.bitmap, bitmap))
        let partials = try ProgressiveSamples.feed(try decoder(.png), png, step: 4_096)
        #expect(partials.count >= 4, "one per pass completed: \(partials.count)")
        var previous = Double.infinity
        for partial in partials {
            #expect(partial.image.bitmap.pixel(x: 202, y: 156)?.a == 255, "a pass is shown over the whole image")
            let difference = ProgressiveSamples.meanDifference(partial.image.bitmap, oneShot.bitmap)
            #expect(difference < previous)
            previous = difference
        }
        #expect(ProgressiveSamples.identical(try #require(partials.last).image.bitmap, oneShot.bitmap))
    }

    // MARK: WebP

    @Test(arguments: [false, true])
    func webPShowsItsRowsAsTheyArrive(lossless: Bool) throws {
        let image = DecodedImage(bitmap: try ProgressiveSamples.photo(width: 240, height: 180), hasAlpha: false)
        let webp = try WebPCoder().encode(image, format: .webp, options: EncodeOptions(quality: 0.9, lossless: lossless))
        let oneShot = try WebPCoder().decode(webp, options: DecodeOptions())
        let partials = try ProgressiveSamples.feed(try decoder(.webp), webp, step: max(1_024, webp.count / 12))
        #expect(partials.count >= 2, "\(partials.count) partial images from \(webp.count) bytes")
        var previousRows = 0
        for partial in partials.dropLast() {
            let shown = ProgressiveSamples.shownRows(partial.image.bitmap, final: oneShot.bitmap)
            #expect(shown.restTransparent)
            #expect(shown.rows >= previousRows)
            previousRows = shown.rows
        }
        #expect(ProgressiveSamples.identical(try #require(partials.last).image.bitmap, oneShot.bitmap))
        let final = try #require(try decoder(.webp).update(with: webp, isComplete: true))
        #expect(ProgressiveSamples.identical(final.bitmap, oneShot.bitmap))
    }

    // MARK: GIF

    @Test func gifShowsFramesAsTheyComplete() throws {
        var gif = GIFBuilder(width: 64, height: 48)
        for frame in 0..<4 {
            gif.addFrame(width: 64, height: 48, pixels: (0..<(64 * 48)).map { UInt8(($0 / 64 + frame) % 4) }, delay: 10)
        }
        let data = gif.data
        let oneShot = try GIFCoder().decode(data, options: DecodeOptions())
        #expect(oneShot.frames.count == 4)
        let partials = try ProgressiveSamples.feed(try decoder(.gif), data, step: 16)
        #expect(partials.map(\.image.frames.count) == [1, 2, 3, 4], "one more frame each time one completes")
        for partial in partials {
            for (index, frame) in partial.image.frames.enumerated() {
                #expect(ProgressiveSamples.identical(frame.bitmap, oneShot.frames[index].bitmap))
            }
        }
        let firstOnly = try ProgressiveSamples.feed(try decoder(.gif, DecodeOptions(firstFrameOnly: true)), data, step: 16)
        #expect(firstOnly.map(\.image.frames.count) == [1])
    }

    // MARK: Every format

    /// Each format's file, cut inside its image data.
    private func truncatedFiles() throws -> [(ImageFormat, Data)] {
        let photo = try ProgressiveSamples.photo(width: 120, height: 90)
        var gif = GIFBuilder(width: 64, height: 48)
        gif.addFrame(width: 64, height: 48, pixels: [UInt8](repeating: 1, count: 64 * 48))
        let webp = try WebPCoder().encode(DecodedImage(bitmap: photo, hasAlpha: false), format: .webp, options: EncodeOptions())
        let jpeg = try ProgressiveSamples.progressiveJPEG(width: 120, height: 90)
        return [
            // A JPEG cut before its first scan (libjpeg fills a scan cut short with grey, as browsers do).
            (.jpeg, jpeg.prefix(try #require(jpeg.withUnsafeBytes { JPEGDataPlausibility.firstScanOffset($0) }))),
            (.png, ProgressiveSamples.png(photo, interlaced: false).prefix(20_000)),
            (.gif, gif.data.prefix(gif.data.count / 2)),
            (.webp, webp.prefix(webp.count / 2)),
        ]
    }

    @Test func truncatedInputIsATypedErrorWhenTheDataEnds() throws {
        for (format, data) in try truncatedFiles() {
            let decoder = try decoder(format)
            _ = try? decoder.update(with: data, isComplete: false)
            do {
                _ = try decoder.update(with: data, isComplete: true)
                Issue.record("\(format): a truncated file decoded")
            } catch let error as WebImageError {
                // libjpeg reads a JPEG cut before its first scan as one without a scan.
                if format == .jpeg, case .corruptData = error { continue }
                guard case .truncatedData = error else { Issue.record("\(format): expected truncatedData, got \(error)"); continue }
            }
        }
    }

    @Test func aJPEGCutInsideAScanEndsAsTheOneShotDecodeShowsIt() throws {
        // libjpeg, browsers and the one-shot decode show what arrived and grey for the rest.
        let jpeg = try ProgressiveSamples.progressiveJPEG(width: 160, height: 120)
        let cut = jpeg.prefix(jpeg.count * 2 / 3)
        let decoder = try decoder(.jpeg)
        _ = try ProgressiveSamples.feed(decoder, cut, step: 1_024)
        let final = try #require(try decoder.update(with: cut, isComplete: true))
        #expect(ProgressiveSamples.identical(final.bitmap, try JPEGCoder().decode(cut, options: DecodeOptions()).bitmap))
    }

    @Test func cancellingStopsTheDecoder() throws {
        let files: [(ImageFormat, Data)] = [
            (.jpeg, try ProgressiveSamples.progressiveJPEG(width: 320, height: 240)),
            (.png, ProgressiveSamples.png(try ProgressiveSamples.photo(width: 160, height: 120), interlaced: false)),
        ]
        for (format, data) in files {
            let decoder = try decoder(format)
            #expect(try decoder.update(with: data.prefix(data.count / 2), isComplete: false) != nil)
            decoder.cancellation.cancel()
            for complete in [false, true] {
                #expect(throws: WebImageError.cancelled, "\(format) stops once cancelled") {
                    try decoder.update(with: data, isComplete: complete)
                }
            }
        }
    }
}

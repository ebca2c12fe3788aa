/// The headers of a sequential Huffman JPEG up to its first scan: what the 1/8-scale decoder
/// needs, read the way libjpeg reads them.
///
/// Parsing returns `nil` for anything the 1/8-scale decoder leaves to libjpeg-turbo: progressive or
/// arithmetic coding, 12-bit samples, CMYK, a first scan that does not hold every component, a
/// missing table, or a malformed segment.
struct JPEGBaselineHeader {
    /// How the components' samples become RGB.
    enum ColorTransform { case gray, yCbCr, rgb }

    /// A component, in scan order.
    struct Component {
        /// Index in the frame header (0 is Y or R).
        var frameIndex: Int
        var horizontalSampling: Int
        var verticalSampling: Int
        /// Quantization table, natural (row-major) order.
        var quantization: [Int32]
        var dcTable: JPEGHuffmanTable
        var acTable: JPEGHuffmanTable
    }

    var width: Int
    var height: Int
    var components: [Component]
    var colorTransform: ColorTransform
    /// MCUs between restart markers, 0 for none.
    var restartInterval: Int
    /// Offset of the first entropy-coded byte of the first scan.
    var scanDataOffset: Int

    /// Zigzag position to natural (row-major) position within an 8×8 block, with 16 extra entries
    /// of 63 where a corrupt run overshoots, as libjpeg has.
    static let naturalOrder: [Int] = [
        0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
        12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
        35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
        58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
    ] + [Int](repeating: 63, count: 16)

    init?(_ bytes: UnsafeRawBufferPointer) {
        typealias Marker = JPEGMarkerWalker.Marker
        var quantTables = [[Int32]?](repeating: nil, count: 4)
        // DHT segments keep their bytes; only the tables the scan uses are built (as libjpeg builds
        // its derived tables at the scan): a file of thousands of DHT segments must not cost a
        // lookup-table build each.
        var dcTables = [(counts: [UInt8], symbols: [UInt8])?](repeating: nil, count: 4)
        var acTables = [(counts: [UInt8], symbols: [UInt8])?](repeating: nil, count: 4)
        var frame: [(id: UInt8, h: Int, v: Int, quant: Int)] = []
        var size = (width: 0, height: 0)
        var sawJFIF = false
        var adobeTransform: Int?
        var restartInterval = 0
        for walked in JPEGMarkerWalker(bytes) {
            let marker = walked.marker
            // RST and TEM before the first scan carry nothing: libjpeg skips them. A second SOI
            // or an EOI before any scan fails in libjpeg, and so here.
            if marker == Marker.tem || Marker.restarts.contains(marker) { continue }
            if marker == Marker.soi || marker == Marker.eoi { return nil }
            // A segment must lie inside the data; one with a length below 2 is malformed for the
            // segments read here (libjpeg fails on it) and skipped otherwise (as libjpeg skips it).
            guard !walked.isTruncated else { return nil }
            let readsPayload = [Marker.sof0, Marker.sof1, Marker.dht, Marker.dqt, Marker.dri, Marker.sos].contains(marker)
            guard walked.isComplete || !readsPayload else { return nil }
            let segment = UnsafeRawBufferPointer(rebasing: bytes[walked.payload])
            switch marker {
            case Marker.sof0, Marker.sof1:
                guard frame.isEmpty, segment.count >= 6, segment[0] == 8 else { return nil }
                guard let width = segment.bigEndianUInt16(at: 3), let height = segment.bigEndianUInt16(at: 1) else { return nil }
                size = (Int(width), Int(height))
                let count = Int(segment[5])
                guard count == 1 || count == 3, segment.count == 6 + 3 * count else { return nil }
                for index in 0..<count {
                    let base = 6 + 3 * index
                    let h = Int(segment[base + 1] >> 4), v = Int(segment[base + 1] & 15), quant = Int(segment[base + 2])
                    guard (1...4).contains(h), (1...4).contains(v), quant < 4 else { return nil }
                    frame.append((segment[base], h, v, quant))
                }
            case let other where Marker.isStartOfFrame(other):
                return nil // progressive, lossless, hierarchical or arithmetic coded
            case Marker.dht:
                var at = 0
                while at < segment.count {
                    guard at + 17 <= segment.count else { return nil }
                    let tableClass = segment[at] >> 4, id = Int(segment[at] & 15)
                    guard tableClass <= 1, id < 4 else { return nil }
                    let counts = UnsafeRawBufferPointer(rebasing: segment[(at + 1)..<(at + 17)])
                    let total = counts.reduce(0) { $0 + Int($1) }
                    guard total <= 256, at + 17 + total <= segment.count else { return nil }
                    let table = (counts: Array(counts), symbols: Array(segment[(at + 17)..<(at + 17 + total)]))
                    if tableClass == 0 { dcTables[id] = table } else { acTables[id] = table }
                    at += 17 + total
                }
            case Marker.dqt:
                var at = 0
                while at < segment.count {
                    let precision = Int(segment[at] >> 4), id = Int(segment[at] & 15)
                    let entry = precision == 0 ? 1 : 2
                    guard precision <= 1, id < 4, at + 1 + 64 * entry <= segment.count else { return nil }
                    var table = [Int32](repeating: 0, count: 64)
                    for zigzag in 0..<64 {
                        // In bounds: `at + 1 + 64 * entry <= segment.count` was checked above.
                        let value = entry == 1 ? Int(segment[at + 1 + zigzag])
                            : Int(segment.bigEndianUInt16(at: at + 1 + 2 * zigzag) ?? 0)
                        // libjpeg keeps the multiplier in a short: mirror its wrap for values over 32767.
                        table[Self.naturalOrder[zigzag]] = Int32(Int16(truncatingIfNeeded: value))
                    }
                    quantTables[id] = table
                    at += 1 + 64 * entry
                }
            case Marker.dri:
                guard let interval = segment.bigEndianUInt16(at: 0) else { return nil }
                restartInterval = Int(interval)
            case 0xE0:
                if segment.count >= 5, Array(segment[0..<5]) == Array("JFIF\0".utf8) { sawJFIF = true }
            case Marker.app14:
                if segment.count >= 12, Array(segment[0..<5]) == Array("Adobe".utf8) { adobeTransform = Int(segment[11]) }
            case Marker.sos:
                guard !frame.isEmpty, size.width > 0, size.height > 0, segment.count >= 1 else { return nil }
                let count = Int(segment[0])
                // One scan holding every component; Ss, Se, Ah/Al must be 0, 63, 0 for sequential JPEG.
                guard count == frame.count, segment.count == 4 + 2 * count else { return nil }
                var components: [Component] = []
                var built: [Int: JPEGHuffmanTable] = [:]
                func table(_ id: Int, isDC: Bool) -> JPEGHuffmanTable? {
                    let key = isDC ? id : id + 4
                    if let table = built[key] { return table }
                    guard let raw = isDC ? dcTables[id] : acTables[id],
                          let table = JPEGHuffmanTable(counts: raw.counts, symbols: raw.symbols, isDC: isDC) else { return nil }
                    built[key] = table
                    return table
                }
                for index in 0..<count {
                    let id = segment[1 + 2 * index], tables = segment[2 + 2 * index]
                    guard let frameIndex = frame.firstIndex(where: { $0.id == id }),
                          !components.contains(where: { $0.frameIndex == frameIndex }),
                          let quantization = quantTables[frame[frameIndex].quant],
                          tables >> 4 < 4, tables & 15 < 4,
                          let dc = table(Int(tables >> 4), isDC: true), let ac = table(Int(tables & 15), isDC: false)
                    else { return nil }
                    components.append(Component(frameIndex: frameIndex, horizontalSampling: frame[frameIndex].h,
                                                verticalSampling: frame[frameIndex].v, quantization: quantization,
                                                dcTable: dc, acTable: ac))
                }
                let ids = frame.map(\.id)
                if frame.count == 1 {
                    colorTransform = .gray
                } else if sawJFIF {
                    colorTransform = .yCbCr
                } else if let adobeTransform {
                    colorTransform = adobeTransform == 0 ? .rgb : .yCbCr
                } else {
                    colorTransform = ids == [82, 71, 66] ? .rgb : .yCbCr
                }
                self.width = size.width
                self.height = size.height
                self.components = components
                self.restartInterval = restartInterval
                self.scanDataOffset = walked.payload.upperBound
                return
            default:
                break
            }
        }
        return nil
    }
}

import Foundation
import FuzzSupport
@testable import WebImage

// libFuzzer calls this with each input: the bytes of a disk-cache file, which anyone who can
// write to the cache directory controls. The entry reader must return an entry or nil: a crash,
// an ASan report, a hang or a leak is a finding.
//
// Each input is read three ways: as a whole entry file (trailer, lengths, checksum, metadata); as
// a metadata block alone (the checksum makes it rare for a mutated whole file to reach the
// metadata parser); and as the image bytes and metadata strings of a new entry, which must read
// back exactly as written.
runFuzzer { data in
    let count = data.count
    _ = DiskCacheEntryFormat.decode(data)
    // A slice, as the reader sees a file's bytes at a nonzero start index.
    _ = DiskCacheEntryFormat.decode(data.dropFirst(min(3, data.count)))
    _ = DiskCacheEntryFormat.decodeMetadata(data)

    // Round trip: the input split into image bytes and four strings (the first byte says where).
    let split = Int(data[data.startIndex]) % data.count
    let image = data.prefix(split)
    let fields = String(decoding: data.dropFirst(split), as: UTF8.self).split(separator: "\u{0}", omittingEmptySubsequences: false)
    func field(_ index: Int) -> String? { index < fields.count ? String(fields[index]) : nil }
    let metadata = ImageCacheMetadata(originalURL: field(0), contentType: field(1), etag: field(2), lastModified: field(3),
                                      storedDate: Date(timeIntervalSince1970: Double(count)))
    guard let file = try? DiskCacheEntryFormat.encode(image, metadata: metadata),
          let entry = DiskCacheEntryFormat.decode(file) else {
        fatalError("an encoded entry does not decode")
    }
    if entry.data != image || entry.metadata != metadata { fatalError("an entry reads back differently") }
}

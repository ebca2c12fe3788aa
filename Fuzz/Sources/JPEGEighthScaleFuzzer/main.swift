import FuzzSupport

// The 1/8-scale JPEG DC decoder alone, on one thread and with its two-thread scan split forced
// on, and, for every file it decodes, checked against libjpeg-turbo's own 1/8 decode (the same
// pixels, or a trap). JPEGFuzzer runs a full and a thumbnail libjpeg-turbo decode of every input
// beside it; this target spends its time on the project's own Huffman decoding, so that path gets
// the executions CONTRIBUTING.md asks for.
runFuzzer { data in
    fuzzJPEGEighthScale(data, checkingAgainstLibjpeg: true)
}

import FuzzSupport
import HTTPFuzzSupport

// The HTTP/2 client against a hostile server: the client's own HTTP/2 connection (NIOHTTP2 with
// the client's settings and limits, its connection watcher, a stream carrying one GET through
// the same response handler and exchange as HTTP/1.1) on an in-memory channel, as after ALPN
// picked h2. Each input is the server's bytes after the client's preface (its first byte cuts
// them into two reads; unless it says otherwise a valid empty SETTINGS frame goes first, so
// mutations reach the frames after it), then the server closes. The exchange must end exactly
// once, with a body within maxBodySize or a typed error: never a crash, a hang or growth without bound.
runFuzzer { data in HostileServer.answerHTTP2(with: data) }

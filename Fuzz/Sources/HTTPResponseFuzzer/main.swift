import FuzzSupport
import HTTPFuzzSupport

// The HTTP/1.1 client against a hostile server: each input is the byte stream the server answers
// one GET with (status line, headers, body, anything, cut into two reads where its first byte
// says), then it closes. The client's own connection pipeline reads it in memory (HostileServer);
// the exchange must end exactly once, with a body within maxBodySize or a typed error: never a
// crash, a hang (no completion) or growth without bound. When the connection was kept alive, a
// second request goes on it and reads whatever the input had after the first response.
// Redirects are outcomes here, never followed.
runFuzzer { data in HostileServer.answerHTTP1(with: data) }

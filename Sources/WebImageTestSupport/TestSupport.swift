import WebImage
// The drawn images live with the demo (the shipped CLI links that module, never this one); the
// tests reach them through here, so there is one implementation of the drawing code.
@_exported import WebImageDemo

/// Shared helpers for swift-webimage's tests: the loopback fault server (``LoopbackServer``) and,
/// re-exported from `WebImageDemo`, the drawn sample images (``SampleImages``).
public enum TestSupport {}

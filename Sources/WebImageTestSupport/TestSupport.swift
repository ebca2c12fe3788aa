import WebImage

/// Shared helpers for swift-webimage's tests: the loopback fault server and image generators.
public enum TestSupport {}

import WebImage

/// Shared helpers for swift-webimage's tests: the loopback fault server (``LoopbackServer``).
public enum TestSupport {}

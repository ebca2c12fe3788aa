/// Names a part (a loader, a cache) in the key of shared work: a class instance is itself; a
/// value is known by its type, and shares by it.
///
/// The work keeps the part alive while its key is in a pool, so an instance's identity cannot
/// be reused by another while the key is there.
struct InstanceIdentity: Hashable, Sendable {
    private let id: ObjectIdentifier

    init(of part: Any) {
        id = type(of: part) is AnyObject.Type ? ObjectIdentifier(part as AnyObject) : ObjectIdentifier(type(of: part))
    }
}
